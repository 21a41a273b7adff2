import { KIND_LIST } from '../kinds/index.js';
import { referenceFields } from '../kinds/values.js';
import type { Change } from './diff/change.js';
import type { Kind } from './state/types.js';

/**
 * The one dependency table, read from the kinds' references: a policy belongs to a tenant;
 * an agent to a tenant and a policy.
 */
export const DEPENDS_ON: Readonly<Record<Kind, readonly Kind[]>> = Object.fromEntries(
  KIND_LIST.map((d) => [d.kind, [...new Set(referenceFields(d).map((f) => f.references!))]]),
) as Record<Kind, Kind[]>;

/** Kinds with every dependency before its dependants, derived from DEPENDS_ON. */
export function kindOrder(table: Readonly<Record<Kind, readonly Kind[]>> = DEPENDS_ON): Kind[] {
  const out: Kind[] = [];
  const visiting = new Set<Kind>();
  const visit = (k: Kind) => {
    if (out.includes(k)) return;
    if (visiting.has(k)) throw new Error(`dependency cycle at ${k}`);
    visiting.add(k);
    for (const dep of table[k]) visit(dep);
    visiting.delete(k);
    out.push(k);
  };
  for (const k of Object.keys(table) as Kind[]) visit(k);
  return out;
}

/**
 * Creates and updates run dependencies first; deletes run afterwards in reverse,
 * so an agent moves off a policy before that policy is deleted.
 */
export function orderChanges(changes: Change[]): Change[] {
  const forward = kindOrder();
  const rank = (kinds: Kind[], c: Change) => kinds.indexOf(c.kind);
  const byId = (a: Change, b: Change) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const upserts = changes
    .filter((c) => c.op !== 'delete')
    .sort((a, b) => rank(forward, a) - rank(forward, b) || byId(a, b));
  const reverse = [...forward].reverse();
  const deletes = changes
    .filter((c) => c.op === 'delete')
    .sort((a, b) => rank(reverse, a) - rank(reverse, b) || byId(a, b));
  return [...upserts, ...deletes];
}
