import type { Labels, Rules } from '@agentgw/gateway/contract';

export type Kind = 'tenant' | 'policy' | 'agent';

export interface TenantAttrs {
  id: string;
  name: string;
  labels: Labels;
}

export interface PolicyAttrs {
  id: string;
  tenant_id: string | null;
  monthly_budget: number | null;
  daily_budget: number | null;
  allowed_models: string[] | null;
  rules: Rules;
  labels: Labels;
}

export interface AgentAttrs {
  tenant_id: string;
  name: string;
  policy_id: string | null;
  labels: Labels;
}

export interface AttrsOf {
  tenant: TenantAttrs;
  policy: PolicyAttrs;
  agent: AgentAttrs;
}

/** One object, normalised so that the file side and the live side compare field by field. */
export interface StateObject<K extends Kind = Kind> {
  kind: K;
  /** Identity: tenant and policy id; `tenant_id/name` for agents. */
  id: string;
  attrs: AttrsOf[K];
  /** The live `managed_by` label (`agentgw` when apply created it, null when absent); `agentgw` on the file side. */
  owner: string | null;
  /** The server's id (agents have one distinct from their identity); empty on the file side. */
  serverId: string;
}

export type State = { [K in Kind]: Map<string, StateObject<K>> };

export function emptyState(): State {
  return { tenant: new Map(), policy: new Map(), agent: new Map() };
}
