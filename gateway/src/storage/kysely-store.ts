import type { CompiledQuery, Kysely } from 'kysely';
import type { Agent, Role, Tenant } from '../contract/index.js';
import * as adminKeys from './kysely/admin-keys.js';
import * as agents from './kysely/agents.js';
import * as approvals from './kysely/approvals.js';
import * as audit from './kysely/audit.js';
import type { Report } from './kysely/common.js';
import * as idempotency from './kysely/idempotency.js';
import * as mcpCredentials from './kysely/mcp-credentials.js';
import * as mcpToolPins from './kysely/mcp-tool-pins.js';
import * as policies from './kysely/policies.js';
import * as responses from './kysely/responses.js';
import * as routes from './kysely/routes.js';
import * as settings from './kysely/settings.js';
import * as tenants from './kysely/tenants.js';
import * as traceStops from './kysely/trace-stops.js';
import * as traces from './kysely/traces.js';
import * as usage from './kysely/usage.js';
import type { StorageKind } from './migrations.js';
import type { Database } from './schema.js';
import { isUniqueViolation } from './store-errors.js';
import type { StoreHealth } from './store-health.js';
import { UnstoredResponses } from './unstored-responses.js';
import type {
  ApprovalCall,
  ApprovalFilter,
  AuditFilter,
  AuditRecord,
  McpToolPinRecord,
  PageQuery,
  PolicyFields,
  RouteFields,
  Store,
  StoredAdminKey,
  StoredAgent,
  StoredMcpCredential,
  StoredResponse,
  TraceFilter,
  TraceStopRecord,
  UsageFilter,
  UsageRecord,
  NewApproval,
} from './store.js';

// The queries and row mappers of each resource are in ./kysely/, one module per resource; this class wires them.
export { decodeCursor, encodeCursor, InvalidCursorError } from './kysely/common.js';
export type { UsageRecordRow } from './kysely/usage.js';

/** What a driver adds to the one Kysely store. */
export interface KyselyStoreOptions {
  /** A faster batch insert for usage records, where the driver offers one (SQLite: one prepared statement). */
  usageInserter?: (rows: UsageRecord[]) => void | Promise<void>;
  /** Runs before the connection closes (SQLite: ends the usage writer thread). */
  beforeClose?: () => Promise<void>;
  /** Runs the reports over usage rows elsewhere than on this connection (SQLite: on the usage thread's own). */
  reportReader?: <R>(q: CompiledQuery<R>) => Promise<R[]>;
  /** Rows per usage insert this store writes best, asked at each insert (SQLite: larger batches while its thread lives). */
  preferredBatchRows?: () => number | undefined;
  /** Whether the database is known to be down (PostgreSQL: every call reports to it); none: always reachable. */
  health?: StoreHealth;
}

export class KyselyStore implements Store {
  /** Usage rows read per step of a trace listing's newest-first scan. */
  traceScanChunk = 500;
  /** Stored responses deleted per statement of a retention sweep (each holds a conversation's input: rows of up to megabytes). */
  responseSweepBatch = 200;
  /** Set on a store bound to a write's transaction: reads of the rows it may write take their locks (SQLite locks the whole database anyway). */
  private lockReads = false;
  /** Responses that could not be stored, until the database has their marks. */
  private readonly unstored: UnstoredResponses;

  constructor(
    private readonly db: Kysely<Database>,
    readonly kind: StorageKind,
    private readonly opts: KyselyStoreOptions = {},
  ) {
    this.unstored = new UnstoredResponses((mark) => responses.putResponseMark(this.db, mark));
  }

  get usageBatchRows(): number | undefined {
    return this.opts.preferredBatchRows?.();
  }

  get reachable(): boolean {
    return this.opts.health?.reachable ?? true;
  }

  /** A report's rows: read by reportReader when there is one. */
  private readonly report: Report = (q) => (this.opts.reportReader ? this.opts.reportReader(q.compile()) : q.execute());

