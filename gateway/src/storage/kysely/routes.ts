import type { Kysely } from 'kysely';
import type { Route, RouteStrategy, RouteTarget } from '../../contract/index.js';
import type { Database } from '../schema.js';
import type { RouteFields } from '../store.js';
import { now } from './common.js';

function toRoute(r: Database['routes']): Route {
  return {
    alias: r.alias,
    strategy: r.strategy as RouteStrategy,
    targets: JSON.parse(r.targets) as RouteTarget[],
    labels: JSON.parse(r.labels),
    source: 'api',
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function getRoute(db: Kysely<Database>, alias: string, lock = false): Promise<Route | undefined> {
  const r = await db.selectFrom('routes').selectAll().where('alias', '=', alias).$if(lock, (q) => q.forUpdate()).executeTakeFirst();
  return r && toRoute(r);
}

export async function putRoute(db: Kysely<Database>, alias: string, f: RouteFields): Promise<{ route: Route; created: boolean }> {
  const ts = now();
  const cols = { strategy: f.strategy, targets: JSON.stringify(f.targets), labels: JSON.stringify(f.labels), updated_at: ts };
  const updated = await db.updateTable('routes').set(cols).where('alias', '=', alias).executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return { route: (await getRoute(db, alias))!, created: false };
  // A conflict is a concurrent PUT that created it first (see putPolicy): update it instead.
  const inserted = await db.insertInto('routes').values({ alias, ...cols, created_at: ts }).onConflict((oc) => oc.column('alias').doNothing()).executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { route: (await getRoute(db, alias))!, created: true };
  await db.updateTable('routes').set(cols).where('alias', '=', alias).execute();
  return { route: (await getRoute(db, alias))!, created: false };
}

export async function deleteRoute(db: Kysely<Database>, alias: string): Promise<boolean> {
  const r = await db.deleteFrom('routes').where('alias', '=', alias).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Every stored route, by alias: the admin listing and the data plane's snapshot. */
export async function allRoutes(db: Kysely<Database>): Promise<Route[]> {
  return (await db.selectFrom('routes').selectAll().orderBy('alias').execute()).map(toRoute);
}
