/** One field that differs; `old` is absent on a create, `new` absent when a label goes away. */
export interface FieldChange {
  field: string;
  old?: unknown;
  new?: unknown;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
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

/** Lists whose order carries no meaning: a different order is not a change. */
export const UNORDERED_FIELDS: ReadonlySet<string> = new Set(['allowed_models', 'rules.pii_types']);

function sameLeaf(field: string, a: unknown, b: unknown): boolean {
  if (UNORDERED_FIELDS.has(field) && Array.isArray(a) && Array.isArray(b)) {
    return deepEqual([...a].map(String).sort(), [...b].map(String).sort());
  }
  return deepEqual(a, b);
}

/**
 * Field-level differences: nested objects present on both sides are walked (rules.pii, labels.team);
 * arrays, nulls and scalars are compared whole.
 */
export function fieldChanges(before: unknown, after: unknown, prefix = ''): FieldChange[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((k) => {
      const field = prefix ? `${prefix}.${k}` : k;
      if (!(k in after)) return [{ field, old: before[k] }];
      if (!(k in before)) return isPlainObject(after[k]) && Object.keys(after[k]).length > 0
        ? fieldChanges({}, after[k], field)
        : [{ field, new: after[k] }];
      return fieldChanges(before[k], after[k], field);
    });
  }
  if (sameLeaf(prefix, before, after)) return [];
  return [{ field: prefix, old: before, new: after }];
}
