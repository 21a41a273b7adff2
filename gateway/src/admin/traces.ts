import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentgwError, ResourceId, ErrorBody, TraceDetail, TraceSummary, TracesQuery, UsageQuery, UsageRow, page } from '../contract/index.js';
import type { Services } from '../services.js';
import { listScope } from './principal.js';

const TraceQuery = z.strictObject({ tenant_id: ResourceId.optional() });
const TraceParams = z.strictObject({ trace_id: z.string().regex(/^[\x20-\x7e]{1,128}$/, { message: 'must be 1-128 printable ASCII characters' }) });

export function traceRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

  r.get('/traces', { schema: { tags: ['traces'], querystring: TracesQuery, response: { 200: page(TraceSummary), ...errors } } }, async (req) => {
    return s.store.listTraces({ ...req.query, tenant_id: listScope(req.principal, req.query.tenant_id) });
  });

  r.get('/traces/:trace_id', { schema: { tags: ['traces'], params: TraceParams, querystring: TraceQuery, response: { 200: TraceDetail, ...errors } } }, async (req) => {
    // Trace ids come from clients, so two tenants may share one: ?tenant_id= picks the tenant's.
    const scope = listScope(req.principal, req.query.tenant_id);
    const trace = await s.store.getTrace(req.params.trace_id, scope);
    // Another tenant's trace is forbidden, as every other object of another tenant is.
    if (!trace && req.principal.tenant_id && (await s.store.getTrace(req.params.trace_id))) {
      throw new AgentgwError('tenant_forbidden', `This admin key is scoped to tenant ${scope} and cannot read trace ${req.params.trace_id} of another tenant.`);
    }
    if (!trace) throw new AgentgwError('trace_not_found', `No trace ${req.params.trace_id} was recorded: check the id (records appear within a second).`);
    return trace;
  });

  r.get('/usage', { schema: { tags: ['usage'], querystring: UsageQuery, response: { 200: z.object({ data: z.array(UsageRow) }), ...errors } } }, async (req) => {
    return { data: await s.store.usage({ ...req.query, tenant_id: listScope(req.principal, req.query.tenant_id) }) };
  });
}
