import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.js';
import { isUniqueViolation } from '../store-errors.js';

export async function getSetting(db: Kysely<Database>, key: string) {
  return (await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst())?.value;
}
export async function setSetting(db: Kysely<Database>, key: string, value: string) {
  const r = await db.updateTable('settings').set({ value }).where('key', '=', key).executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) {
    try {
      await db.insertInto('settings').values({ key, value }).execute();
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      await db.updateTable('settings').set({ value }).where('key', '=', key).execute();
    }
  }
}
export async function settingsWithPrefix(db: Kysely<Database>, prefix: string) {
  const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return db.selectFrom('settings').select(['key', 'value']).where(sql<boolean>`key like ${pattern} escape '\\'`).execute();
}
export async function deleteSetting(db: Kysely<Database>, key: string) {
  await db.deleteFrom('settings').where('key', '=', key).execute();
}
export async function initSetting(db: Kysely<Database>, key: string, value: string) {
  try {
    await db.insertInto('settings').values({ key, value }).execute();
    return value;
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    return (await getSetting(db, key))!;
  }
}
