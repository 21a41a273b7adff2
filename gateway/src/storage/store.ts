import type { Agent, AdminKey, AuditEntry, AuditObjectKind, Policy, Role, Route, Tenant, TraceRequest, TraceSummary, TraceToolCall, UsageRow } from '../contract/index.js';
import type { StorageKind } from './migrations.js';
import type { Approval, ApprovalStatus } from '../contract/approvals.js';

export interface PageQuery {
  limit: number;
  cursor?: string;
}
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface StoredAgent extends Agent {
  key_hash: string;
  /** Its tenant's budgets (one pool for all the tenant's agents), read with the agent for the data plane's snapshot. */
  tenant_budget?: { monthly_budget: number | null; daily_budget: number | null };
}
export interface StoredAdminKey extends AdminKey {
  key_hash: string;
}
/** An agent's credential for one upstream MCP server, as stored: its headers sealed, their names in the clear. */
export interface StoredMcpCredential {
  agent_id: string;
  server: string;
  sealed: string;
  header_names: string[];
  created_at: string;
  updated_at: string;
}

/** One usage record: a data-plane request, allowed or blocked. Never message bodies unless capture was opted in (redacted). */
export interface UsageRecord {
  request_id: string;
  trace_id: string;
  tenant_id: string;
  agent_id: string;
  model: string | null;
  provider: string | null;
  stream: boolean;
  status: 'ok' | 'error' | 'blocked';
  http_status: number;
  error_code: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  estimated: boolean;
  latency_ms: number;
  ttft_ms: number | null;
  started_at: string;
  pii_types: string[];
  body: string | null;
  /** The API the client spoke: chat.completions, embeddings, messages, ... */
  endpoint: string;
  /** Of prompt_tokens, those read from the provider's prompt cache. */
  cached_tokens: number;
  /** Of completion_tokens, those spent reasoning, when the provider says. */
  reasoning_tokens: number;
  /** The Responses API response (`resp_...`) this request answered with; null on other endpoints. */
  response_id: string | null;
  /** The MCP tool of a tool-call step (`server/tool`, endpoint `mcp`); absent or null on model steps (and in journals of earlier releases). */
  tool?: string | null;
  /** The calls the model proposed, as the tool rules decided them; absent or null when no policy has tool rules. */
  tool_calls?: TraceToolCall[] | null;
  /** What was taken out of the client's request for the target that served it (a fallback across families); absent or null when nothing. */
  cleaned?: string[] | null;
  /** The model the client named (an alias included); absent in journals of earlier releases. */
  requested_model?: string | null;
}

/** The accepted definition of one upstream MCP tool (MCP tool pinning). */
export interface McpToolPinRecord {
  server: string;
  tool: string;
  /** SHA-256 (hex) of the canonical JSON of `definition`. */
  digest: string;
  definition: { description: string | null; inputSchema: unknown; annotations: unknown };
  pinned_at: string;
  /** Who accepted it (`<actor kind>:<id>`); null: recorded as the first definition seen. */
  pinned_by: string | null;
}

/** One OpenAI Responses API turn that agentgw keeps (store: true), read back by `previous_response_id` and GET /responses/{id}. */
export interface StoredResponse {
  /** `resp_...`, minted by agentgw. */
  id: string;
  tenant_id: string;
  agent_id: string;
  trace_id: string;
  request_id: string;
  /** The model the client asked for. */
  model: string;
  /** The provider type that answered (openai, anthropic, ...): whether its reasoning items can be sent back upstream. */
  provider_type: string;
  created_at: string;
  /** JSON array of the expanded input items: earlier turns' items, then this turn's input. */
  input: string;
  /** JSON of the response object as answered. */
  response: string;
  /**
   * Set on the mark of a response that was answered but could not be stored (the database was down): why. Such a mark
   * holds no conversation; reads of its id are 404s that say it was not stored.
   */
  not_stored?: string | null;
}

/** An operator's stop of one trace (POST /traces/{trace_id}/stop): every later request of it is refused. */
export interface TraceStopRecord {
  tenant_id: string;
  trace_id: string;
  reason: string | null;
  stopped_at: string;
  /** The admin key that stopped it. */
  stopped_by: string;
}

export interface TraceFilter {
  tenant_id?: string;
  agent_id?: string;
  since?: string;
  limit: number;
  cursor?: string;
}
export interface UsageFilter {
  group_by: 'agent' | 'tenant' | 'model' | 'tool' | 'day' | 'hour';
  from?: string;
  to?: string;
  tenant_id?: string;
}

export type PolicyFields = Omit<Policy, 'id' | 'created_at' | 'updated_at'>;
export type RouteFields = Pick<Route, 'strategy' | 'targets' | 'labels'>;

/** An audit entry as stored: with the tenant its object belongs to (null: global), which scopes who may read it. */
export interface AuditRecord extends AuditEntry {
  tenant_id: string | null;
}
export interface AuditFilter {
  since?: string;
  /** Exclusive. */
  until?: string;
  /** The actor's id or name. */
  actor?: string;
  kind?: AuditObjectKind;
  object_id?: string;
  tenant_id?: string;
  limit: number;
  cursor?: string;
}

