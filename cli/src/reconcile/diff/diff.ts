import { KINDS, KIND_LIST } from '../../kinds/index.js';
import type { Attrs, KindDescriptor } from '../../kinds/descriptor.js';
import { unorderedPaths } from '../../kinds/values.js';
import { NEEDS_ADMIN } from '../state/normalise.js';
import { isManaged, MANAGED_VALUE } from '../state/ownership.js';
import type { Kind, State, StateObject } from '../state/types.js';
import type { Change } from './change.js';
import { fieldChanges } from './field-changes.js';
import { PlanError } from './plan-error.js';

export interface DiffOptions {
  /** `sync` makes the gateway match the file; `destroy` deletes what the file names. */
  mode: 'sync' | 'destroy';
  /** In sync mode, also delete managed objects the file no longer names. */
  prune?: boolean;
  /** The admin key's role (planChanges asks the gateway): a tenant_admin key's file may not create what needs an admin key. */
  role?: string;
}

const UNORDERED = Object.fromEntries(KIND_LIST.map((d) => [d.kind, unorderedPaths(d)])) as Record<Kind, Set<string>>;

/** What an object looks like before any field is set: a create shows only the fields that differ from it. */
function baseline(d: KindDescriptor, after: Attrs): Attrs {
  const out: Attrs = {};
  // in the order of `after`, so a create lists its fields as the contract orders them
  for (const f of d.fields) {
    if (!(f.name in after)) continue;
    out[f.name] = f.identity ? after[f.name] : f.default;
  }
  return out;
}

function createOf(want: StateObject): Change {
  const d = KINDS[want.kind];
  const changes = fieldChanges(baseline(d, want.attrs), want.attrs, '', UNORDERED[want.kind]).map(({ field, new: value }) => ({ field, new: value }));
  return { op: 'create', kind: want.kind, id: want.id, before: null, after: want.attrs, changes, owner: MANAGED_VALUE, serverId: '' };
}

function deleteOf(have: StateObject): Change {
  return { op: 'delete', kind: have.kind, id: have.id, before: have.attrs, after: null, changes: [], owner: have.owner, serverId: have.serverId };
}

/** The live fields the file manages: one it leaves out on purpose (unmanagedWhenAbsent) is not compared. */
function managedPart(have: Attrs, want: Attrs): Attrs {
  return Object.fromEntries(Object.entries(have).filter(([k]) => k in want));
}

const shown = (v: unknown) => (v === null || v === undefined ? 'none' : JSON.stringify(v));

/**
 * A live object the admin interface cannot write (a route of the server config), or that this key may not (a tenant for
 * a tenant_admin key): the file may name it only as it is.
 */
function readOnlyError(have: Pick<StateObject, 'kind' | 'id' | 'readOnly' | 'needsAdmin'>, what: string): PlanError {
  const fix = have.needsAdmin ? 'plan and apply it with an admin key' : `use another ${KINDS[have.kind].identity.join(' and ')}`;
  return new PlanError(`${have.kind} "${have.id}" ${have.readOnly}; the file ${what} it, so remove it from the file or ${fix}`, {
    kind: have.kind,
    id: have.id,
  });
}

function updateOf(have: StateObject, want: StateObject): Change | null {
  const d = KINDS[have.kind];
  const changes = fieldChanges(managedPart(have.attrs, want.attrs), want.attrs, '', UNORDERED[have.kind]);
  if (changes.length === 0) return null;
  if (have.readOnly) throw readOnlyError(have, 'changes');
  for (const f of d.fields) {
    if (f.identity || !f.immutable || !changes.some((c) => c.field === f.name || c.field.startsWith(`${f.name}.`))) continue;
    throw new PlanError(
      `${d.kind} "${have.id}" has ${f.name} ${shown(have.attrs[f.name])} on the gateway but the file gives ${shown(want.attrs[f.name])}; ` +
        `a ${d.kind}'s ${f.name} cannot change, so use a new ${d.identity.join(' and ')}`,
      { kind: d.kind, id: have.id, field: f.name },
    );
  }
  return { op: 'update', kind: have.kind, id: have.id, before: have.attrs, after: want.attrs, changes, owner: have.owner, serverId: have.serverId };
}

/** The changes that take `live` to `desired`, unordered (see order.ts). */
export function diffStates(desired: State, live: State, opts: DiffOptions): Change[] {
  const out: Change[] = [];
  for (const { kind } of KIND_LIST) {
    const want = desired[kind] as Map<string, StateObject>;
    const have = live[kind] as Map<string, StateObject>;
    if (opts.mode === 'destroy') {
      for (const id of want.keys()) {
        const h = have.get(id);
        // Written by admin keys only: a tenant_admin key's destroy leaves it, as its --prune does.
        if (h?.needsAdmin) continue;
        if (h?.readOnly) throw readOnlyError(h, 'would delete');
        if (h) out.push(deleteOf(h));
      }
      continue;
    }
    for (const [id, w] of want) {
      const h = have.get(id);
      if (!h && opts.role === 'tenant_admin' && KINDS[kind].adminOnly(w.attrs)) throw readOnlyError({ kind, id, readOnly: NEEDS_ADMIN, needsAdmin: true }, 'creates');
      if (!h) out.push(createOf(w));
      else {
        const u = updateOf(h, w);
        if (u) out.push(u);
      }
    }
    if (opts.prune) {
      for (const [id, h] of have) if (isManaged(h.owner) && !h.readOnly && !want.has(id)) out.push(deleteOf(h));
    }
  }
  return out;
}
