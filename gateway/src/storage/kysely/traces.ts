import { type Kysely, sql } from 'kysely';
import type { TraceRequest, TraceStopped, TraceSummary, TraceToolCall } from '../../contract/index.js';
import type { Database } from '../schema.js';
import type { Page, TraceFilter } from '../store.js';
import { decodeCursor, encodeCursor, type Report, round, traceKey, utc } from './common.js';
import { stopsOf } from './trace-stops.js';

function traceAggregates(db: Kysely<Database>) {
  return db
    .selectFrom('usage_records')
    .select((eb) => [
      'tenant_id',
      'trace_id',
      eb.fn.min('agent_id').as('agent_id'),
      eb.fn.min('started_at').as('started_at'),
      eb.fn.max('started_at').as('last_started_at'),
      eb.fn.max(sql<number>`latency_ms`).as('max_latency'),
      eb.fn.countAll<number>().as('request_count'),
      eb.fn.sum<number>(sql`case when status = 'ok' then 0 else 1 end`).as('error_count'),
      eb.fn.sum<number>('prompt_tokens').as('prompt_tokens'),
      eb.fn.sum<number>('completion_tokens').as('completion_tokens'),
      eb.fn.sum<number>('cost').as('cost'),
    ])
    // Trace ids come from clients: two tenants may use the same one, and their traces never merge.
    .groupBy(['tenant_id', 'trace_id']);
}

/**
 * Rows of usage_records that a trace filter covers (tenant and agent narrow the rows a summary is made of). For
 * look-ups by trace id the columns are compared as `column || ''`, which no index serves: without statistics SQLite
 * would otherwise read a tenant's or agent's whole index range instead of the few rows of the traces asked for.
 */
function scoped<Q extends { where: (...a: any[]) => Q }>(q: Q, f: Pick<TraceFilter, 'tenant_id' | 'agent_id'>, byTrace = false): Q {
  let out = q;
  if (f.tenant_id) out = out.where(byTrace ? sql<string>`tenant_id || ''` : 'tenant_id', '=', f.tenant_id);
  if (f.agent_id) out = out.where(byTrace ? sql<string>`agent_id || ''` : 'agent_id', '=', f.agent_id);
  return out;
}

/**
 * One page of traces, newest start first, without grouping the whole table: usage rows are read newest first through
 * the time index, in chunks, and each trace met is looked up by its own index for its first row. A trace starts at its
 * first row, so once the scan has passed below time T every trace that started after T has been met: the scan stops
 * as soon as a full page of traces started after the scan's position. Its cost follows the rows written since the
 * page's oldest trace began, not the size of the table (which a GROUP BY over all rows would read, blocking SQLite's
 * single connection for seconds on a large table). `scanChunk`: usage rows read per step of the scan.
 */
