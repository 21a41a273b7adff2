import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AdminKey, AdminKeyWithSecret, AgentgwError, CreateAdminKey, ErrorBody, PaginationQuery, page } from '../contract/index.js';
import { generateId, generateKey, keyPrefix } from '../security/keys.js';
import type { Services } from '../services.js';
import { audited } from './audit-trail.js';
import { requireAdmin } from './principal.js';
import { tenantNamedNotFound } from './references.js';

const Params = z.strictObject({ id: z.string().regex(/^(adk_[0-9A-Za-z]{16}|root)$/, { message: 'must be an admin key id such as adk_0123456789abcdef' }) });

export function adminKeyRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

  r.post('/admin-keys', { schema: { tags: ['admin-keys'], body: CreateAdminKey, response: { 201: AdminKeyWithSecret, ...errors } } }, async (req, reply) => {
    requireAdmin(req.principal, 'create admin keys');
    const tenantId = req.body.tenant_id ?? null;
    if (tenantId && !(await s.store.getTenant(tenantId))) {
      throw tenantNamedNotFound(tenantId);
    }
    const apiKey = generateKey('adk');
    const key = await audited(s, req, async (tx) => {
      const created = await tx.createAdminKey({
        id: generateId('adk'),
        name: req.body.name,
        role: req.body.role,
        tenant_id: tenantId,
        key_prefix: keyPrefix(apiKey),
        key_hash: s.hasher.hash(apiKey),
        created_at: new Date().toISOString(),
      });
      return [created, { action: 'admin_key.create', object: { kind: 'admin_key', id: created.id }, tenant_id: tenantId, before: null, after: created }];
    });
    return reply.code(201).send({ ...key, api_key: apiKey });
  });

  r.get('/admin-keys', { schema: { tags: ['admin-keys'], querystring: PaginationQuery, response: { 200: page(AdminKey), ...errors } } }, async (req) => {
    requireAdmin(req.principal, 'list admin keys');
    return s.store.listAdminKeys(req.query);
  });

  r.delete('/admin-keys/:id', { schema: { tags: ['admin-keys'], params: Params, response: { 204: z.null(), ...errors } } }, async (req, reply) => {
    requireAdmin(req.principal, 'delete admin keys');
    if (req.params.id === 'root') {
      throw new AgentgwError('insufficient_role', 'The root key cannot be deleted through the API: change AGENTGW_ADMIN_KEY and restart instead.');
    }
    const id = req.params.id;
    await audited(s, req, async (tx) => {
      const before = await tx.getAdminKey(id);
      if (!before || !(await tx.deleteAdminKey(id))) throw new AgentgwError('admin_key_not_found', `Admin key ${id} does not exist: check the id.`);
      return [undefined, { action: 'admin_key.delete', object: { kind: 'admin_key', id }, tenant_id: before.tenant_id, before, after: null }];
    });
    return reply.code(204).send(null);
  });
}
