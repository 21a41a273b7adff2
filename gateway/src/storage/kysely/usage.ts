import { type Kysely, sql } from 'kysely';
import type { UsageRow } from '../../contract/index.js';
import type { Database } from '../schema.js';
import type { UsageFilter, UsageRecord } from '../store.js';
import { type Report, round, utc } from './common.js';

/** A usage record as its table row. */
export type UsageRecordRow = Omit<Database['usage_records'], 'seq'>;

/** Inserts usage records by Kysely (the store's usage inserter, where there is one, is used instead). */
export async function insertUsage(db: Kysely<Database>, rows: UsageRecord[]) {
  const values: UsageRecordRow[] = rows.map((r) => ({
    ...r,
    stream: r.stream ? 1 : 0,
    estimated: r.estimated ? 1 : 0,
    pii_types: JSON.stringify(r.pii_types),
    // A journal written by an earlier release has rows without it.
    response_id: r.response_id ?? null,
    tool: r.tool ?? null,
    tool_calls: r.tool_calls ? JSON.stringify(r.tool_calls) : null,
    cleaned: r.cleaned && r.cleaned.length > 0 ? JSON.stringify(r.cleaned) : null,
    requested_model: r.requested_model ?? null,
  }));
  // A record already written (a retried flush) is skipped rather than failing the batch.
  await db
    .insertInto('usage_records')
    .values(values)
    .onConflict((oc) => oc.column('request_id').doNothing())
    .execute();
}

export async function usage(db: Kysely<Database>, report: Report, f: UsageFilter): Promise<UsageRow[]> {
  const key = usageKey(f.group_by);
  let q = db
    .selectFrom('usage_records')
    .select((eb) => [
      key.as('key'),
      eb.fn.countAll<number>().as('requests'),
      eb.fn.sum<number>(NOT_OK).as('errors'),
      eb.fn.sum<number>('prompt_tokens').as('prompt_tokens'),
      eb.fn.sum<number>('completion_tokens').as('completion_tokens'),
      eb.fn.sum<number>('cost').as('cost'),
    ]);
  if (f.from) q = q.where('started_at', '>=', utc(f.from));
  if (f.to) q = q.where('started_at', '<', utc(f.to));
  if (f.tenant_id) q = q.where('tenant_id', '=', f.tenant_id);
  // Model steps have no tool: a grouping by tool counts tool calls only.
  if (f.group_by === 'tool') q = q.where('tool', 'is not', null);
  const rows = await report(q.groupBy(key).orderBy(key));
  return rows.map((r) => ({
    key: String(r.key),
    requests: Number(r.requests),
    errors: Number(r.errors ?? 0),
    prompt_tokens: Number(r.prompt_tokens ?? 0),
    completion_tokens: Number(r.completion_tokens ?? 0),
    cost: round(Number(r.cost ?? 0)),
  }));
}

export async function spendSince(db: Kysely<Database>, report: Report, since: string) {
  const rows = await report(
    db
      .selectFrom('usage_records')
      .select((eb) => ['agent_id', eb.fn.sum<number>('cost').as('cost')])
      .where('started_at', '>=', utc(since))
      .groupBy('agent_id'),
  );
  return rows.map((r) => ({ agent_id: r.agent_id, cost: Number(r.cost ?? 0) }));
}
export async function tenantSpendSince(db: Kysely<Database>, report: Report, since: string) {
  const rows = await report(
    db
      .selectFrom('usage_records')
      .select((eb) => ['tenant_id', eb.fn.sum<number>('cost').as('cost')])
      .where('started_at', '>=', utc(since))
      .groupBy('tenant_id'),
  );
  return rows.map((r) => ({ tenant_id: r.tenant_id, cost: Number(r.cost ?? 0) }));
}
export async function traceSpendSince(db: Kysely<Database>, report: Report, since: string) {
  const rows = await report(
    db
      .selectFrom('usage_records')
      .select((eb) => ['tenant_id', 'trace_id', eb.fn.sum<number>('cost').as('cost')])
      .where('started_at', '>=', utc(since))
      .groupBy(['tenant_id', 'trace_id']),
  );
  return rows.map((r) => ({ tenant_id: r.tenant_id, trace_id: r.trace_id, cost: Number(r.cost ?? 0) }));
}
export async function traceSpend(db: Kysely<Database>, tenantId: string, traceId: string) {
  // One trace, by the usage_trace index: on the main connection, not the report reader (it is on a request's path).
  const row = await db
    .selectFrom('usage_records')
    .select((eb) => eb.fn.sum<number>('cost').as('cost'))
    .where('trace_id', '=', traceId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return Number(row?.cost ?? 0);
}

/** 1 for a request whose status is not ok (error or blocked): the rule of a trace's error_count, summed as a usage row's errors. */
const NOT_OK = sql<number>`case when status = 'ok' then 0 else 1 end`;

/**
 * The key a usage report groups by, the same SQL on SQLite and PostgreSQL. started_at is stored as UTC RFC 3339 with
 * milliseconds (`2026-11-25T14:03:07.123Z`): a day is its first 10 characters, an hour its first 13 with the rest of
 * the hour's start written out (`2026-11-25T14:00:00Z`). The literals are inline, not bound: PostgreSQL matches the
 * selected key to the GROUP BY expression by its text, which two parameters ($1, $2) would differ in.
 */
function usageKey(groupBy: UsageFilter['group_by']) {
  switch (groupBy) {
    case 'agent':
      return sql<string>`agent_id`;
    case 'tenant':
      return sql<string>`tenant_id`;
    case 'model':
      return sql<string>`coalesce(model, '')`;
    case 'tool':
      return sql<string>`tool`;
    case 'day':
      return sql<string>`substr(started_at, 1, 10)`;
    case 'hour':
      return sql<string>`substr(started_at, 1, 13) || ':00:00Z'`;
  }
}