export async function listTraces(db: Kysely<Database>, report: Report, f: TraceFilter, scanChunk: number): Promise<Page<TraceSummary>> {
  const since = f.since ? utc(f.since) : undefined;
  const cursor = f.cursor ? decodeCursor(f.cursor, 3) : undefined;
  const want = f.limit + 1;
  const starts = new Map<string, TraceStart>();
  const wanted = (t: TraceStart) => (since === undefined || t.started_at >= since) && (cursor === undefined || compareTraceStarts(t, cursor) < 0);
  let pos: { started_at: string; seq: number } | undefined;
  for (;;) {
    let q = scoped(db.selectFrom('usage_records').select(['seq', 'tenant_id', 'trace_id', 'started_at']), f);
    if (cursor) q = q.where('started_at', '<=', cursor[0]!);
    if (since) q = q.where('started_at', '>=', since);
    if (pos) {
      const p = pos;
      // The plain `<=` bound gives the index a range to start from; the OR alone would be filtered row by row.
      q = q
        .where('started_at', '<=', p.started_at)
        .where((eb) => eb.or([eb('started_at', '<', p.started_at), eb.and([eb('started_at', '=', p.started_at), eb('seq', '<', p.seq)])]));
    }
    const rows = await report(q.orderBy('started_at', 'desc').orderBy('seq', 'desc').limit(scanChunk));
    const fresh = new Set<string>();
    for (const r of rows) if (!starts.has(traceKey(r.tenant_id, r.trace_id))) fresh.add(r.trace_id);
    if (fresh.size > 0) {
      const found = await report(
        scoped(
          db
            .selectFrom('usage_records')
            .select((eb) => ['tenant_id', 'trace_id', eb.fn.min('started_at').as('started_at')])
            .where('trace_id', 'in', [...fresh]),
          f,
          true,
        ).groupBy(['tenant_id', 'trace_id']),
      );
      for (const t of found) {
        const key = traceKey(t.tenant_id, t.trace_id);
        if (!starts.has(key)) starts.set(key, { tenant_id: t.tenant_id, trace_id: t.trace_id, started_at: String(t.started_at) });
      }
    }
    if (rows.length < scanChunk) break;
    const last = rows[rows.length - 1]!;
    pos = { started_at: last.started_at, seq: Number(last.seq) };
    let complete = 0;
    for (const t of starts.values()) if (t.started_at > last.started_at && wanted(t)) complete++;
    if (complete >= want) break;
  }
  const page = [...starts.values()].filter(wanted).sort((a, b) => -compareTraceStarts(a, [b.started_at, b.trace_id, b.tenant_id])).slice(0, want);
  const more = page.length > f.limit;
  const data = page.slice(0, f.limit);
  if (data.length === 0) return { data: [], next_cursor: null };
  const ids = [...new Set(data.map((t) => t.trace_id))];
  const aggregates = new Map<string, any>();
  for (const r of await report(scoped(traceAggregates(db).where('trace_id', 'in', ids), f, true))) aggregates.set(traceKey(r.tenant_id, r.trace_id), r);
  const ends = await endedAt(db, report, ids, f);
  const stops = await stopsOf(db, ids, f.tenant_id);
  const last = data[data.length - 1]!;
  return {
    data: data.map((t) => {
      const key = traceKey(t.tenant_id, t.trace_id);
      return toSummary(aggregates.get(key), ends.get(key), stops.get(key));
    }),
    next_cursor: more ? encodeCursor([last.started_at, last.trace_id, last.tenant_id]) : null,
  };
}

/** End of each (tenant, trace): the latest started_at + latency over the filter's rows, keyed by traceKey. */
async function endedAt(
  db: Kysely<Database>,
  report: Report,
  traceIds: string[],
  f: Pick<TraceFilter, 'tenant_id' | 'agent_id'>,
): Promise<Map<string, string>> {
  const rows = await report(
    scoped(
      db.selectFrom('usage_records').select(['tenant_id', 'trace_id', 'started_at', 'latency_ms']).where('trace_id', 'in', traceIds),
      f,
      true,
    ),
  );
  const out = new Map<string, string>();
  for (const r of rows) {
    const end = new Date(Date.parse(r.started_at) + Math.round(Number(r.latency_ms))).toISOString();
    const key = traceKey(r.tenant_id, r.trace_id);
    const cur = out.get(key);
    if (!cur || end > cur) out.set(key, end);
  }
  return out;
}

function toSummary(r: any, ended: string | undefined, stopped: TraceStopped | undefined): TraceSummary {
  return {
    trace_id: r.trace_id,
    tenant_id: r.tenant_id,
    agent_id: r.agent_id,
    started_at: r.started_at,
    ended_at: ended ?? r.last_started_at,
    request_count: Number(r.request_count),
    error_count: Number(r.error_count ?? 0),
    prompt_tokens: Number(r.prompt_tokens ?? 0),
    completion_tokens: Number(r.completion_tokens ?? 0),
    cost: round(Number(r.cost ?? 0)),
    stopped: stopped ?? null,
  };
}

