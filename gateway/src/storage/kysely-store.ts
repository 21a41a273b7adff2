import { type CompiledQuery, type Kysely, sql } from 'kysely';
import { type AdminKey, type Agent, AgentgwError, DEFAULT_RULES, type Policy, type Role, type Tenant, type TraceRequest, type TraceStopped, type TraceSummary, type UsageRow } from '../contract/index.js';
import type { StorageKind } from './migrations.js';
import type { Database } from './schema.js';
import { isForeignKeyViolation, isUniqueViolation } from './store-errors.js';
import type {
  Page,
  PageQuery,
  PolicyFields,
  Store,
  StoredAdminKey,
  StoredAgent,
  StoredResponse,
  TraceFilter,
  TraceStopRecord,
  UsageFilter,
  UsageRecord,
} from './store.js';

const now = () => new Date().toISOString();

/** Cursor = the sort key of the last row ((created_at, id) for resources), opaque to clients. */
export function encodeCursor(parts: string[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}
export function decodeCursor(cursor: string, parts = 2): string[] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === parts && v.every((x) => typeof x === 'string')) return v;
  } catch {
    // fall through
  }
  throw new InvalidCursorError();
}
/** A cursor the client made up or mangled: bad input (400), not a server fault. */
export class InvalidCursorError extends AgentgwError {
  constructor() {
    super('validation_failed', 'The cursor is not valid: pass the next_cursor of the previous page unchanged, or leave cursor out to start at the first page.', {
      param: 'cursor',
    });
  }
}

/** A row names another that does not exist, or a row that others name was to be deleted (a concurrent admin write). */
/** A usage record as its table row. */
export type UsageRecordRow = Omit<Database['usage_records'], 'seq'>;

