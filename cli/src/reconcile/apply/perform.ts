import { ignoreNotFound } from '../../admin-client/admin-client.js';
import { KINDS } from '../../kinds/index.js';
import type { Attrs, KindClient, KindDescriptor } from '../../kinds/descriptor.js';
import { deepEqual } from '../diff/field-changes.js';
import type { Change } from '../diff/change.js';
import { LABELS_FIELD, withOwnership } from '../state/ownership.js';

/** What the apply stage needs of the admin client. */
export type ApplyClient = KindClient;

/** The outcome of one change; `apiKey` only for a created agent (the secret the server shows once). */
export interface Performed {
  apiKey?: string;
}

/** Top-level fields an update touches (`rules.pii` -> `rules`). */
function touched(change: Change): Set<string> {
  return new Set(change.changes.map((c) => c.field.split('.')[0]));
}

/** A field's value as sent: labels replace the whole map, so the ownership marker is written back as it was (set on create). */
function sendable(change: Change, name: string, value: unknown): unknown {
  return name === LABELS_FIELD ? withOwnership((value ?? {}) as Record<string, string>, change.owner) : value;
}

async function create(client: ApplyClient, d: KindDescriptor, change: Change): Promise<Performed> {
  const after = change.after as Attrs;
  const body: Attrs = {};
  const later: Attrs = {};
  for (const f of d.fields) {
    if (!(f.name in after)) continue;
    const value = sendable(change, f.name, after[f.name]);
    if (f.onCreate) body[f.name] = value;
    // a field the create body lacks is set right after, unless it already has the server's default
    else if (f.onUpdate && !deepEqual(value, f.default)) later[f.name] = value;
  }
  const created = await d.api.create(client, body, change.id);
  if (Object.keys(later).length > 0) await d.api.update(client, String(created.id), later);
  const secret = d.secrets.map((s) => created[s]).find((v) => typeof v === 'string');
  return secret ? { apiKey: secret as string } : {};
}

async function update(client: ApplyClient, d: KindDescriptor, change: Change): Promise<Performed> {
  const after = change.after as Attrs;
  const fields = touched(change);
  const patch: Attrs = {};
  for (const f of d.fields) if (f.onUpdate && fields.has(f.name)) patch[f.name] = sendable(change, f.name, after[f.name]);
  await d.api.update(client, change.serverId, patch);
  return {};
}

/** Carries out one change through the admin interface. */
export async function perform(client: ApplyClient, change: Change): Promise<Performed> {
  const d = KINDS[change.kind];
  if (change.op === 'delete') {
    await ignoreNotFound(d.api.delete(client, change.serverId));
    return {};
  }
  return change.op === 'create' ? create(client, d, change) : update(client, d, change);
}
