import type { Kysely } from 'kysely';
import type { Tenant } from '../../contract/index.js';
import type { Database } from '../schema.js';
import type { PageQuery } from '../store.js';
import { deleteChecked, inTransaction, now, pageOf, usdOrNull } from './common.js';

function toTenant(r: Database['tenants']): Tenant {
  return {
    id: r.id,
    name: r.name,
    labels: JSON.parse(r.labels),
    monthly_budget: usdOrNull(r.monthly_budget),
    daily_budget: usdOrNull(r.daily_budget),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function createTenant(
  db: Kysely<Database>,
  t: Pick<Tenant, 'id' | 'name' | 'labels'> & Partial<Pick<Tenant, 'monthly_budget' | 'daily_budget'>>,
): Promise<Tenant> {
  const ts = now();
  const budgets = { monthly_budget: t.monthly_budget ?? null, daily_budget: t.daily_budget ?? null };
  const row = { id: t.id, name: t.name, labels: JSON.stringify(t.labels), ...budgets, created_at: ts, updated_at: ts };
  await db.insertInto('tenants').values(row).execute();
  return toTenant(row);
}
/** `lock`: in a transaction that will write the row, take its lock now (PostgreSQL), so what is read stays what it is. */
export async function getTenant(db: Kysely<Database>, id: string, lock = false) {
  const r = await db.selectFrom('tenants').selectAll().where('id', '=', id).$if(lock, (q) => q.forUpdate()).executeTakeFirst();
  return r && toTenant(r);
}
export function listTenants(db: Kysely<Database>, q: PageQuery & { tenant_id?: string }) {
  return pageOf(db, 'tenants', q, toTenant, false);
}
export async function updateTenant(
  db: Kysely<Database>,
  id: string,
  patch: { name?: string; labels?: Tenant['labels']; monthly_budget?: number | null; daily_budget?: number | null },
) {
  const set: Partial<Database['tenants']> = { updated_at: now() };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.labels !== undefined) set.labels = JSON.stringify(patch.labels);
  if (patch.monthly_budget !== undefined) set.monthly_budget = patch.monthly_budget;
  if (patch.daily_budget !== undefined) set.daily_budget = patch.daily_budget;
  await db.updateTable('tenants').set(set).where('id', '=', id).execute();
  return getTenant(db, id);
}
export async function deleteTenant(db: Kysely<Database>, id: string): Promise<'deleted' | 'missing' | 'not_empty'> {
  // An agent or policy created for it between the check and the delete (another node, PostgreSQL) still holds it.
  return deleteChecked(() => inTransaction(db, async (tx) => {
    const t = await tx.selectFrom('tenants').select('id').where('id', '=', id).executeTakeFirst();
    if (!t) return 'missing';
    const a = await tx.selectFrom('agents').select('id').where('tenant_id', '=', id).limit(1).executeTakeFirst();
    const p = await tx.selectFrom('policies').select('id').where('tenant_id', '=', id).limit(1).executeTakeFirst();
    if (a || p) return 'not_empty';
    await tx.deleteFrom('admin_keys').where('tenant_id', '=', id).execute();
    await tx.deleteFrom('tenants').where('id', '=', id).execute();
    return 'deleted' as const;
  }), 'not_empty');
}
