import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentgwError, ErrorBody, PaginationQuery, Policy, PutPolicy, ResourceId, mergePolicy, page } from '../contract/index.js';
import type { Services } from '../services.js';
import { isForeignKeyViolation } from '../storage/store-errors.js';
import { audited } from './audit-trail.js';
import { listScope, requireAdmin, requireTenant, requireWrite } from './principal.js';
import { tenantNamedNotFound } from './references.js';

const Params = z.strictObject({ id: ResourceId });
const ListQuery = PaginationQuery.extend({ tenant_id: ResourceId.optional() });
const notFound = (id: string) => new AgentgwError('policy_not_found', `Policy ${id} does not exist: check the id or PUT it first.`);

export function policyRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

  r.put(
    '/policies/:id',
    { schema: { tags: ['policies'], params: Params, body: PutPolicy, response: { 200: Policy, 201: Policy, ...errors } } },
    async (req, reply) => {
      requireWrite(req.principal);
      const existing = await s.store.getPolicy(req.params.id);
      const tenantId = existing ? existing.tenant_id : (req.body.tenant_id ?? null);
      // Permission first, so that a key of another tenant learns nothing about the policy.
      if (tenantId === null) requireAdmin(req.principal, 'write global policies (set tenant_id to your tenant)');
      requireTenant(req.principal, tenantId);
      if (existing && req.body.tenant_id !== undefined && req.body.tenant_id !== existing.tenant_id) {
        throw new AgentgwError(
          'validation_failed',
          `tenant_id of policy ${req.params.id} is ${existing.tenant_id ?? 'null (global)'} and cannot change: leave it out, or create a new policy.`,
          { param: 'tenant_id' },
        );
      }
      if (!existing && tenantId && !(await s.store.getTenant(tenantId))) {
        throw tenantNamedNotFound(tenantId);
      }
      const id = req.params.id;
      let stored;
      try {
        stored = await audited(s, req, async (tx) => {
          // Merged over the policy as this transaction reads it (and locks it): a concurrent PUT is never undone.
          const before = (await tx.getPolicy(id)) ?? null;
          const put = await tx.putPolicy(id, mergePolicy(before, { ...req.body, tenant_id: tenantId }));
          const action = put.created ? 'policy.create' : 'policy.update';
          return [put, { action, object: { kind: 'policy', id }, tenant_id: tenantId, before, after: put.policy }];
        });
      } catch (e) {
        // The tenant was deleted between the check above and the write.
        if (isForeignKeyViolation(e) && tenantId) throw tenantNamedNotFound(tenantId);
        throw e;
      }
      const { policy, created } = stored;
      await s.snapshot.changed();
      return reply.code(created ? 201 : 200).send(policy);
    },
  );

  r.get('/policies', { schema: { tags: ['policies'], querystring: ListQuery, response: { 200: page(Policy), ...errors } } }, async (req) => {
    return s.store.listPolicies({ ...req.query, tenant_id: listScope(req.principal, req.query.tenant_id) });
  });

  r.get('/policies/:id', { schema: { tags: ['policies'], params: Params, response: { 200: Policy, ...errors } } }, async (req) => {
    const policy = await s.store.getPolicy(req.params.id);
    if (!policy) throw notFound(req.params.id);
    // Global policies are readable by every key: tenant agents may use them.
    if (policy.tenant_id) requireTenant(req.principal, policy.tenant_id);
    return policy;
  });

  r.delete('/policies/:id', { schema: { tags: ['policies'], params: Params, response: { 204: z.null(), ...errors } } }, async (req, reply) => {
    requireWrite(req.principal);
    const policy = await s.store.getPolicy(req.params.id);
    if (!policy) throw notFound(req.params.id);
    if (policy.tenant_id === null) requireAdmin(req.principal, 'delete global policies');
    requireTenant(req.principal, policy.tenant_id);
    const id = req.params.id;
    await audited(s, req, async (tx) => {
      const before = await tx.getPolicy(id);
      const result = before ? await tx.deletePolicy(id) : 'missing';
      if (result === 'missing' || !before) throw notFound(id);
      if (result === 'in_use') throw new AgentgwError('policy_in_use', `Policy ${id} is used by an agent: move its agents to another policy first.`);
      return [undefined, { action: 'policy.delete', object: { kind: 'policy', id }, tenant_id: before.tenant_id, before, after: null }];
    });
    await s.snapshot.changed();
    return reply.code(204).send(null);
  });
}
