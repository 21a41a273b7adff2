import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  AgentgwError,
  ErrorBody,
  StopTrace,
  TraceDetail,
  TraceStop,
  TraceSummary,
  TraceTenantQuery,
  TracesQuery,
  UsageQuery,
  UsageRow,
  page,
} from '../contract/index.js';
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
    return s.store.listTraces({ ...req.query, tenant_id: listScope(req.principal, req.query.tenant_id) });
  });

  r.get('/traces/:trace_id', { schema: { tags: ['traces'], params: TraceParams, querystring: TraceTenantQuery, response: { 200: TraceDetail, ...errors } } }, async (req) => {
    // Trace ids come from clients, so two tenants may share one: ?tenant_id= picks the tenant's.
    const scope = listScope(req.principal, req.query.tenant_id);
    const trace = await s.store.getTrace(req.params.trace_id, scope);
    if (!trace && req.principal.tenant_id && (await s.store.getTrace(req.params.trace_id))) throw otherTenantsTrace(scope!, req.params.trace_id);
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

/** The tenant whose trace a write names: the key's own, the one asked for, or the only tenant that recorded the id. */
async function tenantOfTrace(s: Services, p: Principal, traceId: string, requested: string | undefined): Promise<string> {
  const scope = listScope(p, requested);
  const tenants = await s.store.traceTenants(traceId);
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