function toTenant(r: Database['tenants']): Tenant {
  return {
    id: r.id,
    name: r.name,
    labels: JSON.parse(r.labels),
    monthly_budget: usdOrNull(r.monthly_budget),
    daily_budget: usdOrNull(r.daily_budget),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
/** A budget column (PostgreSQL may answer a numeric as text). */
const usdOrNull = (v: number | string | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));
function toAgent(r: Database['agents']): Agent {
  return {
    id: r.id,
    name: r.name,
    tenant_id: r.tenant_id,
    policy_id: r.policy_id,
    labels: JSON.parse(r.labels),
    suspended: Number(r.suspended) === 1,
    key_prefix: r.key_prefix,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
function toPolicy(r: Database['policies']): Policy {
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    monthly_budget: r.monthly_budget === null ? null : Number(r.monthly_budget),
    daily_budget: r.daily_budget === null ? null : Number(r.daily_budget),
    allowed_models: r.allowed_models === null ? null : JSON.parse(r.allowed_models),
    allowed_tools: r.allowed_tools == null ? null : JSON.parse(r.allowed_tools),
    // Rules added by a later release read as their defaults in policies stored before it.
    rules: { ...DEFAULT_RULES, ...JSON.parse(r.rules) },
    labels: JSON.parse(r.labels),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
function toAdminKey(r: Database['admin_keys']): StoredAdminKey {
  return {
    id: r.id,
    name: r.name,
    role: r.role as Role,
    tenant_id: r.tenant_id,
    key_prefix: r.key_prefix,
    key_hash: r.key_hash,
    created_at: r.created_at,
  };
}

export class KyselyStore implements Store {
  /** Usage rows read per step of a trace listing's newest-first scan. */
  traceScanChunk = 500;
  /** Stored responses deleted per statement of a retention sweep (each holds a conversation's input: rows of up to megabytes). */
  responseSweepBatch = 200;

  constructor(
    private readonly db: Kysely<Database>,
    readonly kind: StorageKind,
    /** A faster batch insert for usage records, where the driver offers one (SQLite: one prepared statement). */
    private readonly usageInserter?: (rows: UsageRecord[]) => void | Promise<void>,
    /** Runs before the connection closes (SQLite: ends the usage writer thread). */
    private readonly beforeClose?: () => Promise<void>,
    /** Runs the reports over usage rows elsewhere than on this connection (SQLite: on the usage thread's own). */
    private readonly reportReader?: <R>(q: CompiledQuery<R>) => Promise<R[]>,
    /** Rows per usage insert this store writes best, asked at each insert (SQLite: larger batches while its thread lives). */
    private readonly preferredBatchRows?: () => number | undefined,
  ) {}

  get usageBatchRows(): number | undefined {
    return this.preferredBatchRows?.();
  }

  /** A report's rows: read by reportReader when there is one. */
  private report<R>(q: { compile(): CompiledQuery<R>; execute(): Promise<R[]> }): Promise<R[]> {
    return this.reportReader ? this.reportReader(q.compile()) : q.execute();
  }

  /** Keyset pagination over (created_at, id) for the simple resource tables. */
  private async pageOf<T extends 'tenants' | 'agents' | 'policies' | 'admin_keys', R>(
    table: T,
    q: PageQuery & { tenant_id?: string },
    map: (row: any) => R,
    tenantColumn: boolean,
  ): Promise<Page<R>> {
    let query = this.db.selectFrom(table as 'tenants').selectAll();
    if (q.tenant_id !== undefined && tenantColumn) query = query.where('tenant_id' as 'id', '=', q.tenant_id);
    if (q.tenant_id !== undefined && !tenantColumn) query = query.where('id', '=', q.tenant_id);
    if (q.cursor) {
      const [created, id] = decodeCursor(q.cursor);
      query = query.where((eb) => eb.or([eb('created_at', '>', created), eb.and([eb('created_at', '=', created), eb('id', '>', id)])]));
    }
    const rows = await query.orderBy('created_at').orderBy('id').limit(q.limit + 1).execute();
    const more = rows.length > q.limit;
    const data = rows.slice(0, q.limit);
    const last = data[data.length - 1];
    return { data: data.map(map), next_cursor: more && last ? encodeCursor([last.created_at, last.id]) : null };
  }

  async createTenant(t: Pick<Tenant, 'id' | 'name' | 'labels'> & Partial<Pick<Tenant, 'monthly_budget' | 'daily_budget'>>): Promise<Tenant> {
    const ts = now();
    const budgets = { monthly_budget: t.monthly_budget ?? null, daily_budget: t.daily_budget ?? null };
    const row = { id: t.id, name: t.name, labels: JSON.stringify(t.labels), ...budgets, created_at: ts, updated_at: ts };
    await this.db.insertInto('tenants').values(row).execute();
    return toTenant(row);
  }
  async getTenant(id: string) {
    const r = await this.db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toTenant(r);
  }
  listTenants(q: PageQuery & { tenant_id?: string }) {
    return this.pageOf('tenants', q, toTenant, false);
  }
  async updateTenant(id: string, patch: { name?: string; labels?: Tenant['labels']; monthly_budget?: number | null; daily_budget?: number | null }) {
    const set: Partial<Database['tenants']> = { updated_at: now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.labels !== undefined) set.labels = JSON.stringify(patch.labels);
    if (patch.monthly_budget !== undefined) set.monthly_budget = patch.monthly_budget;
    if (patch.daily_budget !== undefined) set.daily_budget = patch.daily_budget;
    await this.db.updateTable('tenants').set(set).where('id', '=', id).execute();
    return this.getTenant(id);
  }
  async deleteTenant(id: string): Promise<'deleted' | 'missing' | 'not_empty'> {
    // An agent or policy created for it between the check and the delete (another node, PostgreSQL) still holds it.
    return this.deleteChecked(() => this.db.transaction().execute(async (tx) => {
      const t = await tx.selectFrom('tenants').select('id').where('id', '=', id).executeTakeFirst();
      if (!t) return 'missing';
      const a = await tx.selectFrom('agents').select('id').where('tenant_id', '=', id).limit(1).executeTakeFirst();
      const p = await tx.selectFrom('policies').select('id').where('tenant_id', '=', id).limit(1).executeTakeFirst();
      if (a || p) return 'not_empty';
      await tx.deleteFrom('admin_keys').where('tenant_id', '=', id).execute();
      await tx.deleteFrom('tenants').where('id', '=', id).execute();
      return 'deleted' as const;
    }), 'not_empty');
  }

  /** A delete that a concurrent insert naming the row beat: answered as `inUse`, as the check would have. */
  private async deleteChecked<R extends string, U extends string>(run: () => Promise<R>, inUse: U): Promise<R | U> {
    try {
      return await run();
    } catch (e) {
      if (isForeignKeyViolation(e)) return inUse;
      throw e;
    }
  }

  async createAgent(a: Omit<StoredAgent, 'created_at' | 'updated_at' | 'suspended'> & { suspended?: boolean }): Promise<Agent> {
    const ts = now();
    const { suspended, ...fields } = a;
    const row = { ...fields, labels: JSON.stringify(a.labels), suspended: suspended ? 1 : 0, created_at: ts, updated_at: ts };
    await this.db.insertInto('agents').values(row).execute();
    return toAgent(row);
  }
  async getAgent(id: string) {
    const r = await this.db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toAgent(r);
  }
  listAgents(q: PageQuery & { tenant_id?: string }) {
    return this.pageOf('agents', q, toAgent, true);
  }
  async updateAgent(id: string, patch: { name?: string; policy_id?: string | null; labels?: Agent['labels']; suspended?: boolean }) {
    const set: Partial<Database['agents']> = { updated_at: now() };
    if (patch.suspended !== undefined) set.suspended = patch.suspended ? 1 : 0;
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.policy_id !== undefined) set.policy_id = patch.policy_id;
    if (patch.labels !== undefined) set.labels = JSON.stringify(patch.labels);
    await this.db.updateTable('agents').set(set).where('id', '=', id).execute();
    return this.getAgent(id);
  }
  async setAgentKey(id: string, key_hash: string, key_prefix: string) {
    const r = await this.db.updateTable('agents').set({ key_hash, key_prefix, updated_at: now() }).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
  async deleteAgent(id: string) {
    const r = await this.db.deleteFrom('agents').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
  async allAgents(): Promise<StoredAgent[]> {
    // With its tenant's budgets: the snapshot then holds them, so a change applies to the next request on every node.
    const rows = await this.db
      .selectFrom('agents')
      .leftJoin('tenants', 'tenants.id', 'agents.tenant_id')
      .selectAll('agents')
      .select(['tenants.monthly_budget as tenant_monthly_budget', 'tenants.daily_budget as tenant_daily_budget'])
      .execute();
    return rows.map(({ tenant_monthly_budget, tenant_daily_budget, ...r }) => ({
      ...toAgent(r),
      key_hash: r.key_hash,
      tenant_budget: { monthly_budget: usdOrNull(tenant_monthly_budget), daily_budget: usdOrNull(tenant_daily_budget) },
    }));
  }

  async getPolicy(id: string) {
    const r = await this.db.selectFrom('policies').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toPolicy(r);
  }
  async putPolicy(id: string, f: PolicyFields): Promise<{ policy: Policy; created: boolean }> {
    const ts = now();
    const cols = {
      tenant_id: f.tenant_id,
      monthly_budget: f.monthly_budget,
      daily_budget: f.daily_budget,
      allowed_models: f.allowed_models === null ? null : JSON.stringify(f.allowed_models),
      allowed_tools: f.allowed_tools == null ? null : JSON.stringify(f.allowed_tools),
      rules: JSON.stringify(f.rules),
      labels: JSON.stringify(f.labels),
      updated_at: ts,
    };
    const updated = await this.db.updateTable('policies').set(cols).where('id', '=', id).executeTakeFirst();
    if (Number(updated.numUpdatedRows) > 0) return { policy: (await this.getPolicy(id))!, created: false };
    try {
      await this.db.insertInto('policies').values({ id, ...cols, created_at: ts }).execute();
      return { policy: (await this.getPolicy(id))!, created: true };
    } catch (e) {
      // A concurrent PUT created it first: PUT is idempotent, so update instead.
      if (!isUniqueViolation(e)) throw e;
      await this.db.updateTable('policies').set(cols).where('id', '=', id).execute();
      return { policy: (await this.getPolicy(id))!, created: false };
    }
  }
  listPolicies(q: PageQuery & { tenant_id?: string }) {
    return this.pageOf('policies', q, toPolicy, true);
  }
  async deletePolicy(id: string): Promise<'deleted' | 'missing' | 'in_use'> {
    return this.deleteChecked(() => this.db.transaction().execute(async (tx) => {
      const p = await tx.selectFrom('policies').select('id').where('id', '=', id).executeTakeFirst();
      if (!p) return 'missing';
      const a = await tx.selectFrom('agents').select('id').where('policy_id', '=', id).limit(1).executeTakeFirst();
      if (a) return 'in_use';
      await tx.deleteFrom('policies').where('id', '=', id).execute();
      return 'deleted' as const;
    }), 'in_use');
  }
  async allPolicies() {
    return (await this.db.selectFrom('policies').selectAll().execute()).map(toPolicy);
  }

  async createAdminKey(k: StoredAdminKey): Promise<AdminKey> {
    await this.db.insertInto('admin_keys').values(k).execute();
    const { key_hash: _omit, ...pub } = k;
    return pub;
  }
  async upsertRootKey(key_hash: string, key_prefix: string) {
    const updated = await this.db.updateTable('admin_keys').set({ key_hash, key_prefix }).where('id', '=', 'root').executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      await this.db
        .insertInto('admin_keys')
        .values({ id: 'root', name: 'root', role: 'admin', tenant_id: null, key_prefix, key_hash, created_at: now() })
        .execute();
    }
  }
  async findAdminKeyByHash(hash: string) {
    const r = await this.db.selectFrom('admin_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
    return r && toAdminKey(r);
  }
  listAdminKeys(q: PageQuery & { tenant_id?: string }) {
    return this.pageOf('admin_keys', q, (r) => {
      const { key_hash: _omit, ...pub } = toAdminKey(r);
      return pub;
    }, true);
  }
  async deleteAdminKey(id: string) {
    const r = await this.db.deleteFrom('admin_keys').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
  async hasAdminKeyWithRole(role: Role) {
    return !!(await this.db.selectFrom('admin_keys').select('id').where('role', '=', role).limit(1).executeTakeFirst());
  }

  async getIdempotent(key_hash: string, notBefore: string) {
    return this.db
      .selectFrom('idempotency')
      .select(['scope', 'request_hash', 'response'])
      .where('key_hash', '=', key_hash)
      .where('created_at', '>=', notBefore)
      .executeTakeFirst();
  }
  async putIdempotent(row: { key_hash: string; scope: string; request_hash: string; response: string }) {
    const cutoff = new Date(Date.now() - 24 * 3600_000).toISOString();
    await this.db.deleteFrom('idempotency').where('created_at', '<', cutoff).execute();
    try {
      await this.db.insertInto('idempotency').values({ ...row, created_at: now() }).execute();
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }

  async getSetting(key: string) {
    return (await this.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst())?.value;
  }
  async setSetting(key: string, value: string) {
    const r = await this.db.updateTable('settings').set({ value }).where('key', '=', key).executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) {
      try {
        await this.db.insertInto('settings').values({ key, value }).execute();
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        await this.db.updateTable('settings').set({ value }).where('key', '=', key).execute();
      }
    }
  }
  async settingsWithPrefix(prefix: string) {
    const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return this.db.selectFrom('settings').select(['key', 'value']).where(sql<boolean>`key like ${pattern} escape '\\'`).execute();
  }
  async deleteSetting(key: string) {
    await this.db.deleteFrom('settings').where('key', '=', key).execute();
  }
  async initSetting(key: string, value: string) {
    try {
      await this.db.insertInto('settings').values({ key, value }).execute();
      return value;
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      return (await this.getSetting(key))!;
    }
  }

  async insertUsage(rows: UsageRecord[]) {
    if (rows.length === 0) return;
    if (this.usageInserter) return this.usageInserter(rows);
    const values: UsageRecordRow[] = rows.map((r) => ({
      ...r,
      stream: r.stream ? 1 : 0,
      estimated: r.estimated ? 1 : 0,
      pii_types: JSON.stringify(r.pii_types),
      // A journal written by an earlier release has rows without it.
      response_id: r.response_id ?? null,
      tool: r.tool ?? null,
    }));
    // A record already written (a retried flush) is skipped rather than failing the batch.
    await this.db
      .insertInto('usage_records')
      .values(values)
      .onConflict((oc) => oc.column('request_id').doNothing())
      .execute();
  }

  private traceAggregates() {
    return this.db
      .selectFrom('usage_records')
      .select((eb) => [
        'tenant_id',
        'trace_id',
        eb.fn.min('agent_id').as('agent_id'),
        eb.fn.min('started_at').as('started_at'),
        eb.fn.max('started_at').as('last_started_at'),
        eb.fn.max(sql<number>`latency_ms`).as('max_latency'),
        eb.fn.countAll<number>().as('request_count'),
        eb.fn.sum<number>(sql`case when status = 'ok' then 0 else 1 end`).as('error_count'),
        eb.fn.sum<number>('prompt_tokens').as('prompt_tokens'),
        eb.fn.sum<number>('completion_tokens').as('completion_tokens'),
        eb.fn.sum<number>('cost').as('cost'),
      ])
      // Trace ids come from clients: two tenants may use the same one, and their traces never merge.
      .groupBy(['tenant_id', 'trace_id']);
  }

  /**
   * Rows of usage_records that a trace filter covers (tenant and agent narrow the rows a summary is made of). For
   * look-ups by trace id the columns are compared as `column || ''`, which no index serves: without statistics SQLite
   * would otherwise read a tenant's or agent's whole index range instead of the few rows of the traces asked for.
   */
  private scoped<Q extends { where: (...a: any[]) => Q }>(q: Q, f: Pick<TraceFilter, 'tenant_id' | 'agent_id'>, byTrace = false): Q {
    let out = q;
    if (f.tenant_id) out = out.where(byTrace ? sql<string>`tenant_id || ''` : 'tenant_id', '=', f.tenant_id);
    if (f.agent_id) out = out.where(byTrace ? sql<string>`agent_id || ''` : 'agent_id', '=', f.agent_id);
    return out;
  }

  /**
   * One page of traces, newest start first, without grouping the whole table: usage rows are read newest first through
   * the time index, in chunks, and each trace met is looked up by its own index for its first row. A trace starts at its
   * first row, so once the scan has passed below time T every trace that started after T has been met: the scan stops
   * as soon as a full page of traces started after the scan's position. Its cost follows the rows written since the
   * page's oldest trace began, not the size of the table (which a GROUP BY over all rows would read, blocking SQLite's
   * single connection for seconds on a large table).
   */
  async listTraces(f: TraceFilter): Promise<Page<TraceSummary>> {
    const since = f.since ? utc(f.since) : undefined;
    const cursor = f.cursor ? decodeCursor(f.cursor, 3) : undefined;
    const want = f.limit + 1;
    const starts = new Map<string, TraceStart>();
    const wanted = (t: TraceStart) => (since === undefined || t.started_at >= since) && (cursor === undefined || compareTraceStarts(t, cursor) < 0);
    let pos: { started_at: string; seq: number } | undefined;
    for (;;) {
      let q = this.scoped(this.db.selectFrom('usage_records').select(['seq', 'tenant_id', 'trace_id', 'started_at']), f);
      if (cursor) q = q.where('started_at', '<=', cursor[0]!);
      if (since) q = q.where('started_at', '>=', since);
      if (pos) {
        const p = pos;
        // The plain `<=` bound gives the index a range to start from; the OR alone would be filtered row by row.
        q = q
          .where('started_at', '<=', p.started_at)
          .where((eb) => eb.or([eb('started_at', '<', p.started_at), eb.and([eb('started_at', '=', p.started_at), eb('seq', '<', p.seq)])]));
      }
      const rows = await this.report(q.orderBy('started_at', 'desc').orderBy('seq', 'desc').limit(this.traceScanChunk));
      const fresh = new Set<string>();
      for (const r of rows) if (!starts.has(traceKey(r.tenant_id, r.trace_id))) fresh.add(r.trace_id);
      if (fresh.size > 0) {
        const found = await this.report(
          this.scoped(
            this.db
              .selectFrom('usage_records')
              .select((eb) => ['tenant_id', 'trace_id', eb.fn.min('started_at').as('started_at')])
              .where('trace_id', 'in', [...fresh]),
            f,
            true,
          ).groupBy(['tenant_id', 'trace_id']),
        );
        for (const t of found) {
          const key = traceKey(t.tenant_id, t.trace_id);
          if (!starts.has(key)) starts.set(key, { tenant_id: t.tenant_id, trace_id: t.trace_id, started_at: String(t.started_at) });
        }
      }
      if (rows.length < this.traceScanChunk) break;
      const last = rows[rows.length - 1]!;
      pos = { started_at: last.started_at, seq: Number(last.seq) };
      let complete = 0;
      for (const t of starts.values()) if (t.started_at > last.started_at && wanted(t)) complete++;
      if (complete >= want) break;
    }
    const page = [...starts.values()].filter(wanted).sort((a, b) => -compareTraceStarts(a, [b.started_at, b.trace_id, b.tenant_id])).slice(0, want);
    const more = page.length > f.limit;
    const data = page.slice(0, f.limit);
    if (data.length === 0) return { data: [], next_cursor: null };
    const ids = [...new Set(data.map((t) => t.trace_id))];
    const aggregates = new Map<string, any>();
    for (const r of await this.report(this.scoped(this.traceAggregates().where('trace_id', 'in', ids), f, true))) aggregates.set(traceKey(r.tenant_id, r.trace_id), r);
    const ends = await this.endedAt(ids, f);
    const stops = await this.stopsOf(ids, f.tenant_id);
    const last = data[data.length - 1]!;
    return {
      data: data.map((t) => {
        const key = traceKey(t.tenant_id, t.trace_id);
        return this.toSummary(aggregates.get(key), ends.get(key), stops.get(key));
      }),
      next_cursor: more ? encodeCursor([last.started_at, last.trace_id, last.tenant_id]) : null,
    };
  }

  /** End of each (tenant, trace): the latest started_at + latency over the filter's rows, keyed by traceKey. */
  private async endedAt(traceIds: string[], f: Pick<TraceFilter, 'tenant_id' | 'agent_id'>): Promise<Map<string, string>> {
    const rows = await this.report(
      this.scoped(
        this.db.selectFrom('usage_records').select(['tenant_id', 'trace_id', 'started_at', 'latency_ms']).where('trace_id', 'in', traceIds),
        f,
        true,
      ),
    );
    const out = new Map<string, string>();
    for (const r of rows) {
      const end = new Date(Date.parse(r.started_at) + Math.round(Number(r.latency_ms))).toISOString();
      const key = traceKey(r.tenant_id, r.trace_id);
      const cur = out.get(key);
      if (!cur || end > cur) out.set(key, end);
    }
    return out;
  }

  /** Stops of these trace ids (of one tenant when given), keyed by traceKey. */
  private async stopsOf(traceIds: string[], tenantId: string | undefined): Promise<Map<string, TraceStopped>> {
    let q = this.db.selectFrom('trace_stops').select(['tenant_id', 'trace_id', 'stopped_at', 'reason']).where('trace_id', 'in', traceIds);
    if (tenantId) q = q.where('tenant_id', '=', tenantId);
    const out = new Map<string, TraceStopped>();
    for (const r of await q.execute()) out.set(traceKey(r.tenant_id, r.trace_id), { at: r.stopped_at, reason: r.reason });
    return out;
  }

  private toSummary(r: any, ended: string | undefined, stopped: TraceStopped | undefined): TraceSummary {
    return {
      trace_id: r.trace_id,
      tenant_id: r.tenant_id,
      agent_id: r.agent_id,
      started_at: r.started_at,
      ended_at: ended ?? r.last_started_at,
      request_count: Number(r.request_count),
      error_count: Number(r.error_count ?? 0),
      prompt_tokens: Number(r.prompt_tokens ?? 0),
      completion_tokens: Number(r.completion_tokens ?? 0),
      cost: round(Number(r.cost ?? 0)),
      stopped: stopped ?? null,
    };
  }

  async getTrace(traceId: string, tenantId?: string) {
    // Every column but the stored request body, which a trace does not show.
    let q = this.db
      .selectFrom('usage_records')
      .select([
        'seq', 'request_id', 'trace_id', 'tenant_id', 'agent_id', 'model', 'provider', 'stream', 'status', 'http_status', 'error_code',
        'prompt_tokens', 'completion_tokens', 'cost', 'latency_ms', 'ttft_ms', 'started_at', 'pii_types',
        'endpoint', 'cached_tokens', 'reasoning_tokens', 'response_id', 'tool',
      ])
      .where('trace_id', '=', traceId);
    if (tenantId) q = q.where('tenant_id', '=', tenantId);
    const all = await this.report(q.orderBy('started_at').orderBy('seq'));
    if (all.length === 0) return undefined;
    // Unscoped, an id that two tenants share answers with the one of them that started first.
    const rows = all.filter((r) => r.tenant_id === all[0]!.tenant_id);
    const requests: TraceRequest[] = rows.map((r, i) => ({
      request_id: r.request_id,
      step: i + 1,
      endpoint: r.endpoint,
      model: r.model,
      provider: r.provider,
      stream: !!r.stream,
      status: r.status as TraceRequest['status'],
      http_status: r.http_status,
      error_code: r.error_code,
      prompt_tokens: r.prompt_tokens,
      completion_tokens: r.completion_tokens,
      cached_tokens: Number(r.cached_tokens),
      reasoning_tokens: Number(r.reasoning_tokens),
      cost: round(Number(r.cost)),
      latency_ms: Number(r.latency_ms),
      ttft_ms: r.ttft_ms === null ? null : Number(r.ttft_ms),
      started_at: r.started_at,
      pii_types: JSON.parse(r.pii_types),
      response_id: r.response_id ?? null,
      tool: r.tool ?? null,
    }));
    const ended = rows
      .map((r) => new Date(Date.parse(r.started_at) + Math.round(Number(r.latency_ms))).toISOString())
      .reduce((a, b) => (a > b ? a : b));
    const stopped = (await this.stopsOf([traceId], rows[0]!.tenant_id)).get(traceKey(rows[0]!.tenant_id, traceId));
    return {
      trace_id: traceId,
      tenant_id: rows[0]!.tenant_id,
      agent_id: rows[0]!.agent_id,
      started_at: rows[0]!.started_at,
      ended_at: ended,
      request_count: rows.length,
      error_count: rows.filter((r) => r.status !== 'ok').length,
      prompt_tokens: rows.reduce((s, r) => s + r.prompt_tokens, 0),
      completion_tokens: rows.reduce((s, r) => s + r.completion_tokens, 0),
      cost: round(rows.reduce((s, r) => s + Number(r.cost), 0)),
      stopped: stopped ?? null,
      requests,
    };
  }

  async traceTenants(traceId: string) {
    // By the usage_trace index; a trace's rows, not the table's.
    const rows = await this.db.selectFrom('usage_records').select('tenant_id').distinct().where('trace_id', '=', traceId).orderBy('tenant_id').execute();
    return rows.map((r) => r.tenant_id);
  }

  async stopTrace(stop: TraceStopRecord): Promise<TraceStopRecord> {
    const { tenant_id, trace_id, reason, stopped_at, stopped_by } = stop;
    // The first stop is kept: a repeat (or a concurrent stop on another node) changes nothing and reads it back.
    await this.db
      .insertInto('trace_stops')
      .values({ tenant_id, trace_id, reason, stopped_at, stopped_by })
      .onConflict((oc) => oc.columns(['tenant_id', 'trace_id']).doNothing())
      .execute();
    return this.db.selectFrom('trace_stops').selectAll().where('tenant_id', '=', tenant_id).where('trace_id', '=', trace_id).executeTakeFirstOrThrow();
  }

  async recentTraceStops(since: string, limit: number) {
    return this.db
      .selectFrom('trace_stops')
      .select(['tenant_id', 'trace_id'])
      .where('stopped_at', '>=', utc(since))
      .orderBy('stopped_at', 'desc')
      .limit(limit)
      .execute();
  }

  async usage(f: UsageFilter): Promise<UsageRow[]> {
    const key = usageKey(f.group_by);
    let q = this.db
      .selectFrom('usage_records')
      .select((eb) => [
        key.as('key'),
        eb.fn.countAll<number>().as('requests'),
        eb.fn.sum<number>(NOT_OK).as('errors'),
        eb.fn.sum<number>('prompt_tokens').as('prompt_tokens'),
        eb.fn.sum<number>('completion_tokens').as('completion_tokens'),
        eb.fn.sum<number>('cost').as('cost'),
      ]);
    if (f.from) q = q.where('started_at', '>=', utc(f.from));
    if (f.to) q = q.where('started_at', '<', utc(f.to));
    if (f.tenant_id) q = q.where('tenant_id', '=', f.tenant_id);
    // Model steps have no tool: a grouping by tool counts tool calls only.
    if (f.group_by === 'tool') q = q.where('tool', 'is not', null);
    const rows = await this.report(q.groupBy(key).orderBy(key));
    return rows.map((r) => ({
      key: String(r.key),
      requests: Number(r.requests),
      errors: Number(r.errors ?? 0),
      prompt_tokens: Number(r.prompt_tokens ?? 0),
      completion_tokens: Number(r.completion_tokens ?? 0),
      cost: round(Number(r.cost ?? 0)),
    }));
  }

  async spendSince(since: string) {
    const rows = await this.report(
      this.db
        .selectFrom('usage_records')
        .select((eb) => ['agent_id', eb.fn.sum<number>('cost').as('cost')])
        .where('started_at', '>=', utc(since))
        .groupBy('agent_id'),
    );
    return rows.map((r) => ({ agent_id: r.agent_id, cost: Number(r.cost ?? 0) }));
  }
  async tenantSpendSince(since: string) {
    const rows = await this.report(
      this.db
        .selectFrom('usage_records')
        .select((eb) => ['tenant_id', eb.fn.sum<number>('cost').as('cost')])
        .where('started_at', '>=', utc(since))
        .groupBy('tenant_id'),
    );
    return rows.map((r) => ({ tenant_id: r.tenant_id, cost: Number(r.cost ?? 0) }));
  }
  async traceSpendSince(since: string) {
    const rows = await this.report(
      this.db
        .selectFrom('usage_records')
        .select((eb) => ['tenant_id', 'trace_id', eb.fn.sum<number>('cost').as('cost')])
        .where('started_at', '>=', utc(since))
        .groupBy(['tenant_id', 'trace_id']),
    );
    return rows.map((r) => ({ tenant_id: r.tenant_id, trace_id: r.trace_id, cost: Number(r.cost ?? 0) }));
  }
  async traceSpend(tenantId: string, traceId: string) {
    // One trace, by the usage_trace index: on the main connection, not the report reader (it is on a request's path).
    const row = await this.db
      .selectFrom('usage_records')
      .select((eb) => eb.fn.sum<number>('cost').as('cost'))
      .where('trace_id', '=', traceId)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return Number(row?.cost ?? 0);
  }

  async putResponse(r: StoredResponse) {
    // Column by column: a caller's richer object (a StoredResponse and more) never names a column that does not exist.
    const { id, tenant_id, agent_id, trace_id, request_id, model, provider_type, created_at, input, response } = r;
    await this.db.insertInto('responses').values({ id, tenant_id, agent_id, trace_id, request_id, model, provider_type, created_at, input, response }).execute();
  }
  async getResponse(id: string) {
    return this.db.selectFrom('responses').selectAll().where('id', '=', id).executeTakeFirst();
  }
  async deleteResponse(id: string) {
    const r = await this.db.deleteFrom('responses').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
  async sweepResponses(before: string) {
    const cutoff = utc(before);
    let total = 0;
    for (;;) {
      const deleted = await this.deleteResponsesBatch(cutoff);
      total += deleted;
      if (deleted < this.responseSweepBatch) return total;
    }
  }

  /** One short transaction of the sweep, oldest rows first by the created_at index: other writers wait for no more than that. */
  private async deleteResponsesBatch(cutoff: string): Promise<number> {
    const oldest = this.db.selectFrom('responses').select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(this.responseSweepBatch);
    const r = await this.db.deleteFrom('responses').where('id', 'in', oldest).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async close() {
    await this.beforeClose?.();
    await this.db.destroy();
  }
}

/** 1 for a request whose status is not ok (error or blocked): the rule of a trace's error_count, summed as a usage row's errors. */
const NOT_OK = sql<number>`case when status = 'ok' then 0 else 1 end`;

/**
 * The key a usage report groups by, the same SQL on SQLite and PostgreSQL. started_at is stored as UTC RFC 3339 with
 * milliseconds (`2026-11-25T14:03:07.123Z`): a day is its first 10 characters, an hour its first 13 with the rest of
 * the hour's start written out (`2026-11-25T14:00:00Z`). The literals are inline, not bound: PostgreSQL matches the
 * selected key to the GROUP BY expression by its text, which two parameters ($1, $2) would differ in.
 */
function usageKey(groupBy: UsageFilter['group_by']) {
  switch (groupBy) {
    case 'agent':
      return sql<string>`agent_id`;
    case 'tenant':
      return sql<string>`tenant_id`;
    case 'model':
      return sql<string>`coalesce(model, '')`;
    case 'tool':
      return sql<string>`tool`;
    case 'day':
      return sql<string>`substr(started_at, 1, 10)`;
    case 'hour':
      return sql<string>`substr(started_at, 1, 13) || ':00:00Z'`;
  }
}

/**
 * Times are stored as toISOString() text (UTC, milliseconds) and compared as text, so a bound given with an offset
 * or without milliseconds is brought to the same form first.
 */
function utc(ts: string): string {
  const ms = Date.parse(ts);
  return Number.isNaN(ms) ? ts : new Date(ms).toISOString();
}

function traceKey(tenantId: string, traceId: string): string {
  return `${tenantId}\u0000${traceId}`;
}

function round(n: number): number {
  return Math.round(n * 1e10) / 1e10;
}

interface TraceStart {
  tenant_id: string;
  trace_id: string;
  started_at: string;
}

/** Order of trace listings: by start, then trace id, then tenant (`c` is [started_at, trace_id, tenant_id], a cursor's parts). */
function compareTraceStarts(t: TraceStart, c: string[]): number {
  const [started, id, tenant] = c as [string, string, string];
  if (t.started_at !== started) return t.started_at < started ? -1 : 1;
  if (t.trace_id !== id) return t.trace_id < id ? -1 : 1;
  return t.tenant_id === tenant ? 0 : t.tenant_id < tenant ? -1 : 1;
}