  createTenant(t: Pick<Tenant, 'id' | 'name' | 'labels'> & Partial<Pick<Tenant, 'monthly_budget' | 'daily_budget'>>) {
    return tenants.createTenant(this.db, t);
  }
  getTenant(id: string) {
    return tenants.getTenant(this.db, id, this.lockReads);
  }
  listTenants(q: PageQuery & { tenant_id?: string }) {
    return tenants.listTenants(this.db, q);
  }
  updateTenant(id: string, patch: { name?: string; labels?: Tenant['labels']; monthly_budget?: number | null; daily_budget?: number | null }) {
    return tenants.updateTenant(this.db, id, patch);
  }
  deleteTenant(id: string) {
    return tenants.deleteTenant(this.db, id);
  }

  createAgent(a: Omit<StoredAgent, 'created_at' | 'updated_at' | 'suspended'> & { suspended?: boolean }) {
    return agents.createAgent(this.db, a);
  }
  getAgent(id: string) {
    return agents.getAgent(this.db, id, this.lockReads);
  }
  listAgents(q: PageQuery & { tenant_id?: string }) {
    return agents.listAgents(this.db, q);
  }
  updateAgent(id: string, patch: { name?: string; policy_id?: string | null; labels?: Agent['labels']; suspended?: boolean }) {
    return agents.updateAgent(this.db, id, patch);
  }
  setAgentKey(id: string, key_hash: string, key_prefix: string) {
    return agents.setAgentKey(this.db, id, key_hash, key_prefix);
  }
  async deleteAgent(id: string) {
    // Its upstream credentials go with it (a new agent never inherits them).
    await mcpCredentials.deleteAgentMcpCredentials(this.db, id);
    return agents.deleteAgent(this.db, id);
  }
  allAgents() {
    return agents.allAgents(this.db);
  }

  getPolicy(id: string) {
    return policies.getPolicy(this.db, id, this.lockReads);
  }
  putPolicy(id: string, f: PolicyFields) {
    return policies.putPolicy(this.db, id, f);
  }
  listPolicies(q: PageQuery & { tenant_id?: string }) {
    return policies.listPolicies(this.db, q);
  }
  deletePolicy(id: string) {
    return policies.deletePolicy(this.db, id);
  }
  allPolicies() {
    return policies.allPolicies(this.db);
  }

  getMcpCredential(agentId: string, server: string) {
    return mcpCredentials.getMcpCredential(this.db, agentId, server, this.lockReads);
  }
  putMcpCredential(c: StoredMcpCredential) {
    return mcpCredentials.putMcpCredential(this.db, c);
  }
  deleteMcpCredential(agentId: string, server: string) {
    return mcpCredentials.deleteMcpCredential(this.db, agentId, server);
  }
  listMcpCredentials(agentId: string) {
    return mcpCredentials.listMcpCredentials(this.db, agentId);
  }

  getRoute(alias: string) {
    return routes.getRoute(this.db, alias, this.lockReads);
  }
  putRoute(alias: string, f: RouteFields) {
    return routes.putRoute(this.db, alias, f);
  }
  deleteRoute(alias: string) {
    return routes.deleteRoute(this.db, alias);
  }
  allRoutes() {
    return routes.allRoutes(this.db);
  }

  createAdminKey(k: StoredAdminKey) {
    return adminKeys.createAdminKey(this.db, k);
  }
  upsertRootKey(key_hash: string, key_prefix: string) {
    return adminKeys.upsertRootKey(this.db, key_hash, key_prefix);
  }
  findAdminKeyByHash(hash: string) {
    return adminKeys.findAdminKeyByHash(this.db, hash);
  }
  listAdminKeys(q: PageQuery & { tenant_id?: string }) {
    return adminKeys.listAdminKeys(this.db, q);
  }
  getAdminKey(id: string) {
    return adminKeys.getAdminKey(this.db, id);
  }
  deleteAdminKey(id: string) {
    return adminKeys.deleteAdminKey(this.db, id);
  }
  hasAdminKeyWithRole(role: Role) {
    return adminKeys.hasAdminKeyWithRole(this.db, role);
  }

  getIdempotent(key_hash: string, notBefore: string) {
    return idempotency.getIdempotent(this.db, key_hash, notBefore);
  }
  putIdempotent(row: { key_hash: string; scope: string; request_hash: string; response: string }) {
    return idempotency.putIdempotent(this.db, row);
  }

