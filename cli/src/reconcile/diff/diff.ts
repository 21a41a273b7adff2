import { DEFAULT_RULES } from '@agentgw/gateway/contract';
import { policyAttrs } from '../state/normalise.js';
import { isManaged, MANAGED_VALUE } from '../state/ownership.js';
import type { AttrsOf, Kind, State, StateObject } from '../state/types.js';
import type { Change } from './change.js';
import { fieldChanges } from './field-changes.js';
import { PlanError } from './plan-error.js';

export interface DiffOptions {
  /** `sync` makes the gateway match the file; `destroy` deletes what the file names. */
  mode: 'sync' | 'destroy';
  /** In sync mode, also delete managed objects the file no longer names. */
  prune?: boolean;
}

const KINDS: Kind[] = ['tenant', 'policy', 'agent'];

/** What an object looks like before any field is set: a create shows only the fields that differ from it. */
function baseline<K extends Kind>(kind: K, after: AttrsOf[K]): AttrsOf[K] {
  if (kind === 'tenant') return { ...(after as AttrsOf['tenant']), name: '', labels: {} } as AttrsOf[K];
  if (kind === 'agent') return { ...(after as AttrsOf['agent']), policy_id: null, labels: {} } as AttrsOf[K];
  const id = (after as AttrsOf['policy']).id;
  return policyAttrs(id, { tenant_id: null, monthly_budget: null, daily_budget: null, allowed_models: null, rules: DEFAULT_RULES, labels: {} }) as AttrsOf[K];
}

function createOf<K extends Kind>(want: StateObject<K>): Change<K> {
  const changes = fieldChanges(baseline(want.kind, want.attrs), want.attrs).map(({ field, new: value }) => ({ field, new: value }));
  return { op: 'create', kind: want.kind, id: want.id, before: null, after: want.attrs, changes, owner: MANAGED_VALUE, serverId: '' };
}

function deleteOf<K extends Kind>(have: StateObject<K>): Change<K> {
  return { op: 'delete', kind: have.kind, id: have.id, before: have.attrs, after: null, changes: [], owner: have.owner, serverId: have.serverId };
}

function updateOf<K extends Kind>(have: StateObject<K>, want: StateObject<K>): Change<K> | null {
  const changes = fieldChanges(have.attrs, want.attrs);
  if (changes.length === 0) return null;
  if (have.kind === 'policy' && changes.some((c) => c.field === 'tenant_id')) {
    const from = (have.attrs as AttrsOf['policy']).tenant_id ?? 'none (global)';
    const to = (want.attrs as AttrsOf['policy']).tenant_id ?? 'none (global)';
    throw new PlanError(
      `policy "${have.id}" belongs to tenant ${from} on the gateway but the file gives tenant_id ${to}; a policy's tenant_id cannot change, so use a new policy id`,
    );
  }
  return { op: 'update', kind: have.kind, id: have.id, before: have.attrs, after: want.attrs, changes, owner: have.owner, serverId: have.serverId };
}

/** The changes that take `live` to `desired`, unordered (see order.ts). */
export function diffStates(desired: State, live: State, opts: DiffOptions): Change[] {
  const out: Change[] = [];
  for (const kind of KINDS) {
    const want = desired[kind] as Map<string, StateObject>;
    const have = live[kind] as Map<string, StateObject>;
    if (opts.mode === 'destroy') {
      for (const id of want.keys()) {
        const h = have.get(id);
        if (h) out.push(deleteOf(h));
      }
      continue;
    }
    for (const [id, w] of want) {
      const h = have.get(id);
      if (!h) out.push(createOf(w));
      else {
        const u = updateOf(h, w);
        if (u) out.push(u);
      }
    }
    if (opts.prune) {
      for (const [id, h] of have) if (isManaged(h.owner) && !want.has(id)) out.push(deleteOf(h));
    }
  }
  return out;
}
