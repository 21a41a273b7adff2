import {
  mergePolicy,
  normaliseTargets,
  type Agent,
  type CreateAgent,
  type CreateTenant,
  type PatchAgent,
  type PatchTenant,
  type Policy,
  type PutPolicy,
  type PutRoute,
  type Route,
  type Tenant,
} from '@agentgw/gateway/contract';
import { AdminApiError } from '../../admin-client/errors.js';
import type { AgentWithKey } from '../../admin-client/types.js';
import { KINDS } from '../../kinds/index.js';
import type { ReconcileClient } from '../engine.js';

const NOW = '2026-01-01T00:00:00.000Z';

/** An in-memory admin interface with the server's refusals (404, 409), for engine tests without a server. */
export class FakeAdmin implements ReconcileClient {
  tenants = new Map<string, Tenant>();
  policies = new Map<string, Policy>();
  agents = new Map<string, Agent>();
  /** Routes by alias; those with source "config" are read-only, as the server's aliases of agentgw.yaml are. */
  routes = new Map<string, Route>();
  calls: string[] = [];
  /**
   * The calling key's role, as GET /me answers it. Other than admin, the key is scoped to tenant acme: lists hold acme's
   * objects only (global policies are still read by id), and another tenant is 403 (the fake lets every key write).
   */
  role: 'admin' | 'tenant_admin' | 'viewer' = 'admin';
  /** Makes the n-th write (0-based) fail with this error. */
  failOn: { call: string; error: AdminApiError } | null = null;
  private seq = 0;

  private write(call: string): void {
    this.calls.push(call);
    if (this.failOn && this.failOn.call === call) throw this.failOn.error;
  }

  async me() {
    return { id: 'adk_fake', name: 'fake', role: this.role, tenant_id: this.role === 'admin' ? null : 'acme' };
  }

  private get scope(): string | undefined {
    return this.role === 'admin' ? undefined : 'acme';
  }

  async listAllTenants() {
    return [...this.tenants.values()].filter((t) => !this.scope || t.id === this.scope);
  }
  async listAllPolicies(q: { tenant_id?: string } = {}) {
    const tenant = this.scope ?? q.tenant_id;
    return [...this.policies.values()].filter((p) => !tenant || p.tenant_id === tenant);
  }
  async listAllAgents(q: { tenant_id?: string } = {}) {
    return [...this.agents.values()].filter((a) => !q.tenant_id || a.tenant_id === q.tenant_id);
  }
  async getTenant(id: string) {
    if (this.scope && id !== this.scope) throw new AdminApiError(403, 'tenant_forbidden', `This admin key is scoped to tenant ${this.scope} and cannot access tenant ${id}.`);
    const t = this.tenants.get(id);
    if (!t) throw new AdminApiError(404, 'tenant_not_found', `Tenant ${id} does not exist.`);
    return t;
  }
  async getPolicy(id: string) {
    const p = this.policies.get(id);
    if (!p) throw new AdminApiError(404, 'policy_not_found', `Policy ${id} does not exist.`);
    return p;
  }
  async getAgent(id: string) {
    const a = this.agents.get(id);
    if (!a) throw new AdminApiError(404, 'agent_not_found', `Agent ${id} does not exist.`);
    return { ...a, spend: { day: 0, month: 0, daily_limit: null, monthly_limit: null, day_resets_at: NOW, month_resets_at: NOW } };
  }

  async createTenant(body: CreateTenant) {
    this.write(`create tenant ${body.id}`);
    if (this.tenants.has(body.id)) throw new AdminApiError(409, 'tenant_exists', `Tenant ${body.id} already exists.`);
    // every field the contract gives a tenant, at its default unless the body sets it
    const t = { ...KINDS.tenant.defaults, ...body, created_at: NOW, updated_at: NOW } as Tenant;
    this.tenants.set(t.id, t);
    return t;
  }
  async updateTenant(id: string, patch: PatchTenant) {
    this.write(`update tenant ${id}`);
    const t = this.tenants.get(id);
    if (!t) throw new AdminApiError(404, 'tenant_not_found', `Tenant ${id} does not exist.`);
    const next = { ...t, ...patch };
    this.tenants.set(id, next);
    return next;
  }
  async deleteTenant(id: string) {
    this.write(`delete tenant ${id}`);
    if (!this.tenants.has(id)) throw new AdminApiError(404, 'tenant_not_found', `Tenant ${id} does not exist.`);
    const used = [...this.agents.values(), ...this.policies.values()].some((o) => o.tenant_id === id);
    if (used) throw new AdminApiError(409, 'tenant_not_empty', `Tenant ${id} still has agents or policies.`);
    this.tenants.delete(id);
  }

