import type { Kysely } from 'kysely';
import { DEFAULT_RULES, type Policy } from '../../contract/index.js';
import type { Database } from '../schema.js';
import type { PageQuery, PolicyFields } from '../store.js';
import { deleteChecked, inTransaction, now, pageOf } from './common.js';

// tool_rules live in the rules column's JSON (no column of their own): rows written before them read as null.
function toPolicy(r: Database['policies']): Policy {
  const { tool_rules = null, ...rules } = JSON.parse(r.rules) as Record<string, unknown> & { tool_rules?: Policy['tool_rules'] };
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    monthly_budget: r.monthly_budget === null ? null : Number(r.monthly_budget),
    daily_budget: r.daily_budget === null ? null : Number(r.daily_budget),
    allowed_models: r.allowed_models === null ? null : JSON.parse(r.allowed_models),
    allowed_tools: r.allowed_tools == null ? null : JSON.parse(r.allowed_tools),
    // Rules added by a later release read as their defaults in policies stored before it.
    rules: { ...DEFAULT_RULES, ...rules },
    tool_rules,
    labels: JSON.parse(r.labels),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function getPolicy(db: Kysely<Database>, id: string, lock = false) {
  const r = await db.selectFrom('policies').selectAll().where('id', '=', id).$if(lock, (q) => q.forUpdate()).executeTakeFirst();
  return r && toPolicy(r);
}
export async function putPolicy(db: Kysely<Database>, id: string, f: PolicyFields): Promise<{ policy: Policy; created: boolean }> {
  const ts = now();
  const cols = {
    tenant_id: f.tenant_id,
    monthly_budget: f.monthly_budget,
    daily_budget: f.daily_budget,
    allowed_models: f.allowed_models === null ? null : JSON.stringify(f.allowed_models),
    allowed_tools: f.allowed_tools == null ? null : JSON.stringify(f.allowed_tools),
    rules: JSON.stringify(f.tool_rules == null ? f.rules : { ...f.rules, tool_rules: f.tool_rules }),
    labels: JSON.stringify(f.labels),
    updated_at: ts,
  };
  const updated = await db.updateTable('policies').set(cols).where('id', '=', id).executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return { policy: (await getPolicy(db, id))!, created: false };
  // A conflict is a concurrent PUT that created it first: PUT is idempotent, so update instead. (Not caught as an
  // error: in a PostgreSQL transaction, one failed statement fails the whole transaction.)
  const inserted = await db.insertInto('policies').values({ id, ...cols, created_at: ts }).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { policy: (await getPolicy(db, id))!, created: true };
  await db.updateTable('policies').set(cols).where('id', '=', id).execute();
  return { policy: (await getPolicy(db, id))!, created: false };
}
export function listPolicies(db: Kysely<Database>, q: PageQuery & { tenant_id?: string }) {
  return pageOf(db, 'policies', q, toPolicy, true);
}
export async function deletePolicy(db: Kysely<Database>, id: string): Promise<'deleted' | 'missing' | 'in_use'> {
  return deleteChecked(() => inTransaction(db, async (tx) => {
    const p = await tx.selectFrom('policies').select('id').where('id', '=', id).executeTakeFirst();
    if (!p) return 'missing';
    const a = await tx.selectFrom('agents').select('id').where('policy_id', '=', id).limit(1).executeTakeFirst();
    if (a) return 'in_use';
    await tx.deleteFrom('policies').where('id', '=', id).execute();
    return 'deleted' as const;
  }), 'in_use');
}
export async function allPolicies(db: Kysely<Database>) {
  return (await db.selectFrom('policies').selectAll().execute()).map(toPolicy);
}
