import type { Attrs, Kind } from '../../kinds/descriptor.js';

export type { Attrs, Kind };

/** Normalised fields of a tenant, policy or agent: every declared field with its default filled in. */
export type TenantAttrs = Attrs;
export type PolicyAttrs = Attrs;
export type AgentAttrs = Attrs;

export type AttrsOf = Record<Kind, Attrs>;

/** One object, normalised so that the file side and the live side compare field by field. */
export interface StateObject<K extends Kind = Kind> {
  kind: K;
  /** Identity: tenant and policy id; `tenant_id/name` for agents. */
  id: string;
  attrs: Attrs;
  /** The live `managed_by` label (`agentgw` when apply created it, null when absent); `agentgw` on the file side. */
  owner: string | null;
  /** The server's id (agents have one distinct from their identity); empty on the file side. */
  serverId: string;
  /** Why the live object cannot be written through the admin interface (a route of the server config); absent when it can. */
  readOnly?: string;
  /** It is read-only for this key only: writing it takes an admin key (see KindDescriptor.adminOnly). */
  needsAdmin?: true;
}

export type State = Record<Kind, Map<string, StateObject>>;

export function emptyState(): State {
  return { tenant: new Map(), policy: new Map(), agent: new Map(), route: new Map() };
}
