import type { Dispatcher } from 'undici';
import { isAdminApiError } from './errors.js';
import { AdminHttp } from './http.js';
import { CHANGE_ID_HEADER } from '@agentgw/gateway/contract';
import type {
  AdminKey,
  AdminKeyWithSecret,
  Agent,
  AgentWithKey,
  AgentWithSpend,
  Approval,
  ApprovalDecision,
  ApprovalsQuery,
  AuditEntry,
  AuditQuery,
  CreateAdminKey,
  CreateAgent,
  CreateTenant,
  Page,
  PageQuery,
  PatchAgent,
  PatchTenant,
  Policy,
  PutPolicy,
  PutRoute,
  RotatedKey,
  Route,
  StopTrace,
  SystemConfig,
  Tenant,
  TraceDetail,
  TraceStop,
  TraceSummary,
  TracesQuery,
  UsageQuery,
  UsageRow,
} from './types.js';

export interface AdminClientOptions {
  /** The admin base address, e.g. http://127.0.0.1:8080/api */
  baseUrl: string;
  adminKey: string;
  dispatcher?: Dispatcher;
  timeoutMs?: number;
}

const seg = encodeURIComponent;
/** The largest page the admin interface serves (PaginationQuery). */
const MAX_PAGE = 500;

/** A typed client of every endpoint of CONTRACT's admin interface. */
export class AdminClient {
  private readonly http: AdminHttp;

