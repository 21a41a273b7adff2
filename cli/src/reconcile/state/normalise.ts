import { DEFAULT_RULES, mergePolicy, type Agent, type DeclarativeFile, type Policy, type Rules, type Tenant } from '@agentgw/gateway/contract';
import { agentIdentity } from './identity.js';
import { MANAGED_VALUE, ownerOf, withoutOwnership } from './ownership.js';
import { emptyState, type AgentAttrs, type PolicyAttrs, type State, type TenantAttrs } from './types.js';

/** The live objects as the dump stage fetched them. */
export interface LiveObjects {
  tenants: Tenant[];
  policies: Policy[];
  agents: Agent[];
}

/** Rules over the defaults, so a server that leaves a default out still compares equal. */
function normaliseRules(rules: Partial<Rules> | undefined): Rules {
  return { ...DEFAULT_RULES, ...rules };
}

export function tenantAttrs(t: { id: string; name: string; labels?: Tenant['labels'] }): TenantAttrs {
  return { id: t.id, name: t.name, labels: withoutOwnership(t.labels) };
}

export function policyAttrs(id: string, fields: Omit<Policy, 'id' | 'created_at' | 'updated_at'>): PolicyAttrs {
  return {
    id,
    tenant_id: fields.tenant_id ?? null,
    monthly_budget: fields.monthly_budget ?? null,
    daily_budget: fields.daily_budget ?? null,
    allowed_models: fields.allowed_models ?? null,
    rules: normaliseRules(fields.rules),
    labels: withoutOwnership(fields.labels),
  };
}

export function agentAttrs(a: { tenant_id: string; name: string; policy_id?: string | null; labels?: Agent['labels'] }): AgentAttrs {
  return { tenant_id: a.tenant_id, name: a.name, policy_id: a.policy_id ?? null, labels: withoutOwnership(a.labels) };
}

/** The file's objects with every default filled in, exactly as the server would store them. */
export function desiredState(file: DeclarativeFile): State {
  const state = emptyState();
  for (const t of file.tenants) {
    state.tenant.set(t.id, { kind: 'tenant', id: t.id, attrs: tenantAttrs(t), owner: MANAGED_VALUE, serverId: '' });
  }
  for (const p of file.policies) {
    const { id, ...body } = p;
    state.policy.set(id, { kind: 'policy', id, attrs: policyAttrs(id, mergePolicy(null, body)), owner: MANAGED_VALUE, serverId: '' });
  }
  for (const a of file.agents) {
    const id = agentIdentity(a.tenant_id, a.name);
    state.agent.set(id, { kind: 'agent', id, attrs: agentAttrs(a), owner: MANAGED_VALUE, serverId: '' });
  }
  return state;
}

/** The gateway's objects, normalised the same way as the file's. */
export function liveState(live: LiveObjects): State {
  const state = emptyState();
  for (const t of live.tenants) {
    state.tenant.set(t.id, { kind: 'tenant', id: t.id, attrs: tenantAttrs(t), owner: ownerOf(t.labels), serverId: t.id });
  }
  for (const p of live.policies) {
    state.policy.set(p.id, { kind: 'policy', id: p.id, attrs: policyAttrs(p.id, p), owner: ownerOf(p.labels), serverId: p.id });
  }
  for (const a of live.agents) {
    const id = agentIdentity(a.tenant_id, a.name);
    state.agent.set(id, { kind: 'agent', id, attrs: agentAttrs(a), owner: ownerOf(a.labels), serverId: a.id });
  }
  return state;
}
