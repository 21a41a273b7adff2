import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentgwError, CreateTenant, ErrorBody, PaginationQuery, PatchTenant, ResourceId, Tenant, TenantWithSpend, page } from '../contract/index.js';
import { isUniqueViolation } from '../storage/store-errors.js';
import type { Services } from '../services.js';
import { audited } from './audit-trail.js';
import { listScope, requireAdmin, requireTenant } from './principal.js';

const Params = z.strictObject({ id: ResourceId });
const notFound = (id: string) => new AgentgwError('tenant_not_found', `Tenant ${id} does not exist: create it first or check the id.`);

export function tenantRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

  r.post('/tenants', { schema: { tags: ['tenants'], body: CreateTenant, response: { 201: Tenant, ...errors } } }, async (req, reply) => {
    requireAdmin(req.principal, 'create tenants');
    try {
      const { id, name, labels, monthly_budget, daily_budget } = req.body;
      const t = await audited(s, req, async (tx) => {
        const created = await tx.createTenant({ id, name, labels: labels ?? {}, monthly_budget, daily_budget });
        return [created, { action: 'tenant.create', object: { kind: 'tenant', id }, tenant_id: id, before: null, after: created }];
      });
      return reply.code(201).send(t);
    } catch (e) {
      if (isUniqueViolation(e)) throw new AgentgwError('tenant_exists', `Tenant ${req.body.id} already exists: choose another id or PATCH it.`);
      throw e;
    }
  });

  r.get('/tenants', { schema: { tags: ['tenants'], querystring: PaginationQuery, response: { 200: page(Tenant), ...errors } } }, async (req) => {
    return s.store.listTenants({ ...req.query, tenant_id: listScope(req.principal, undefined) });
  });

  r.get('/tenants/:id', { schema: { tags: ['tenants'], params: Params, response: { 200: TenantWithSpend, ...errors } } }, async (req) => {
    requireTenant(req.principal, req.params.id);
    const t = await s.store.getTenant(req.params.id);
    if (!t) throw notFound(req.params.id);
    return { ...t, spend: await s.tenantSpend(t) };
  });

  r.patch('/tenants/:id', { schema: { tags: ['tenants'], params: Params, body: PatchTenant, response: { 200: Tenant, ...errors } } }, async (req) => {
    requireTenant(req.principal, req.params.id);
    requireAdmin(req.principal, 'change tenants');
    const id = req.params.id;
    const t = await audited(s, req, async (tx) => {
      const before = await tx.getTenant(id);
      const after = before && (await tx.updateTenant(id, req.body));
      if (!before || !after) throw notFound(id);
      return [after, { action: 'tenant.update', object: { kind: 'tenant', id }, tenant_id: id, before, after }];
    });
    // Budgets are enforced from the snapshot: the change holds on every node before this call returns.
    if (req.body.monthly_budget !== undefined || req.body.daily_budget !== undefined) await s.snapshot.changed();
    return t;
  });

  r.delete('/tenants/:id', { schema: { tags: ['tenants'], params: Params, response: { 204: z.null(), ...errors } } }, async (req, reply) => {
    requireTenant(req.principal, req.params.id);
    requireAdmin(req.principal, 'delete tenants');
    const id = req.params.id;
    await audited(s, req, async (tx) => {
      const before = await tx.getTenant(id);
      const result = before ? await tx.deleteTenant(id) : 'missing';
      if (result === 'missing' || !before) throw notFound(id);
      if (result === 'not_empty') throw new AgentgwError('tenant_not_empty', `Tenant ${id} still has agents or policies: delete them first.`);
      return [undefined, { action: 'tenant.delete', object: { kind: 'tenant', id }, tenant_id: id, before, after: null }];
    });
    await s.snapshot.changed();
    return reply.code(204).send(null);
  });
}