  constructor(opts: AdminClientOptions) {
    this.http = new AdminHttp(opts);
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  /** Every later request says which change it belongs to: the audit log keeps it as each entry's change_id. */
  useChangeId(changeId: string): void {
    this.http.defaultHeaders[CHANGE_ID_HEADER] = changeId;
  }

  // Tenants

  async listTenants(q: PageQuery = {}): Promise<Page<Tenant>> {
    return asPage(await this.get<Page<Tenant> | Tenant[]>('/tenants', { ...q }));
  }

  listAllTenants(): Promise<Tenant[]> {
    return this.all((cursor) => this.listTenants({ limit: MAX_PAGE, cursor }));
  }

  getTenant(id: string): Promise<Tenant> {
    return this.get(`/tenants/${seg(id)}`);
  }

  async createTenant(body: CreateTenant): Promise<Tenant> {
    return (await this.http.send<Tenant>('POST', '/tenants', { body })).data;
  }

  async updateTenant(id: string, patch: PatchTenant): Promise<Tenant> {
    return (await this.http.send<Tenant>('PATCH', `/tenants/${seg(id)}`, { body: patch })).data;
  }

  async deleteTenant(id: string): Promise<void> {
    await this.http.send('DELETE', `/tenants/${seg(id)}`);
  }

  // Agents

  async listAgents(q: PageQuery & { tenant_id?: string } = {}): Promise<Page<Agent>> {
    return asPage(await this.get<Page<Agent> | Agent[]>('/agents', { ...q }));
  }

  listAllAgents(q: { tenant_id?: string } = {}): Promise<Agent[]> {
    return this.all((cursor) => this.listAgents({ ...q, limit: MAX_PAGE, cursor }));
  }

  getAgent(id: string): Promise<AgentWithSpend> {
    return this.get(`/agents/${seg(id)}`);
  }

  /** The api_key of the answer is shown by the server this once. */
  async createAgent(body: CreateAgent, opts: { idempotencyKey?: string } = {}): Promise<AgentWithKey> {
    const headers = opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : undefined;
    return (await this.http.send<AgentWithKey>('POST', '/agents', { body, headers })).data;
  }

  async updateAgent(id: string, patch: PatchAgent): Promise<Agent> {
    return (await this.http.send<Agent>('PATCH', `/agents/${seg(id)}`, { body: patch })).data;
  }

  async deleteAgent(id: string): Promise<void> {
    await this.http.send('DELETE', `/agents/${seg(id)}`);
  }

  async rotateAgentKey(id: string): Promise<RotatedKey> {
    return (await this.http.send<RotatedKey>('POST', `/agents/${seg(id)}/rotate-key`)).data;
  }

  // Policies

  /** Creates the policy when absent (`created: true`), else merges the body over it. */
  async putPolicy(id: string, body: PutPolicy): Promise<{ policy: Policy; created: boolean }> {
    const res = await this.http.send<Policy>('PUT', `/policies/${seg(id)}`, { body });
    return { policy: res.data, created: res.status === 201 };
  }

  async listPolicies(q: PageQuery & { tenant_id?: string } = {}): Promise<Page<Policy>> {
    return asPage(await this.get<Page<Policy> | Policy[]>('/policies', { ...q }));
  }

  listAllPolicies(q: { tenant_id?: string } = {}): Promise<Policy[]> {
    return this.all((cursor) => this.listPolicies({ ...q, limit: MAX_PAGE, cursor }));
  }

  getPolicy(id: string): Promise<Policy> {
    return this.get(`/policies/${seg(id)}`);
  }

  async deletePolicy(id: string): Promise<void> {
    await this.http.send('DELETE', `/policies/${seg(id)}`);
  }

  // Routes (aliases are percent-encoded in paths: globs may hold "/")

  /** Creates the route when absent (`created: true`), else replaces its strategy and targets. */
  async putRoute(alias: string, body: PutRoute): Promise<{ route: Route; created: boolean }> {
    const res = await this.http.send<Route>('PUT', `/routes/${seg(alias)}`, { body });
    return { route: res.data, created: res.status === 201 };
  }

  async listRoutes(q: PageQuery = {}): Promise<Page<Route>> {
    return asPage(await this.get<Page<Route> | Route[]>('/routes', { ...q }));
  }

  /** Every route, those of the server config (source "config") included. */
  listAllRoutes(): Promise<Route[]> {
    return this.all((cursor) => this.listRoutes({ limit: MAX_PAGE, cursor }));
  }

  getRoute(alias: string): Promise<Route> {
    return this.get(`/routes/${seg(alias)}`);
  }

  async deleteRoute(alias: string): Promise<void> {
    await this.http.send('DELETE', `/routes/${seg(alias)}`);
  }

  // System

  getSystemConfig(): Promise<SystemConfig> {
    return this.get('/system/config');
  }

  async setMaintenance(body: { enabled: boolean; message?: string | null }): Promise<void> {
    await this.http.send('PUT', '/system/maintenance', { body });
  }

  getOpenApi(): Promise<Record<string, unknown>> {
    return this.get('/openapi.json');
  }

  // Admin keys

  async createAdminKey(body: CreateAdminKey): Promise<AdminKeyWithSecret> {
    return (await this.http.send<AdminKeyWithSecret>('POST', '/admin-keys', { body })).data;
  }

  async listAdminKeys(q: PageQuery = {}): Promise<Page<AdminKey>> {
    return asPage(await this.get<Page<AdminKey> | AdminKey[]>('/admin-keys', { ...q }));
  }

  listAllAdminKeys(): Promise<AdminKey[]> {
    return this.all((cursor) => this.listAdminKeys({ limit: MAX_PAGE, cursor }));
  }

  async deleteAdminKey(id: string): Promise<void> {
    await this.http.send('DELETE', `/admin-keys/${seg(id)}`);
  }

  /** The calling key: its id, name, role and tenant. */
  me(): Promise<Pick<AdminKey, 'id' | 'name' | 'role' | 'tenant_id'>> {
    return this.get('/me');
  }

  // Traces and usage

  async listTraces(q: TracesQuery = {}): Promise<Page<TraceSummary>> {
    return asPage(await this.get<Page<TraceSummary> | TraceSummary[]>('/traces', { ...q }));
  }

  listAllTraces(q: Omit<TracesQuery, 'limit' | 'cursor'> = {}): Promise<TraceSummary[]> {
    return this.all((cursor) => this.listTraces({ ...q, limit: MAX_PAGE, cursor }));
  }

  getTrace(traceId: string): Promise<TraceDetail> {
    return this.get(`/traces/${seg(traceId)}`);
  }

  /** Every later request of the trace is refused; stopping again answers the first stop. */
  async stopTrace(traceId: string, body: StopTrace = {}, q: { tenant_id?: string } = {}): Promise<TraceStop> {
    return (await this.http.send<TraceStop>('POST', `/traces/${seg(traceId)}/stop`, { body, query: { ...q } })).data;
  }

  async usage(q: UsageQuery = {}): Promise<UsageRow[]> {
    const res = await this.get<{ data: UsageRow[] } | UsageRow[]>('/usage', { ...q });
    return Array.isArray(res) ? res : res.data;
  }

  // Audit log

  async listAudit(q: AuditQuery = {}): Promise<Page<AuditEntry>> {
    return asPage(await this.get<Page<AuditEntry>>('/audit', { ...q }));
  }

  // Approvals

  async listApprovals(q: ApprovalsQuery = {}): Promise<Page<Approval>> {
    return asPage(await this.get<Page<Approval>>('/approvals', { ...q }));
  }

  listAllApprovals(q: Omit<ApprovalsQuery, 'limit' | 'cursor'> = {}): Promise<Approval[]> {
    return this.all((cursor) => this.listApprovals({ ...q, cursor }));
  }

  /** Releases the held call as proposed; 409 approval_decided when it was decided before. */
  async decideApproval(id: string, decision: 'approve' | 'deny', body: ApprovalDecision = {}): Promise<Approval> {
    return (await this.http.send<Approval>('POST', `/approvals/${seg(id)}/${decision}`, { body })).data;
  }

  private async get<T>(path: string, query?: Record<string, string | number | undefined>): Promise<T> {
    return (await this.http.send<T>('GET', path, { query })).data;
  }

  /** Follows next_cursor to the last page. */
  private async all<T>(fetchPage: (cursor?: string) => Promise<Page<T>>): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | undefined;
    const seen = new Set<string>();
    do {
      const page = await fetchPage(cursor);
      out.push(...page.data);
      cursor = page.next_cursor ?? undefined;
      // a server that repeats a cursor would loop forever
      if (cursor !== undefined && seen.has(cursor)) break;
      if (cursor !== undefined) seen.add(cursor);
    } while (cursor !== undefined);
    return out;
  }
}

/** Lists are `{data, next_cursor}`; a bare array is read as a single page. */
function asPage<T>(res: Page<T> | T[]): Page<T> {
  if (Array.isArray(res)) return { data: res, next_cursor: null };
  return { data: res?.data ?? [], next_cursor: res?.next_cursor ?? null };
}

/** Deletes that find nothing count as done: the object is gone either way. */
export async function ignoreNotFound(p: Promise<void>): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (isAdminApiError(e) && e.status === 404) return;
    throw e;
  }
}
