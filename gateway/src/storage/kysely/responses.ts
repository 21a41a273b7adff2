import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { StoredResponse } from '../store.js';
import { utc } from './common.js';

export async function putResponse(db: Kysely<Database>, r: StoredResponse) {
  // Column by column: a caller's richer object (a StoredResponse and more) never names a column that does not exist.
  const { id, tenant_id, agent_id, trace_id, request_id, model, provider_type, created_at, input, response } = r;
  await db.insertInto('responses').values({ id, tenant_id, agent_id, trace_id, request_id, model, provider_type, created_at, input, response }).execute();
}
export async function getResponse(db: Kysely<Database>, id: string) {
  return db.selectFrom('responses').selectAll().where('id', '=', id).executeTakeFirst();
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