export async function getTrace(db: Kysely<Database>, report: Report, traceId: string, tenantId?: string) {
  // Every column but the stored request body, which a trace does not show.
  let q = db
    .selectFrom('usage_records')
    .select([
      'seq', 'request_id', 'trace_id', 'tenant_id', 'agent_id', 'model', 'provider', 'stream', 'status', 'http_status', 'error_code',
      'prompt_tokens', 'completion_tokens', 'cost', 'latency_ms', 'ttft_ms', 'started_at', 'pii_types',
      'endpoint', 'cached_tokens', 'reasoning_tokens', 'response_id', 'tool', 'tool_calls', 'cleaned', 'requested_model',
    ])
    .where('trace_id', '=', traceId);
  if (tenantId) q = q.where('tenant_id', '=', tenantId);
  const all = await report(q.orderBy('started_at').orderBy('seq'));
  if (all.length === 0) return undefined;
  // Unscoped, an id that two tenants share answers with the one of them that started first.
  const rows = all.filter((r) => r.tenant_id === all[0]!.tenant_id);
  const requests: TraceRequest[] = rows.map((r, i) => ({
    request_id: r.request_id,
    step: i + 1,
    endpoint: r.endpoint,
    model: r.model,
    // Steps recorded before the column existed name no requested model: the model they were recorded with stands in.
    requested_model: r.requested_model ?? r.model,
    provider: r.provider,
    stream: !!r.stream,
    status: r.status as TraceRequest['status'],
    http_status: r.http_status,
    error_code: r.error_code,
    prompt_tokens: r.prompt_tokens,
    completion_tokens: r.completion_tokens,
    cached_tokens: Number(r.cached_tokens),
    reasoning_tokens: Number(r.reasoning_tokens),
    cost: round(Number(r.cost)),
    latency_ms: Number(r.latency_ms),
    ttft_ms: r.ttft_ms === null ? null : Number(r.ttft_ms),
    started_at: r.started_at,
    pii_types: JSON.parse(r.pii_types),
    response_id: r.response_id ?? null,
    tool: r.tool ?? null,
    tool_calls: r.tool_calls ? (JSON.parse(r.tool_calls) as TraceToolCall[]) : [],
    cleaned: r.cleaned ? (JSON.parse(r.cleaned) as string[]) : [],
  }));
  const ended = rows
    .map((r) => new Date(Date.parse(r.started_at) + Math.round(Number(r.latency_ms))).toISOString())
    .reduce((a, b) => (a > b ? a : b));
  const stopped = (await stopsOf(db, [traceId], rows[0]!.tenant_id)).get(traceKey(rows[0]!.tenant_id, traceId));
  return {
    trace_id: traceId,
    tenant_id: rows[0]!.tenant_id,
    agent_id: rows[0]!.agent_id,
    started_at: rows[0]!.started_at,
    ended_at: ended,
    request_count: rows.length,
    error_count: rows.filter((r) => r.status !== 'ok').length,
    prompt_tokens: rows.reduce((s, r) => s + r.prompt_tokens, 0),
    completion_tokens: rows.reduce((s, r) => s + r.completion_tokens, 0),
    cost: round(rows.reduce((s, r) => s + Number(r.cost), 0)),
    stopped: stopped ?? null,
    requests,
  };
}

export async function traceTenants(db: Kysely<Database>, traceId: string) {
  // By the usage_trace index; a trace's rows, not the table's.
  const rows = await db.selectFrom('usage_records').select('tenant_id').distinct().where('trace_id', '=', traceId).orderBy('tenant_id').execute();
  return rows.map((r) => r.tenant_id);
}

interface TraceStart {
  tenant_id: string;
  trace_id: string;
  started_at: string;
}

/** Order of trace listings: by start, then trace id, then tenant (`c` is [started_at, trace_id, tenant_id], a cursor's parts). */
function compareTraceStarts(t: TraceStart, c: string[]): number {
  const [started, id, tenant] = c as [string, string, string];
  if (t.started_at !== started) return t.started_at < started ? -1 : 1;
  if (t.trace_id !== id) return t.trace_id < id ? -1 : 1;
  return t.tenant_id === tenant ? 0 : t.tenant_id < tenant ? -1 : 1;
}
