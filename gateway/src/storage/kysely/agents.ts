import type { Kysely } from 'kysely';
import type { Agent } from '../../contract/index.js';
import type { Database } from '../schema.js';
import type { PageQuery, StoredAgent } from '../store.js';
import { now, pageOf, usdOrNull } from './common.js';

function toAgent(r: Database['agents']): Agent {
  return {
    id: r.id,
    name: r.name,
    tenant_id: r.tenant_id,
    policy_id: r.policy_id,
    labels: JSON.parse(r.labels),
    suspended: Number(r.suspended) === 1,
    key_prefix: r.key_prefix,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function createAgent(
  db: Kysely<Database>,
  a: Omit<StoredAgent, 'created_at' | 'updated_at' | 'suspended'> & { suspended?: boolean },
): Promise<Agent> {
  const ts = now();
  const { suspended, ...fields } = a;
  const row = { ...fields, labels: JSON.stringify(a.labels), suspended: suspended ? 1 : 0, created_at: ts, updated_at: ts };
  await db.insertInto('agents').values(row).execute();
  return toAgent(row);
}
export async function getAgent(db: Kysely<Database>, id: string, lock = false) {
  const r = await db.selectFrom('agents').selectAll().where('id', '=', id).$if(lock, (q) => q.forUpdate()).executeTakeFirst();
  return r && toAgent(r);
}
export function listAgents(db: Kysely<Database>, q: PageQuery & { tenant_id?: string }) {
  return pageOf(db, 'agents', q, toAgent, true);
}
export async function updateAgent(
  db: Kysely<Database>,
  id: string,
  patch: { name?: string; policy_id?: string | null; labels?: Agent['labels']; suspended?: boolean },
) {
  const set: Partial<Database['agents']> = { updated_at: now() };
  if (patch.suspended !== undefined) set.suspended = patch.suspended ? 1 : 0;
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.policy_id !== undefined) set.policy_id = patch.policy_id;
  if (patch.labels !== undefined) set.labels = JSON.stringify(patch.labels);
  await db.updateTable('agents').set(set).where('id', '=', id).execute();
  return getAgent(db, id);
}
export async function setAgentKey(db: Kysely<Database>, id: string, key_hash: string, key_prefix: string) {
  const r = await db.updateTable('agents').set({ key_hash, key_prefix, updated_at: now() }).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
export async function deleteAgent(db: Kysely<Database>, id: string) {
  const r = await db.deleteFrom('agents').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
export async function allAgents(db: Kysely<Database>): Promise<StoredAgent[]> {
  // With its tenant's budgets: the snapshot then holds them, so a change applies to the next request on every node.
  const rows = await db
    .selectFrom('agents')
    .leftJoin('tenants', 'tenants.id', 'agents.tenant_id')
    .selectAll('agents')
    .select(['tenants.monthly_budget as tenant_monthly_budget', 'tenants.daily_budget as tenant_daily_budget'])
    .execute();
  return rows.map(({ tenant_monthly_budget, tenant_daily_budget, ...r }) => ({
    ...toAgent(r),
    key_hash: r.key_hash,
    tenant_budget: { monthly_budget: usdOrNull(tenant_monthly_budget), daily_budget: usdOrNull(tenant_daily_budget) },
  }));
}
