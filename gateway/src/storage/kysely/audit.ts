import type { Kysely } from 'kysely';
import type { AuditEntry } from '../../contract/index.js';
import type { Database } from '../schema.js';
import type { AuditFilter, AuditRecord, Page } from '../store.js';
import { decodeCursor, encodeCursor, utc } from './common.js';

const json = (v: Record<string, unknown> | null) => (v === null ? null : JSON.stringify(v));

function toEntry(r: Database['audit_log']): AuditEntry {
  return {
    id: r.id,
    at: r.at,
    actor: { kind: r.actor_kind as AuditEntry['actor']['kind'], id: r.actor_id, name: r.actor_name },
    action: r.action,
    object: { kind: r.object_kind as AuditEntry['object']['kind'], id: r.object_id },
    before: r.before === null ? null : JSON.parse(r.before),
    after: r.after === null ? null : JSON.parse(r.after),
    request_id: r.request_id,
    change_id: r.change_id,
  };
}

export async function appendAudit(db: Kysely<Database>, e: AuditRecord): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      id: e.id,
      at: e.at,
      actor_kind: e.actor.kind,
      actor_id: e.actor.id,
      actor_name: e.actor.name,
      action: e.action,
      object_kind: e.object.kind,
      object_id: e.object.id,
      tenant_id: e.tenant_id,
      before: json(e.before),
      after: json(e.after),
      request_id: e.request_id,
      change_id: e.change_id,
    })
    .execute();
}

/** Newest first; the cursor is the (at, id) of the last entry of the page. */
export async function listAudit(db: Kysely<Database>, f: AuditFilter): Promise<Page<AuditEntry>> {
  let q = db.selectFrom('audit_log').selectAll();
  if (f.since !== undefined) q = q.where('at', '>=', utc(f.since));
  if (f.until !== undefined) q = q.where('at', '<', utc(f.until));
  if (f.actor !== undefined) {
    const actor = f.actor;
    q = q.where((eb) => eb.or([eb('actor_id', '=', actor), eb('actor_name', '=', actor)]));
  }
  if (f.kind !== undefined) q = q.where('object_kind', '=', f.kind);
  if (f.object_id !== undefined) q = q.where('object_id', '=', f.object_id);
  if (f.tenant_id !== undefined) q = q.where('tenant_id', '=', f.tenant_id);
  if (f.cursor) {
    const [at, id] = decodeCursor(f.cursor);
    q = q.where((eb) => eb.or([eb('at', '<', at!), eb.and([eb('at', '=', at!), eb('id', '<', id!)])]));
  }
  const rows = await q.orderBy('at', 'desc').orderBy('id', 'desc').limit(f.limit + 1).execute();
  const more = rows.length > f.limit;
  const data = rows.slice(0, f.limit);
  const last = data[data.length - 1];
  return { data: data.map(toEntry), next_cursor: more && last ? encodeCursor([last.at, last.id]) : null };
}
