import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { KIND_LIST } from '../../kinds/index.js';
import type { Attrs, KindDescriptor } from '../../kinds/descriptor.js';
import { keyOf, overDefault } from '../../kinds/values.js';
import { LABELS_FIELD, MANAGED_VALUE, ownerOf, withoutOwnership } from './ownership.js';
import { emptyState, type State } from './types.js';

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
      out[f.name] = structuredClone(value);
      continue;
    }
    // the file leaves the live value alone; what no default predicts is never compared either
    if (value === undefined && (f.default === undefined || (side === 'file' && f.unmanagedWhenAbsent))) continue;
    const filled = overDefault(value, f.default);
    out[f.name] = f.name === LABELS_FIELD ? withoutOwnership(filled as Record<string, string>) : filled;
  }
  return out;
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

/** The gateway's objects, normalised the same way as the file's. */
export function liveState(live: LiveObjects): State {
  const state = emptyState();
  for (const d of KIND_LIST) {
    for (const entity of live[d.section]) {
      const attrs = normaliseAttrs(d, entity, 'live');
      const id = keyOf(d, attrs);
      const labels = entity[LABELS_FIELD] as Record<string, string> | undefined;
      state[d.kind].set(id, { kind: d.kind, id, attrs, owner: ownerOf(labels), serverId: String(entity.id) });
    }
  }
  return state;
}