  async putPolicy(id: string, body: PutPolicy) {
    this.write(`put policy ${id}`);
    const existing = this.policies.get(id) ?? null;
    if (!existing && body.tenant_id && !this.tenants.has(body.tenant_id)) {
      throw new AdminApiError(404, 'tenant_not_found', `Tenant ${body.tenant_id} does not exist.`);
    }
    const fields = mergePolicy(existing, body);
    const policy: Policy = { id, ...fields, created_at: NOW, updated_at: NOW };
    this.policies.set(id, policy);
    return { policy, created: existing === null };
  }
  async deletePolicy(id: string) {
    this.write(`delete policy ${id}`);
    if (!this.policies.has(id)) throw new AdminApiError(404, 'policy_not_found', `Policy ${id} does not exist.`);
    if ([...this.agents.values()].some((a) => a.policy_id === id)) {
      throw new AdminApiError(409, 'policy_in_use', `Policy ${id} is used by an agent.`);
    }
    this.policies.delete(id);
  }

  async createAgent(body: CreateAgent): Promise<AgentWithKey> {
    this.write(`create agent ${body.tenant_id}/${body.name}`);
    if (!this.tenants.has(body.tenant_id)) throw new AdminApiError(404, 'tenant_not_found', `Tenant ${body.tenant_id} does not exist.`);
    if (body.policy_id && !this.policies.has(body.policy_id)) {
      throw new AdminApiError(404, 'policy_not_found', `Policy ${body.policy_id} does not exist.`);
    }
    if ([...this.agents.values()].some((a) => a.tenant_id === body.tenant_id && a.name === body.name)) {
      throw new AdminApiError(409, 'agent_exists', `An agent named ${body.name} already exists.`);
    }
    const n = ++this.seq;
    const agent = {
      ...KINDS.agent.defaults,
      ...Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)),
      id: `agt_${String(n).padStart(16, '0')}`,
      key_prefix: `agk_${n}`,
      created_at: NOW,
      updated_at: NOW,
    } as Agent;
    this.agents.set(agent.id, agent);
    return { ...agent, api_key: `agk_secret_${n}` };
  }
  async updateAgent(id: string, patch: PatchAgent) {
    this.write(`update agent ${id}`);
    const a = this.agents.get(id);
    if (!a) throw new AdminApiError(404, 'agent_not_found', `Agent ${id} does not exist.`);
    if (patch.policy_id && !this.policies.has(patch.policy_id)) {
      throw new AdminApiError(404, 'policy_not_found', `Policy ${patch.policy_id} does not exist.`);
    }
    const next = { ...a, ...patch } as Agent;
    this.agents.set(id, next);
    return next;
  }
  async listAllRoutes() {
    return [...this.routes.values()];
  }
  async getRoute(alias: string) {
    const r = this.routes.get(alias);
    if (!r) throw new AdminApiError(404, 'route_not_found', `Route ${alias} does not exist.`);
    return r;
  }
  async putRoute(alias: string, body: PutRoute) {
    this.write(`put route ${alias}`);
    const existing = this.routes.get(alias);
    if (existing?.source === 'config') throw new AdminApiError(409, 'route_read_only', `Route ${alias} comes from the server config.`);
    const route: Route = {
      alias,
      strategy: body.strategy,
      targets: normaliseTargets(body.targets),
      labels: body.labels ?? existing?.labels ?? {},
      source: 'api',
      created_at: NOW,
      updated_at: NOW,
    };
    this.routes.set(alias, route);
    return { route, created: existing === undefined };
  }
  async deleteRoute(alias: string) {
    this.write(`delete route ${alias}`);
    const existing = this.routes.get(alias);
    if (existing?.source === 'config') throw new AdminApiError(409, 'route_read_only', `Route ${alias} comes from the server config.`);
    if (!this.routes.delete(alias)) throw new AdminApiError(404, 'route_not_found', `Route ${alias} does not exist.`);
  }

  async deleteAgent(id: string) {
    this.write(`delete agent ${id}`);
    if (!this.agents.delete(id)) throw new AdminApiError(404, 'agent_not_found', `Agent ${id} does not exist.`);
  }
}
