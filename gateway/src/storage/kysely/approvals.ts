import type { Kysely } from 'kysely';
import type { Approval, ApprovalStatus } from '../../contract/index.js';
import type { Database } from '../schema.js';
import type { ApprovalCall, ApprovalFilter, NewApproval, Page } from '../store.js';
import { decodeCursor, encodeCursor } from './common.js';

type Row = Database['approvals'];

function toApproval(r: Row): Approval {
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    agent_id: r.agent_id,
    trace_id: r.trace_id,
    request_id: r.request_id,
    tool: r.tool,
    arguments: JSON.parse(r.arguments),
    rule: r.rule === null ? null : JSON.parse(r.rule),
    reason: r.reason,
    status: r.status as ApprovalStatus,
    decided_by: r.decided_by,
    comment: r.comment,
    created_at: r.created_at,
    decided_at: r.decided_at,
    expires_at: r.expires_at,
  };
}

export async function createApproval(db: Kysely<Database>, a: NewApproval): Promise<Approval> {
  const row: Row = {
    id: a.id,
    tenant_id: a.tenant_id,
    agent_id: a.agent_id,
    trace_id: a.trace_id,
    request_id: a.request_id,
    tool: a.tool,
    arguments: JSON.stringify(a.arguments ?? null),
    call_hash: a.call_hash,
    rule: a.rule === null ? null : JSON.stringify(a.rule),
    reason: a.reason,
    status: 'pending',
    decided_by: null,
    comment: null,
    created_at: a.created_at,
    decided_at: null,
    expires_at: a.expires_at,
    approved_late: 0,
    grant_used_at: null,
  };
  await db.insertInto('approvals').values(row).execute();
  return toApproval(row);
}

export async function getApproval(db: Kysely<Database>, id: string): Promise<Approval | undefined> {
  const row = await db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toApproval(row) : undefined;
}

/** Newest first; the cursor is the (created_at, id) of the last approval of the page. */
export async function listApprovals(db: Kysely<Database>, f: ApprovalFilter): Promise<Page<Approval>> {
  let q = db.selectFrom('approvals').selectAll();
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.tenant_id !== undefined) q = q.where('tenant_id', '=', f.tenant_id);
  if (f.trace_id !== undefined) q = q.where('trace_id', '=', f.trace_id);
  if (f.cursor) {
    const [at, id] = decodeCursor(f.cursor);
    q = q.where((eb) => eb.or([eb('created_at', '<', at!), eb.and([eb('created_at', '=', at!), eb('id', '<', id!)])]));
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit + 1).execute();
  const more = rows.length > f.limit;
  const data = rows.slice(0, f.limit);
  const last = data[data.length - 1];
  return { data: data.map(toApproval), next_cursor: more && last ? encodeCursor([last.created_at, last.id]) : null };
}

/**
 * A person's decision, written only over a state that allows it (so two nodes or two people cannot both decide): a
 * pending approval is approved or denied; a timed-out one may still be approved (then it lets the same call pass once).
 * Answers the approval as it now stands and whether this call decided it.
 */
export async function decideApproval(
  db: Kysely<Database>,
  id: string,
  decision: 'approved' | 'denied',
  by: string,
  comment: string | null,
  at: string,
): Promise<{ approval: Approval | undefined; decided: boolean }> {
  const set = { status: decision, decided_by: by, comment, decided_at: at };
  let n = (await db.updateTable('approvals').set(set).where('id', '=', id).where('status', '=', 'pending').executeTakeFirst()).numUpdatedRows;
  if (n === 0n && decision === 'approved') {
    n = (await db.updateTable('approvals').set({ ...set, approved_late: 1 }).where('id', '=', id).where('status', '=', 'timed_out').executeTakeFirst()).numUpdatedRows;
  }
  return { approval: await getApproval(db, id), decided: n > 0n };
}

/** The holder's end of a pending approval (timed_out, abandoned); a decision written first stands. Answers the row as it stands. */
export async function closeApproval(db: Kysely<Database>, id: string, status: 'timed_out' | 'abandoned', at: string, comment: string | null = null): Promise<Approval | undefined> {
  // Only a pending one: a decision written first stands (the first write wins).
  await db.updateTable('approvals').set({ status, decided_at: at, comment }).where('id', '=', id).where('status', '=', 'pending').execute();
  return getApproval(db, id);
}

/** Of these approvals, the ones no longer pending. */
export async function settledApprovals(db: Kysely<Database>, ids: string[]): Promise<Approval[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('approvals').selectAll().where('id', 'in', ids).where('status', '!=', 'pending').execute();
  return rows.map(toApproval);
}

/**
 * Takes the pass an approval given after its timeout left for the same call of the same agent in the same trace (decided at or after
 * `since`), once: answers its id, or null when there is none left.
 */
export async function takeApprovalGrant(db: Kysely<Database>, call: ApprovalCall, since: string, at: string): Promise<string | null> {
  const candidates = await db
    .selectFrom('approvals')
    .select('id')
    .where('trace_id', '=', call.traceId)
    .where('call_hash', '=', call.callHash)
    .where('tenant_id', '=', call.tenantId)
    .where('agent_id', '=', call.agentId)
    .where('approved_late', '=', 1)
    .where('grant_used_at', 'is', null)
    .where('decided_at', '>=', since)
    .orderBy('decided_at')
    .execute();
  for (const { id } of candidates) {
    const r = await db.updateTable('approvals').set({ grant_used_at: at }).where('id', '=', id).where('grant_used_at', 'is', null).executeTakeFirst();
    if (r.numUpdatedRows > 0n) return id;
  }
  return null;
}
