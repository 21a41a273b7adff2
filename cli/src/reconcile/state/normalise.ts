import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { KIND_LIST } from '../../kinds/index.js';
import type { Attrs, Field, KindDescriptor } from '../../kinds/descriptor.js';
import { isPlainObject, keyOf, overDefault } from '../../kinds/values.js';
import { LABELS_FIELD, MANAGED_VALUE, ownerOf, withoutOwnership } from './ownership.js';
import { emptyState, type State } from './types.js';

/** What a live object that needs an admin key is to a tenant_admin key. */
export const NEEDS_ADMIN = 'is written by admin keys only, and this key has the tenant_admin role';

/** The live objects as the dump stage fetched them, by section. */
export type LiveObjects = { [S in keyof Omit<DeclarativeFile, 'version'>]: Attrs[] };

/**
 * The declared fields of one object with every default filled in, exactly as the server would store them.
 * A field marked `unmanagedWhenAbsent` that the source leaves out stays out: it is never compared.
 */
export function normaliseAttrs(d: KindDescriptor, source: Attrs, side: 'file' | 'live'): Attrs {
  const out: Attrs = {};
  for (const f of d.fields) {
    const value = source[f.name];
    if (f.identity || !f.optional) {
      out[f.name] = withItemDefaults(f, structuredClone(value));
      continue;
    }
    // the file leaves the live value alone; what no default predicts is never compared either
    if (value === undefined && (f.default === undefined || (side === 'file' && f.unmanagedWhenAbsent))) continue;
    const filled = overDefault(value, f.default);
    out[f.name] = f.name === LABELS_FIELD ? withoutOwnership(filled as Record<string, string>) : filled;
  }
  return out;
}

/** A list of objects (a route's targets) with each item's defaults filled in, so that they never show as changes. */
function withItemDefaults(f: Field, value: unknown): unknown {
  if (f.shape.type !== 'list' || f.shape.item.type !== 'object' || !Array.isArray(value)) return value;
  const fields = f.shape.item.fields;
  return value.map((item) => {
    if (!isPlainObject(item)) return item;
    const out: Attrs = {};
    for (const child of fields) {
      const v = item[child.name];
      if (v !== undefined) out[child.name] = v;
      else if (child.default !== undefined) out[child.name] = structuredClone(child.default);
    }
    for (const [k, v] of Object.entries(item)) if (!(k in out)) out[k] = v;
    return out;
  });
}

/** The file's objects with every default filled in. */
export function desiredState(file: DeclarativeFile): State {
  const state = emptyState();
  for (const d of KIND_LIST) {
    for (const entry of file[d.section] as Attrs[]) {
      const attrs = normaliseAttrs(d, entry, 'file');
      const id = keyOf(d, attrs);
      state[d.kind].set(id, { kind: d.kind, id, attrs, owner: MANAGED_VALUE, serverId: '' });
    }
  }
  return state;
}

/**
 * The gateway's objects, normalised the same way as the file's. For a key of `role` tenant_admin, objects that only an
 * admin key may write (tenants, routes, global policies) are read-only: its plans never change, prune or destroy them.
 */
export function liveState(live: LiveObjects, role?: string): State {
  const state = emptyState();
  for (const d of KIND_LIST) {
    for (const entity of live[d.section]) {
      const attrs = normaliseAttrs(d, entity, 'live');
      const id = keyOf(d, attrs);
      const labels = entity[LABELS_FIELD] as Record<string, string> | undefined;
      // Kinds without a server id of their own (routes) are addressed by their identity.
      const readOnly = d.readOnlyReason(entity);
      const needsAdmin = !readOnly && role === 'tenant_admin' && d.adminOnly(entity);
      const object = { kind: d.kind, id, attrs, owner: ownerOf(labels), serverId: String(entity.id ?? id) };
      state[d.kind].set(id, readOnly ? { ...object, readOnly } : needsAdmin ? { ...object, readOnly: NEEDS_ADMIN, needsAdmin } : object);
    }
  }
  return state;
}
