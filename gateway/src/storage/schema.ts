import type { Generated } from 'kysely';

/** Row types of the one Kysely schema shared by SQLite and PostgreSQL. JSON columns are text; times are RFC 3339 text. */
export interface Database {
  tenants: { id: string; name: string; labels: string; created_at: string; updated_at: string; monthly_budget: number | null; daily_budget: number | null };
  policies: {
    id: string;
    tenant_id: string | null;
    monthly_budget: number | null;
    daily_budget: number | null;
    allowed_models: string | null;
    /** JSON array of `server/tool` globs, null = every tool (0008). */
    allowed_tools: string | null;
    rules: string;
    labels: string;
    created_at: string;
    updated_at: string;
  };
  agents: {
    id: string;
    tenant_id: string;
    name: string;
    policy_id: string | null;
    labels: string;
    key_prefix: string;
    key_hash: string;
    created_at: string;
    updated_at: string;
    /** 1 while suspended (0006). */
    suspended: number;
  };
  /** Per-agent credentials for an upstream MCP server (0016): headers sealed with the deployment's secret. */
  mcp_credentials: {
    agent_id: string;
    server: string;
    /** The headers as JSON, AES-256-GCM under a key derived from AGENTGW_SECRET_KEY, bound to agent and server. */
    sealed: string;
    /** JSON array of the header names (not secret: GET shows which headers are set). */
    header_names: string;
    created_at: string;
    updated_at: string;
  };
  /** Routes written through the admin interface (0015); aliases of agentgw.yaml are not stored. */
  routes: {
    alias: string;
    strategy: string;
    /** JSON array of {model, weight, priority, rpm, tpm}. */
    targets: string;
    labels: string;
    created_at: string;
    updated_at: string;
  };
  admin_keys: {
    id: string;
    name: string;
    role: string;
    tenant_id: string | null;
    key_prefix: string;
    key_hash: string;
    created_at: string;
  };
  idempotency: { key_hash: string; scope: string; request_hash: string; response: string; created_at: string };
  settings: { key: string; value: string };
  usage_records: {
    seq: Generated<number>;
    request_id: string;
    trace_id: string;
    tenant_id: string;
    agent_id: string;
    model: string | null;
    provider: string | null;
    stream: number;
    status: string;
    http_status: number;
    error_code: string | null;
    prompt_tokens: number;
    completion_tokens: number;
    cost: number;
    estimated: number;
    latency_ms: number;
    ttft_ms: number | null;
    started_at: string;
    pii_types: string;
    body: string | null;
    endpoint: string;
    cached_tokens: number;
    reasoning_tokens: number;
    response_id: string | null;
    /** The MCP tool of a tool-call step (`server/tool`, endpoint mcp); null on model steps (0008). */
    tool: string | null;
    /** JSON array of the step's decided tool calls; null when no policy had tool rules (0011). */
    tool_calls: string | null;
    cleaned: string | null;
    /** The model the client named, alias included (0017); null on rows of earlier releases. */
    requested_model: string | null;
  };
  responses: {
    id: string;
    tenant_id: string;
    agent_id: string;
    trace_id: string;
    request_id: string;
    model: string;
    provider_type: string;
    created_at: string;
    input: string;
    response: string;
    /** Why the response could not be stored (0009): such a row is a mark holding no conversation; null on stored ones. */
    not_stored: string | null;
  };
  /** Traces an operator stopped (0006): one row per (tenant, trace); the first stop is kept. */
  trace_stops: {
    tenant_id: string;
    trace_id: string;
    reason: string | null;
    stopped_at: string;
    /** The admin key that stopped it. */
    stopped_by: string;
  };
  /** One row per admin write (0010), appended in the write's own transaction; before/after are JSON, secrets left out. */
  audit_log: {
    id: string;
    at: string;
    actor_kind: string;
    actor_id: string;
    actor_name: string;
    action: string;
    object_kind: string;
    object_id: string;
    /** The tenant the object belongs to (null: global objects), so tenant-scoped keys see their tenant's entries. */
    tenant_id: string | null;
    before: string | null;
    after: string | null;
    request_id: string;
    change_id: string | null;
  };
  /** The accepted definition of each upstream MCP tool (0014): first seen, or accepted by an admin (pinned_by). */
  mcp_tool_pins: {
    server: string;
    tool: string;
    /** SHA-256 (hex) of the canonical JSON of the definition. */
    digest: string;
    /** JSON of {description, inputSchema, annotations}. */
    definition: string;
    pinned_at: string;
    /** The admin who accepted it (`<kind>:<id>`); null when it was recorded as first seen. */
    pinned_by: string | null;
  };
  /** Tool calls held for a person (0013); rule and arguments are JSON. */
  approvals: {
    id: string;
    tenant_id: string;
    agent_id: string;
    trace_id: string;
    request_id: string;
    tool: string;
    arguments: string;
    /** The hash of the tool and its canonical, normalised arguments: what an approval after the timeout lets pass once. */
    call_hash: string;
    rule: string | null;
    reason: string | null;
    status: string;
    decided_by: string | null;
    comment: string | null;
    created_at: string;
    decided_at: string | null;
    expires_at: string;
    /** 1 when it was approved after it had timed out (a pass for the same call, once, for 15 minutes). */
    approved_late: number;
    grant_used_at: string | null;
  };
}
