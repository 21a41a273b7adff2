import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  AgentgwError,
  ErrorBody,
  StopTrace,
  TraceDetail,
  TraceRequest,
  TraceStop,
  TraceSummary,
  TraceTenantQuery,
  TracesQuery,
  UsageQuery,
  UsageRow,
  page,
} from '../contract/index.js';
import type { RunningStep } from '../data-plane/running-steps.js';
import type { Services } from '../services.js';
import { audited } from './audit-trail.js';
import { type Principal, listScope, requireWrite } from './principal.js';

const TraceParams = z.strictObject({ trace_id: z.string().regex(/^[\x20-\x7e]{1,128}$/, { message: 'must be 1-128 printable ASCII characters' }) });

const traceNotFound = (traceId: string) =>
  new AgentgwError('trace_not_found', `No trace ${traceId} was recorded: check the id (records appear within a second).`);

/** Another tenant's trace is forbidden, as every other object of another tenant is. */
const otherTenantsTrace = (scope: string, traceId: string) =>
  new AgentgwError('tenant_forbidden', `This admin key is scoped to tenant ${scope} and cannot access trace ${traceId} of another tenant.`);

export function traceRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

  r.get('/traces', { schema: { tags: ['traces'], querystring: TracesQuery, response: { 200: page(TraceSummary), ...errors } } }, async (req) => {
    const page = await s.store.listTraces({ ...req.query, tenant_id: listScope(req.principal, req.query.tenant_id) });
    if (page.data.length === 0) return page;
    // Steps in flight count as requests (traces with no recorded step yet are not listed: they have no row to start from).
    const running = await s.running.counts([...new Set(page.data.map((t) => t.trace_id))]);
    if (running.size === 0) return page;
    return { ...page, data: page.data.map((t) => ({ ...t, request_count: t.request_count + (running.get(`${t.tenant_id}\u0000${t.trace_id}`) ?? 0) })) };
  });

  r.get('/traces/:trace_id', { schema: { tags: ['traces'], params: TraceParams, querystring: TraceTenantQuery, response: { 200: TraceDetail, ...errors } } }, async (req) => {
    // Trace ids come from clients, so two tenants may share one: ?tenant_id= picks the tenant's.
    const scope = listScope(req.principal, req.query.tenant_id);
    const read = () => Promise.all([s.store.getTrace(req.params.trace_id, scope), s.running.of(req.params.trace_id, scope)]);
    let [recorded, running] = await read();
    if (running.some((r) => r.ended && !recorded?.requests.some((q) => q.request_id === r.request_id))) {
      // A step ended whose row is still in this node's queue: written first, so what this answers the database holds too
      // (the trace list and usage read it next). Ended steps of other nodes are shown as they ended until theirs is.
      await Promise.race([s.flushUsage().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000).unref())]);
      [recorded, running] = await read();
    }
    const trace = withRunningSteps(recorded, running);
    if (!trace && req.principal.tenant_id && ((await s.store.getTrace(req.params.trace_id)) || (await s.running.of(req.params.trace_id)).length > 0)) {
      throw otherTenantsTrace(scope!, req.params.trace_id);
    }
    if (!trace) throw traceNotFound(req.params.trace_id);
    return trace;
  });

  /**
   * Stops a trace: every later request of it, on every node once this answers, is 403 trace_stopped. Idempotent: a
   * trace stopped again keeps its first stop (time, reason, who), which is answered again.
   */
  r.post(
    '/traces/:trace_id/stop',
    { schema: { tags: ['traces'], params: TraceParams, querystring: TraceTenantQuery, body: StopTrace.nullish(), response: { 200: TraceStop, ...errors } } },
    async (req) => {
      requireWrite(req.principal);
      const traceId = req.params.trace_id;
      const tenantId = await tenantOfTrace(s, req.principal, traceId, req.query.tenant_id);
      const at = new Date().toISOString();
      const answer = await audited(s, req, async (tx) => {
        const stop = await tx.stopTrace({
          tenant_id: tenantId,
          trace_id: traceId,
          reason: req.body?.reason ?? null,
          stopped_at: at,
          stopped_by: req.principal.id,
        });
        const after = { trace_id: traceId, tenant_id: tenantId, stopped: { at: stop.stopped_at, reason: stop.reason } };
        // A repeat keeps the first stop: before and after are that stop.
        const first = stop.stopped_by === req.principal.id && stop.stopped_at === at;
        return [after, { action: 'trace.stop', object: { kind: 'trace', id: traceId }, tenant_id: tenantId, before: first ? null : after, after }];
      });
      // Held by every node (their snapshots) before the answer, like a revoked key.
      await s.snapshot.changed();
      return answer;
    },
  );

  r.get('/usage', { schema: { tags: ['usage'], querystring: UsageQuery, response: { 200: z.object({ data: z.array(UsageRow) }), ...errors } } }, async (req) => {
    return { data: await s.store.usage({ ...req.query, tenant_id: listScope(req.principal, req.query.tenant_id) }) };
  });
}

