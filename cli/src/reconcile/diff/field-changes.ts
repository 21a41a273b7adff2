import { KIND_LIST } from '../../kinds/index.js';
import { isPlainObject, unorderedPaths } from '../../kinds/values.js';

/** One field that differs; `old` is absent on a create, `new` absent when a label goes away. */
export interface FieldChange {
  field: string;
  old?: unknown;
  new?: unknown;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** Lists whose order carries no meaning, in any kind (each kind's descriptor says which): a different order is not a change. */
export const UNORDERED_FIELDS: ReadonlySet<string> = new Set(KIND_LIST.flatMap((d) => [...unorderedPaths(d)]));

function sameLeaf(field: string, a: unknown, b: unknown, unordered: ReadonlySet<string>): boolean {
  if (unordered.has(field) && Array.isArray(a) && Array.isArray(b)) {
    return deepEqual([...a].map(String).sort(), [...b].map(String).sort());
  }
  return deepEqual(a, b);
}

/**
 * Field-level differences: nested objects present on both sides are walked (rules.pii, labels.team);
 * arrays, nulls and scalars are compared whole.
 */
export function fieldChanges(before: unknown, after: unknown, prefix = '', unordered: ReadonlySet<string> = UNORDERED_FIELDS): FieldChange[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((k) => {
      const field = prefix ? `${prefix}.${k}` : k;
      if (!(k in after)) return [{ field, old: before[k] }];
      if (!(k in before)) return isPlainObject(after[k]) && Object.keys(after[k]).length > 0
        ? fieldChanges({}, after[k], field, unordered)
        : [{ field, new: after[k] }];
      return fieldChanges(before[k], after[k], field, unordered);
    });
  }
  if (sameLeaf(prefix, before, after, unordered)) return [];
  return [{ field: prefix, old: before, new: after }];
}
