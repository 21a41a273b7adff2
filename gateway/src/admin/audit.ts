import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AuditEntry, AuditQuery, ErrorBody, page } from '../contract/index.js';
import type { Services } from '../services.js';
import { listScope } from './principal.js';

/** GET /audit: who changed what, when, from what to what; newest first. Every role reads it; a tenant-scoped key its tenant's. */
export function auditRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };
  r.get('/audit', { schema: { tags: ['audit'], querystring: AuditQuery, response: { 200: page(AuditEntry), ...errors } } }, async (req) => {
    return s.store.listAudit({ ...req.query, tenant_id: listScope(req.principal, req.query.tenant_id) });
  });
}
