import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { now } from './common.js';

export async function getIdempotent(db: Kysely<Database>, key_hash: string, notBefore: string) {
  return db
    .selectFrom('idempotency')
    .select(['scope', 'request_hash', 'response'])
    .where('key_hash', '=', key_hash)
    .where('created_at', '>=', notBefore)
    .executeTakeFirst();
}
export async function putIdempotent(db: Kysely<Database>, row: { key_hash: string; scope: string; request_hash: string; response: string }) {
  const cutoff = new Date(Date.now() - 24 * 3600_000).toISOString();
  await db.deleteFrom('idempotency').where('created_at', '<', cutoff).execute();
  // A conflict is another request's row: answered as false, never as an error (one fails a PostgreSQL transaction whole).
  const r = await db.insertInto('idempotency').values({ ...row, created_at: now() }).onConflict((oc) => oc.column('key_hash').doNothing()).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}