  /** A store bound to one transaction of this one; on PostgreSQL its reads of tenants, agents and policies lock their rows. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => {
      const tx = new KyselyStore(trx, this.kind);
      tx.lockReads = this.kind === 'postgres';
      return fn(tx);
    });
  }
  appendAudit(entry: AuditRecord) {
    return audit.appendAudit(this.db, entry);
  }
  listAudit(f: AuditFilter) {
    return audit.listAudit(this.db, f);
  }

  getSetting(key: string) {
    return settings.getSetting(this.db, key);
  }
  setSetting(key: string, value: string) {
    return settings.setSetting(this.db, key, value);
  }
  settingsWithPrefix(prefix: string) {
    return settings.settingsWithPrefix(this.db, prefix);
  }
  deleteSetting(key: string) {
    return settings.deleteSetting(this.db, key);
  }
  initSetting(key: string, value: string) {
    return settings.initSetting(this.db, key, value);
  }

  async insertUsage(rows: UsageRecord[]) {
    if (rows.length === 0) return;
    if (this.opts.usageInserter) return this.opts.usageInserter(rows);
    await usage.insertUsage(this.db, rows);
  }

  listTraces(f: TraceFilter) {
    return traces.listTraces(this.db, this.report, f, this.traceScanChunk);
  }
  getTrace(traceId: string, tenantId?: string) {
    return traces.getTrace(this.db, this.report, traceId, tenantId);
  }
  traceTenants(traceId: string) {
    return traces.traceTenants(this.db, traceId);
  }

  stopTrace(stop: TraceStopRecord) {
    return traceStops.stopTrace(this.db, stop);
  }
  recentTraceStops(since: string, limit: number) {
    return traceStops.recentTraceStops(this.db, since, limit);
  }

  usage(f: UsageFilter) {
    return usage.usage(this.db, this.report, f);
  }
  spendSince(since: string) {
    return usage.spendSince(this.db, this.report, since);
  }
  tenantSpendSince(since: string) {
    return usage.tenantSpendSince(this.db, this.report, since);
  }
  traceSpendSince(since: string) {
    return usage.traceSpendSince(this.db, this.report, since);
  }
  traceSpend(tenantId: string, traceId: string) {
    return usage.traceSpend(this.db, tenantId, traceId);
  }

  async putResponse(r: StoredResponse) {
    try {
      await responses.putResponse(this.db, r);
    } catch (err) {
      // A duplicate id is a row already there: that one stays readable.
      if (!isUniqueViolation(err)) this.unstored.add(r, err);
      throw err;
    }
  }
  async getResponse(id: string) {
    return this.unstored.get(id) ?? responses.getResponse(this.db, id);
  }
  deleteResponse(id: string) {
    return responses.deleteResponse(this.db, id);
  }
  sweepResponses(before: string) {
    return responses.sweepResponses(this.db, before, this.responseSweepBatch);
  }

  listMcpToolPins(server?: string) {
    return mcpToolPins.listMcpToolPins(this.db, server);
  }
  recordMcpToolPins(pins: McpToolPinRecord[]) {
    return mcpToolPins.recordMcpToolPins(this.db, pins);
  }
  acceptMcpToolPin(pin: McpToolPinRecord) {
    return mcpToolPins.acceptMcpToolPin(this.db, pin, this.lockReads);
  }

  createApproval(a: NewApproval) {
    return approvals.createApproval(this.db, a);
  }
  getApproval(id: string) {
    return approvals.getApproval(this.db, id);
  }
  listApprovals(f: ApprovalFilter) {
    return approvals.listApprovals(this.db, f);
  }
  decideApproval(id: string, decision: 'approved' | 'denied', by: string, comment: string | null, at: string) {
    return approvals.decideApproval(this.db, id, decision, by, comment, at);
  }
  closeApproval(id: string, status: 'timed_out' | 'abandoned', at: string, comment?: string | null) {
    return approvals.closeApproval(this.db, id, status, at, comment ?? null);
  }
  settledApprovals(ids: string[]) {
    return approvals.settledApprovals(this.db, ids);
  }
  takeApprovalGrant(call: ApprovalCall, since: string, at: string) {
    return approvals.takeApprovalGrant(this.db, call, since, at);
  }

  async close() {
    await this.unstored.close();
    await this.opts.beforeClose?.();
    await this.db.destroy();
  }
}
