import type { Kysely } from 'kysely';
import type { TraceStopped } from '../../contract/index.js';
import type { Database } from '../schema.js';
import type { TraceStopRecord } from '../store.js';
import { traceKey, utc } from './common.js';

export async function stopTrace(db: Kysely<Database>, stop: TraceStopRecord): Promise<TraceStopRecord> {
  const { tenant_id, trace_id, reason, stopped_at, stopped_by } = stop;
  // The first stop is kept: a repeat (or a concurrent stop on another node) changes nothing and reads it back.
  await db
    .insertInto('trace_stops')
    .values({ tenant_id, trace_id, reason, stopped_at, stopped_by })
    .onConflict((oc) => oc.columns(['tenant_id', 'trace_id']).doNothing())
    .execute();
  return db.selectFrom('trace_stops').selectAll().where('tenant_id', '=', tenant_id).where('trace_id', '=', trace_id).executeTakeFirstOrThrow();
}

export async function recentTraceStops(db: Kysely<Database>, since: string, limit: number) {
  return db
    .selectFrom('trace_stops')
    .select(['tenant_id', 'trace_id'])
    .where('stopped_at', '>=', utc(since))
    .orderBy('stopped_at', 'desc')
    .limit(limit)
    .execute();
}

/** Stops of these trace ids (of one tenant when given), keyed by traceKey. */
export async function stopsOf(db: Kysely<Database>, traceIds: string[], tenantId: string | undefined): Promise<Map<string, TraceStopped>> {
  let q = db.selectFrom('trace_stops').select(['tenant_id', 'trace_id', 'stopped_at', 'reason']).where('trace_id', 'in', traceIds);
  if (tenantId) q = q.where('tenant_id', '=', tenantId);
  const out = new Map<string, TraceStopped>();
  for (const r of await q.execute()) out.set(traceKey(r.tenant_id, r.trace_id), { at: r.stopped_at, reason: r.reason });
  return out;
}
