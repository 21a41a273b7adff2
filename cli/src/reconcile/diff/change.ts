import type { AttrsOf, Kind } from '../state/types.js';
import type { FieldChange } from './field-changes.js';

export type Op = 'create' | 'update' | 'delete';

/** One event of the change set: what happens to one object. Holds no secret (agents' keys are never part of state). */
export interface Change<K extends Kind = Kind> {
  op: Op;
  kind: K;
  /** Identity: tenant or policy id, `tenant_id/name` for an agent. */
  id: string;
  before: AttrsOf[K] | null;
  after: AttrsOf[K] | null;
  /** Field-level detail: the fields set on a create, old -> new on an update; empty on a delete. */
  changes: FieldChange[];
  /** The `managed_by` label the object has (or gets, on create): kept as it is on updates. */
  owner: string | null;
  /** The server's id of the live object (needed for agents). */
  serverId: string;
}

export interface Summary {
  add: number;
  change: number;
  destroy: number;
}

export interface ChangeSet {
  changes: Change[];
  summary: Summary;
}

export function summarise(changes: Change[]): Summary {
  return {
    add: changes.filter((c) => c.op === 'create').length,
    change: changes.filter((c) => c.op === 'update').length,
    destroy: changes.filter((c) => c.op === 'delete').length,
  };
}
