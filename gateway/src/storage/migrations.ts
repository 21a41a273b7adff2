import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';

/** The one migration set, written in Kysely's portable builder so SQLite and PostgreSQL share it. */
export function buildMigrations(kind: StorageKind): Record<string, Migration> {
  const isPg = kind === 'postgres';
  return {
  '0001_initial': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tenants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('labels', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('policies')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.references('tenants.id'))
        .addColumn('monthly_budget', 'double precision')
        .addColumn('daily_budget', 'double precision')
        .addColumn('allowed_models', 'text')
        .addColumn('rules', 'text', (c) => c.notNull())
        .addColumn('labels', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('agents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('policy_id', 'text', (c) => c.references('policies.id'))
        .addColumn('labels', 'text', (c) => c.notNull())
        .addColumn('key_prefix', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('agents_tenant_name', ['tenant_id', 'name'])
        .execute();
      await db.schema
        .createTable('admin_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('tenant_id', 'text')
        .addColumn('key_prefix', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('idempotency')
        .addColumn('key_hash', 'text', (c) => c.primaryKey())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('response', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0002_usage_records': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('usage_records')
        .addColumn('seq', isPg ? 'bigserial' : 'integer', (c) => (isPg ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('request_id', 'text', (c) => c.notNull().unique())
        .addColumn('trace_id', 'text', (c) => c.notNull())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text')
        .addColumn('provider', 'text')
        .addColumn('stream', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('http_status', 'integer', (c) => c.notNull())
        .addColumn('error_code', 'text')
        .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
        .addColumn('completion_tokens', 'integer', (c) => c.notNull())
        .addColumn('cost', 'double precision', (c) => c.notNull())
        .addColumn('estimated', 'integer', (c) => c.notNull())
        .addColumn('latency_ms', 'double precision', (c) => c.notNull())
        .addColumn('ttft_ms', 'double precision')
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('pii_types', 'text', (c) => c.notNull())
        .addColumn('body', 'text')
        .execute();
      await db.schema.createIndex('usage_trace').on('usage_records').columns(['trace_id', 'started_at']).execute();
      await db.schema.createIndex('usage_agent_time').on('usage_records').columns(['agent_id', 'started_at']).execute();
      await db.schema.createIndex('usage_time').on('usage_records').columns(['started_at']).execute();
    },
  },
  '0003_usage_tenant_time': {
    // Trace listings and usage reports scoped to one tenant read its rows newest first, not the whole table's.
    async up(db: Kysely<any>) {
      await db.schema.createIndex('usage_tenant_time').on('usage_records').columns(['tenant_id', 'started_at']).execute();
    },
  },
  '0004_usage_endpoint_tokens': {
    // Trace steps name the API the client spoke; rows written before read as chat completions, the only chat dialect then.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('usage_records').addColumn('endpoint', 'text', (c) => c.notNull().defaultTo('chat.completions')).execute();
      await db.schema.alterTable('usage_records').addColumn('cached_tokens', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('usage_records').addColumn('reasoning_tokens', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  },
  '0005_responses': {
    // Stored Responses API turns: agentgw keeps them itself, so a conversation continues whichever provider answers next.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('responses')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('trace_id', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('provider_type', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('input', 'text', (c) => c.notNull())
        .addColumn('response', 'text', (c) => c.notNull())
        .execute();
      // The retention sweep deletes the oldest rows first.
      await db.schema.createIndex('responses_created').on('responses').columns(['created_at']).execute();
      // Rows written before read as steps without a stored response.
      await db.schema.alterTable('usage_records').addColumn('response_id', 'text').execute();
    },
  },
  '0006_trace_stops_agent_suspension': {
    // Stopped traces and suspended agents live in the database, so a Redis restart forgets neither.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('trace_stops')
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('trace_id', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('stopped_at', 'text', (c) => c.notNull())
        .addColumn('stopped_by', 'text', (c) => c.notNull())
        // Trace id first: trace listings look stops up by trace id, across tenants for an unscoped admin.
        .addPrimaryKeyConstraint('trace_stops_pk', ['trace_id', 'tenant_id'])
        .execute();
      // Snapshots load the newest stops first.
      await db.schema.createIndex('trace_stops_time').on('trace_stops').columns(['stopped_at']).execute();
      // Agents written before are not suspended.
      await db.schema.alterTable('agents').addColumn('suspended', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  },
  '0007_tenant_budgets': {
    // One budget pool per tenant, shared by its agents; tenants written before have none (null = unlimited).
    async up(db: Kysely<any>) {
      await db.schema.alterTable('tenants').addColumn('monthly_budget', 'double precision').execute();
      await db.schema.alterTable('tenants').addColumn('daily_budget', 'double precision').execute();
    },
  },
  '0008_usage_tool': {
    // MCP: a tool-call step names its tool (`server/tool`); model steps have none. Policies gain their allow-list of
    // tools: those written before allow every tool (null), as they allowed every tool call before MCP came.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('usage_records').addColumn('tool', 'text').execute();
      await db.schema.alterTable('policies').addColumn('allowed_tools', 'text').execute();
    },
  },
  '0009_responses_not_stored': {
    // A response answered while the database was down is marked once it is back, so every node can say why its id
    // reads as 404; rows written before are stored responses (null).
    async up(db: Kysely<any>) {
      await db.schema.alterTable('responses').addColumn('not_stored', 'text').execute();
    },
  },
  '0010_audit_log': {
    // Every admin write appends an entry in its own transaction. Listings read newest first, overall or of one tenant.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('actor_kind', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text', (c) => c.notNull())
        .addColumn('actor_name', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('object_kind', 'text', (c) => c.notNull())
        .addColumn('object_id', 'text', (c) => c.notNull())
        .addColumn('tenant_id', 'text')
        .addColumn('before', 'text')
        .addColumn('after', 'text')
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('change_id', 'text')
        .execute();
      await db.schema.createIndex('audit_time').on('audit_log').columns(['at', 'id']).execute();
      await db.schema.createIndex('audit_tenant_time').on('audit_log').columns(['tenant_id', 'at']).execute();
      await db.schema.createIndex('audit_object').on('audit_log').columns(['object_id', 'at']).execute();
    },
  },
  '0011_usage_tool_calls': {
    // Tool rules: a model step lists the calls its answer proposed and how each was decided (JSON); earlier steps have none.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('usage_records').addColumn('tool_calls', 'text').execute();
    },
  },
  '0012_usage_cleaned': {
    // Fallback across families: what a step's request lost for the target that served it (JSON list); earlier steps have none.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('usage_records').addColumn('cleaned', 'text').execute();
    },
  },
  '0014_mcp_tool_pins': {
    // MCP tool pinning: the accepted definition of each upstream tool (the first seen, or one an admin accepted), so
    // every node withholds the same changed tools.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('mcp_tool_pins')
        .addColumn('server', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull())
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('pinned_at', 'text', (c) => c.notNull())
        .addColumn('pinned_by', 'text')
        .addPrimaryKeyConstraint('mcp_tool_pins_pk', ['server', 'tool'])
        .execute();
    },
  },
  '0015_routes': {
    // Routes (model aliases) written through the admin interface, by alias; those of agentgw.yaml stay in the file.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('routes')
        .addColumn('alias', 'text', (c) => c.primaryKey())
        .addColumn('strategy', 'text', (c) => c.notNull())
        .addColumn('targets', 'text', (c) => c.notNull())
        .addColumn('labels', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0016_mcp_credentials': {
    // Per-agent credentials for an upstream MCP server: the headers sealed with the deployment's secret (AES-256-GCM,
    // bound to the agent and the server), never in plaintext; the header names alone are readable.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('mcp_credentials')
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('server', 'text', (c) => c.notNull())
        .addColumn('sealed', 'text', (c) => c.notNull())
        .addColumn('header_names', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('mcp_credentials_pk', ['agent_id', 'server'])
        .execute();
    },
  },
  '0013_approvals': {
    // Tool calls held for a person. The holding node polls the rows it holds; listings read newest first, overall or
    // of one tenant; an approval given after its timeout lets the same call (call_hash) pass once in its trace.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('approvals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('trace_id', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('arguments', 'text', (c) => c.notNull())
        .addColumn('call_hash', 'text', (c) => c.notNull())
        .addColumn('rule', 'text')
        .addColumn('reason', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('decided_by', 'text')
        .addColumn('comment', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('decided_at', 'text')
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('approved_late', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('grant_used_at', 'text')
        .execute();
      await db.schema.createIndex('approvals_time').on('approvals').columns(['created_at', 'id']).execute();
      await db.schema.createIndex('approvals_tenant_time').on('approvals').columns(['tenant_id', 'created_at']).execute();
      await db.schema.createIndex('approvals_trace_call').on('approvals').columns(['trace_id', 'call_hash']).execute();
    },
  },
  '0017_usage_requested_model': {
    // The model the client named (an alias included), beside the target that answered (`model`).
    async up(db: Kysely<any>) {
      await db.schema.alterTable('usage_records').addColumn('requested_model', 'text').execute();
    },
  },
  };
}

export type StorageKind = 'sqlite' | 'postgres';

export async function migrate(db: Kysely<any>, kind: StorageKind): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => buildMigrations(kind) };
  // Without a schema, Kysely takes migration tables of any schema in the database for its own (and then skips creating them).
  const migrationTableSchema =
    kind === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  const { error, results } = await new Migrator({ db, provider, migrationTableSchema }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? String(error)}`);
  }
}