/**
 * The recorded trace with its steps in flight merged in by start time (CONTRACT: listed with status "running" from
 * admission on), and those that ended but whose record is not in the database yet, as they ended. A trace with only such
 * steps is answered too, as the tenant's whose step started first.
 */
export function withRunningSteps(recorded: TraceDetail | undefined, running: RunningStep[]): TraceDetail | undefined {
  const tenant = recorded?.tenant_id ?? running[0]?.tenant_id;
  // A step recorded between the two reads is listed once, as recorded.
  const seen = new Set(recorded?.requests.map((r) => r.request_id));
  const steps = running.filter((r) => r.tenant_id === tenant && !seen.has(r.request_id));
  if (steps.length === 0) return recorded;
  const now = Date.now();
  const live: TraceRequest[] = steps.map((r) => ({
    request_id: r.request_id,
    step: 0,
    endpoint: r.endpoint,
    tool: r.tool,
    model: r.model,
    requested_model: r.requested_model,
    provider: r.provider,
    stream: r.stream,
    status: 'running',
    http_status: 0,
    error_code: null,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    reasoning_tokens: 0,
    cost: 0,
    latency_ms: Math.max(0, now - Date.parse(r.started_at)),
    ttft_ms: null,
    started_at: r.started_at,
    pii_types: [],
    response_id: null,
    tool_calls: [],
    cleaned: [],
    ...r.ended,
  }));
  const ended = steps.filter((r) => r.ended).map((r) => r.ended!);
  // Stable: steps that started in the same millisecond keep their recorded order, running ones after.
  const requests = [...(recorded?.requests ?? []), ...live].sort((a, b) => (a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : 0)).map((r, i) => ({ ...r, step: i + 1 }));
  const first = steps[0]!;
  return {
    trace_id: recorded?.trace_id ?? first.trace_id,
    tenant_id: tenant!,
    agent_id: recorded?.agent_id ?? first.agent_id,
    started_at: requests[0]!.started_at,
    // A running step is still going: the trace ends no earlier than now.
    ended_at: new Date(Math.max(recorded ? Date.parse(recorded.ended_at) : 0, ...live.map((r) => Date.parse(r.started_at) + Math.round(r.latency_ms)))).toISOString(),
    request_count: requests.length,
    error_count: (recorded?.error_count ?? 0) + ended.filter((e) => e.status !== 'ok').length,
    prompt_tokens: (recorded?.prompt_tokens ?? 0) + ended.reduce((n, e) => n + e.prompt_tokens, 0),
    completion_tokens: (recorded?.completion_tokens ?? 0) + ended.reduce((n, e) => n + e.completion_tokens, 0),
    cost: Math.round(((recorded?.cost ?? 0) + ended.reduce((n, e) => n + e.cost, 0)) * 1e10) / 1e10,
    stopped: recorded?.stopped ?? null,
    requests,
  };
}

/** The tenant whose trace a write names: the key's own, the one asked for, or the only tenant that recorded the id. */
async function tenantOfTrace(s: Services, p: Principal, traceId: string, requested: string | undefined): Promise<string> {
  const scope = listScope(p, requested);
  // A trace whose steps are all in flight (a runaway first call) can be stopped too.
  const [recorded, running] = await Promise.all([s.store.traceTenants(traceId), s.running.of(traceId)]);
  const tenants = [...new Set([...recorded, ...running.map((r) => r.tenant_id)])].sort();
  if (scope !== undefined) {
    if (tenants.includes(scope)) return scope;
    if (p.tenant_id && tenants.length > 0) throw otherTenantsTrace(scope, traceId);
    throw traceNotFound(traceId);
  }
  if (tenants.length === 0) throw traceNotFound(traceId);
  if (tenants.length > 1) {
    throw new AgentgwError('validation_failed', `Trace id ${traceId} was recorded by tenants ${tenants.join(', ')}: pass ?tenant_id= to say whose trace to stop.`, {
      param: 'tenant_id',
    });
  }
  return tenants[0]!;
}