/** A tool call held for a person, as the holding node writes it (pending). */
export interface NewApproval extends Omit<Approval, 'status' | 'decided_by' | 'comment' | 'decided_at'> {
  /** The hash of the tool and its canonical, normalised arguments (see approvals/call-hash.ts). */
  call_hash: string;
}
/** The call an approval given after its timeout lets pass once: the same agent, trace and call (see approvals/call-hash.ts). */
export interface ApprovalCall {
  tenantId: string;
  agentId: string;
  traceId: string;
  callHash: string;
}
export interface ApprovalFilter {
  status?: ApprovalStatus;
  tenant_id?: string;
  trace_id?: string;
  limit: number;
  cursor?: string;
}

/** Everything agentgw keeps. One implementation over Kysely serves SQLite and PostgreSQL. */
export interface Store {
  readonly kind: StorageKind;
  /**
   * False while the database is known to be down: the last call failed for want of it and none has succeeded since
   * (always true for SQLite, a local file). Work that needs it, and can be refused before it starts, is refused at once.
   */
  readonly reachable: boolean;

  createTenant(t: Pick<Tenant, 'id' | 'name' | 'labels'> & Partial<Pick<Tenant, 'monthly_budget' | 'daily_budget'>>): Promise<Tenant>;
  getTenant(id: string): Promise<Tenant | undefined>;
  listTenants(q: PageQuery & { tenant_id?: string }): Promise<Page<Tenant>>;
  updateTenant(id: string, patch: { name?: string; labels?: Tenant['labels']; monthly_budget?: number | null; daily_budget?: number | null }): Promise<Tenant | undefined>;
  /** Deletes the tenant unless agents or policies remain: 'not_empty' then. */
  deleteTenant(id: string): Promise<'deleted' | 'missing' | 'not_empty'>;

  /** `suspended` defaults to false. */
  createAgent(a: Omit<StoredAgent, 'created_at' | 'updated_at' | 'suspended'> & { suspended?: boolean }): Promise<Agent>;
  getAgent(id: string): Promise<Agent | undefined>;
  listAgents(q: PageQuery & { tenant_id?: string }): Promise<Page<Agent>>;
  updateAgent(id: string, patch: { name?: string; policy_id?: string | null; labels?: Agent['labels']; suspended?: boolean }): Promise<Agent | undefined>;
  setAgentKey(id: string, key_hash: string, key_prefix: string): Promise<boolean>;
  deleteAgent(id: string): Promise<boolean>;
  /** Every agent with its key hash: the data plane's snapshot. */
  allAgents(): Promise<StoredAgent[]>;

  getPolicy(id: string): Promise<Policy | undefined>;
  /** Creates or replaces the policy; returns whether it was created. */
  putPolicy(id: string, fields: PolicyFields): Promise<{ policy: Policy; created: boolean }>;
  listPolicies(q: PageQuery & { tenant_id?: string }): Promise<Page<Policy>>;
  deletePolicy(id: string): Promise<'deleted' | 'missing' | 'in_use'>;
  allPolicies(): Promise<Policy[]>;

  /** Per-agent credentials for upstream MCP servers: sealed headers, readable only with the deployment's secret. */
  getMcpCredential(agentId: string, server: string): Promise<StoredMcpCredential | undefined>;
  /** Creates or replaces the credential; returns whether it was created. */
  putMcpCredential(c: StoredMcpCredential): Promise<{ credential: StoredMcpCredential; created: boolean }>;
  deleteMcpCredential(agentId: string, server: string): Promise<boolean>;
  /** The agent's credentials, by server. */
  listMcpCredentials(agentId: string): Promise<StoredMcpCredential[]>;

  /** Routes written through the admin interface (source `api`). */
  getRoute(alias: string): Promise<Route | undefined>;
  /** Creates or replaces the route; returns whether it was created. */
  putRoute(alias: string, fields: RouteFields): Promise<{ route: Route; created: boolean }>;
  deleteRoute(alias: string): Promise<boolean>;
  /** Every stored route, by alias: the data plane's snapshot. */
  allRoutes(): Promise<Route[]>;

  createAdminKey(k: StoredAdminKey): Promise<AdminKey>;
  upsertRootKey(key_hash: string, key_prefix: string): Promise<void>;
  findAdminKeyByHash(hash: string): Promise<StoredAdminKey | undefined>;
  listAdminKeys(q: PageQuery & { tenant_id?: string }): Promise<Page<AdminKey>>;
  deleteAdminKey(id: string): Promise<boolean>;
  hasAdminKeyWithRole(role: Role): Promise<boolean>;

  getIdempotent(key_hash: string, notBefore: string): Promise<{ scope: string; request_hash: string; response: string } | undefined>;
  /** Stores the result of an idempotent request; false when another request stored one first. */
  putIdempotent(row: { key_hash: string; scope: string; request_hash: string; response: string }): Promise<boolean>;

