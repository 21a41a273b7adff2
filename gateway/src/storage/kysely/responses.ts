import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { StoredResponse } from '../store.js';
import { utc } from './common.js';

/** Column by column: a caller's richer object (a StoredResponse and more) never names a column that does not exist. */
function row(r: StoredResponse) {
  const { id, tenant_id, agent_id, trace_id, request_id, model, provider_type, created_at, input, response } = r;
  return { id, tenant_id, agent_id, trace_id, request_id, model, provider_type, created_at, input, response, not_stored: r.not_stored ?? null };
}

export async function putResponse(db: Kysely<Database>, r: StoredResponse) {
  await db.insertInto('responses').values(row(r)).execute();
}

/**
 * The mark of a response that could not be stored. A row of that id (a write that timed out, yet reached the server and
 * committed once it ran again) becomes the mark: the client was told the response was not stored, and reads say so.
 */
export async function putResponseMark(db: Kysely<Database>, mark: StoredResponse) {
  const { input, response, not_stored } = row(mark);
  await db.insertInto('responses').values(row(mark)).onConflict((oc) => oc.column('id').doUpdateSet({ input, response, not_stored })).execute();
}
export async function getResponse(db: Kysely<Database>, id: string): Promise<StoredResponse | undefined> {
  const found = await db.selectFrom('responses').selectAll().where('id', '=', id).executeTakeFirst();
  if (!found) return undefined;
  // A stored response has no not_stored at all; a mark has its reason.
  const { not_stored, ...stored } = found;
  return not_stored === null ? stored : { ...stored, not_stored };
}
export async function deleteResponse(db: Kysely<Database>, id: string) {
  const r = await db.deleteFrom('responses').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
/** `batch`: stored responses deleted per statement. */
export async function sweepResponses(db: Kysely<Database>, before: string, batch: number) {
  const cutoff = utc(before);
  let total = 0;
  for (;;) {
    const deleted = await deleteResponsesBatch(db, cutoff, batch);
    total += deleted;
    if (deleted < batch) return total;
  }
}

/** One short transaction of the sweep, oldest rows first by the created_at index: other writers wait for no more than that. */
async function deleteResponsesBatch(db: Kysely<Database>, cutoff: string, batch: number): Promise<number> {
  const oldest = db.selectFrom('responses').select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(batch);
  const r = await db.deleteFrom('responses').where('id', 'in', oldest).executeTakeFirst();
  return Number(r.numDeletedRows);
}
