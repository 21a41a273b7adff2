import type { Attrs, Field, KindDescriptor } from './descriptor.js';

/** The identity of an object as the file names it: `acme`, `acme/support-bot`. */
export function keyOf(d: KindDescriptor, attrs: Attrs): string {
  return d.identity.map((f) => String(attrs[f] ?? '')).join('/');
}

/** Identity field values from a key (`acme/bot` -> {tenant_id: acme, name: bot}); null when it does not fit. */
export function identityOf(d: KindDescriptor, key: string): Attrs | null {
  if (d.identity.length === 1) return { [d.identity[0]]: key };
  const parts = key.split('/');
  if (parts.length !== d.identity.length || parts.some((p) => p === '')) return null;
  return Object.fromEntries(d.identity.map((f, i) => [f, parts[i]]));
}

/** Dotted paths of the lists whose order carries no meaning. */
export function unorderedPaths(d: KindDescriptor): Set<string> {
  const out = new Set<string>();
  const walk = (fields: readonly Field[]) => {
    for (const f of fields) {
      if (f.unordered) out.add(f.path);
      if (f.shape.type === 'object') walk(f.shape.fields);
    }
  };
  walk(d.fields);
  return out;
}

/** Fields that hold the id of another kind's object. */
export function referenceFields(d: KindDescriptor): Field[] {
  return d.fields.filter((f) => f.references !== undefined);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A value over its default: objects field by field (a rule left out keeps its default), anything else whole. */
export function overDefault(value: unknown, fallback: unknown): unknown {
  if (value === undefined) return structuredClone(fallback);
  if (isPlainObject(value) && isPlainObject(fallback)) {
    const out: Record<string, unknown> = structuredClone(fallback);
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = structuredClone(v);
    return out;
  }
  return structuredClone(value);
}

/** `snake_case` -> `camelCase`, as CDKTF names attributes. */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