  /**
   * Runs `fn` in one database transaction: everything written through `tx` (the write and its audit entry) commits
   * together, or nothing does when `fn` throws. Reads through `tx` of rows it may write lock them where the database can.
   */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /** Appends an entry to the audit log: call it through the transaction of the write it records. */
  appendAudit(entry: AuditRecord): Promise<void>;
  /** Entries newest first. */
  listAudit(f: AuditFilter): Promise<Page<AuditEntry>>;
  getAdminKey(id: string): Promise<AdminKey | undefined>;

  getSetting(key: string): Promise<string | undefined>;
  setSetting(key: string, value: string): Promise<void>;
  /** Sets the value only when absent; returns the value now stored. */
  initSetting(key: string, value: string): Promise<string>;
  /** Every setting whose key starts with `prefix`. */
  settingsWithPrefix(prefix: string): Promise<Array<{ key: string; value: string }>>;
  deleteSetting(key: string): Promise<void>;

  insertUsage(rows: UsageRecord[]): Promise<void>;
  /** Rows per insertUsage call that this store writes best, when it has a preference (the usage writer's batch size). */
  readonly usageBatchRows?: number;
  listTraces(f: TraceFilter): Promise<Page<TraceSummary>>;
  getTrace(traceId: string, tenantId?: string): Promise<(TraceSummary & { requests: TraceRequest[] }) | undefined>;
  /** The tenants that recorded requests under a trace id (ids come from clients, so two tenants may share one). */
  traceTenants(traceId: string): Promise<string[]>;
  /** Stops the trace unless it is stopped already; answers the stop now stored (the first one: a repeat changes nothing). */
  stopTrace(stop: TraceStopRecord): Promise<TraceStopRecord>;
  /** Stops made at or after `since`, newest first, at most `limit`: what the data plane's snapshot holds. */
  recentTraceStops(since: string, limit: number): Promise<Array<Pick<TraceStopRecord, 'tenant_id' | 'trace_id'>>>;
  usage(f: UsageFilter): Promise<UsageRow[]>;
  /** Cost per agent since a time: seeds in-memory budget counters after a restart. */
  spendSince(since: string): Promise<Array<{ agent_id: string; cost: number }>>;
  /** Cost per tenant since a time: seeds tenant budgets after a restart or a Redis rebuild. */
  tenantSpendSince(since: string): Promise<Array<{ tenant_id: string; cost: number }>>;
  /** Cost per trace since a time: seeds trace budgets after a restart. */
  traceSpendSince(since: string): Promise<Array<{ tenant_id: string; trace_id: string; cost: number }>>;
  /** Cost recorded for one trace: re-seeds a trace whose spend left the in-memory counters when it comes back. */
  traceSpend(tenantId: string, traceId: string): Promise<number>;

  /** Stores the response; when that fails, the store remembers it as not stored (see StoredResponse.not_stored) and throws. */
  putResponse(r: StoredResponse): Promise<void>;
  /** The stored response, or the mark of one that could not be stored. */
  getResponse(id: string): Promise<StoredResponse | undefined>;
  /** true when a row was deleted */
  deleteResponse(id: string): Promise<boolean>;
  /** Deletes responses created before `before` (ISO); returns how many. Deletes in batches so a big table never locks for long. */
  sweepResponses(before: string): Promise<number>;

  /** Pins of MCP tools (of one server when given). */
  listMcpToolPins(server?: string): Promise<McpToolPinRecord[]>;
  /** Records first definitions where the tool has no pin yet; answers the pins now stored for those tools (another node's may have won). */
  recordMcpToolPins(pins: McpToolPinRecord[]): Promise<McpToolPinRecord[]>;
  /** Sets the tool's pin to an accepted definition (through the transaction of its audit entry); answers the pin it replaced. */
  acceptMcpToolPin(pin: McpToolPinRecord): Promise<McpToolPinRecord | undefined>;

  createApproval(a: NewApproval): Promise<Approval>;
  getApproval(id: string): Promise<Approval | undefined>;
  /** Newest first. */
  listApprovals(f: ApprovalFilter): Promise<Page<Approval>>;
  /** A person's decision over a state that allows it (pending; timed_out for an approval): whether this call decided it. */
  decideApproval(id: string, decision: 'approved' | 'denied', by: string, comment: string | null, at: string): Promise<{ approval: Approval | undefined; decided: boolean }>;
  /** The holder ends a pending approval (timed_out, abandoned) unless it was decided first; answers the row as it stands. */
  closeApproval(id: string, status: 'timed_out' | 'abandoned', at: string, comment?: string | null): Promise<Approval | undefined>;
  /** Of these approvals, the ones no longer pending (what a holding node polls). */
  settledApprovals(ids: string[]): Promise<Approval[]>;
  /** Takes, once, the pass that an approval after the timeout left for the same call of the agent in the trace; its id or null. */
  takeApprovalGrant(call: ApprovalCall, since: string, at: string): Promise<string | null>;

  close(): Promise<void>;
}
