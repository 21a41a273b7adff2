import type { Kysely } from 'kysely';
import type { AdminKey, Role } from '../../contract/index.js';
import type { Database } from '../schema.js';
import type { PageQuery, StoredAdminKey } from '../store.js';
import { now, pageOf } from './common.js';

function toAdminKey(r: Database['admin_keys']): StoredAdminKey {
  return {
    id: r.id,
    name: r.name,
    role: r.role as Role,
    tenant_id: r.tenant_id,
    key_prefix: r.key_prefix,
    key_hash: r.key_hash,
    created_at: r.created_at,
  };
}

export async function createAdminKey(db: Kysely<Database>, k: StoredAdminKey): Promise<AdminKey> {
  await db.insertInto('admin_keys').values(k).execute();
  const { key_hash: _omit, ...pub } = k;
  return pub;
}
export async function upsertRootKey(db: Kysely<Database>, key_hash: string, key_prefix: string) {
  const updated = await db.updateTable('admin_keys').set({ key_hash, key_prefix }).where('id', '=', 'root').executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) {
    await db
      .insertInto('admin_keys')
      .values({ id: 'root', name: 'root', role: 'admin', tenant_id: null, key_prefix, key_hash, created_at: now() })
      .execute();
  }
}
export async function getAdminKey(db: Kysely<Database>, id: string): Promise<AdminKey | undefined> {
  const r = await db.selectFrom('admin_keys').selectAll().where('id', '=', id).executeTakeFirst();
  if (!r) return undefined;
  const { key_hash: _omit, ...pub } = toAdminKey(r);
  return pub;
}
export async function findAdminKeyByHash(db: Kysely<Database>, hash: string) {
  const r = await db.selectFrom('admin_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
  return r && toAdminKey(r);
}
export function listAdminKeys(db: Kysely<Database>, q: PageQuery & { tenant_id?: string }) {
  return pageOf(db, 'admin_keys', q, (r) => {
    const { key_hash: _omit, ...pub } = toAdminKey(r);
    return pub;
  }, true);
}
export async function deleteAdminKey(db: Kysely<Database>, id: string) {
  const r = await db.deleteFrom('admin_keys').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
export async function hasAdminKeyWithRole(db: Kysely<Database>, role: Role) {
  return !!(await db.selectFrom('admin_keys').select('id').where('role', '=', role).limit(1).executeTakeFirst());
}
