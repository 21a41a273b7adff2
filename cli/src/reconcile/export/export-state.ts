import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { KIND_LIST } from '../../kinds/index.js';
import type { Attrs, Field, KindDescriptor } from '../../kinds/descriptor.js';
import { isPlainObject, keyOf } from '../../kinds/values.js';
import { deepEqual } from '../diff/field-changes.js';
import type { LiveObjects } from '../state/normalise.js';
import { normaliseAttrs } from '../state/normalise.js';

/** Only what differs from its default: nested objects field by field, so the file stays short and still plans no changes. */
function exported(f: Field, value: unknown): unknown {
  if (f.identity || f.default === undefined) return value;
  if (deepEqual(value, f.default)) return undefined;
  if (f.shape.type === 'object' && isPlainObject(value) && isPlainObject(f.default)) {
    const out: Attrs = {};
    for (const child of f.shape.fields) {
      const v = exported(child, value[child.name]);
      if (v !== undefined) out[child.name] = v;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return value;
}

/** One object as the file writes it: identity first, then the fields that differ from their defaults. */
function entry(d: KindDescriptor, attrs: Attrs): Attrs {
  const out: Attrs = {};
  const ordered = [...d.fields.filter((f) => f.identity), ...d.fields.filter((f) => !f.identity)];
  for (const f of ordered) {
    const v = exported(f, attrs[f.name]);
    if (v !== undefined) out[f.name] = v;
  }
  return out;
}

/**
 * Live state as a declarative file that plans no changes when applied back.
 * Ownership labels are left out (apply manages them) and agents' keys never exist in live state.
 */
export function exportDeclarative(live: LiveObjects): DeclarativeFile {
  const file = { version: 1 } as DeclarativeFile;
  for (const d of KIND_LIST) {
    // Objects the admin interface cannot write (routes of the server config) stay where they are defined.
    const objects = live[d.section].filter((o) => d.readOnlyReason(o) === null).map((o) => normaliseAttrs(d, o, 'live'));
    objects.sort((a, b) => keyOf(d, a).localeCompare(keyOf(d, b)));
    (file as unknown as Record<string, Attrs[]>)[d.section] = objects.map((a) => entry(d, a));
  }
  return file;
}
