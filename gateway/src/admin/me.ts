import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AdminKey, ErrorBody } from '../contract/index.js';
import type { Services } from '../services.js';

/** The calling admin key, without its secret or prefix: the console shows only what the role may do. */
export const Me = AdminKey.pick({ id: true, name: true, role: true, tenant_id: true }).meta({ id: 'Me' });

export function meRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get('/me', { schema: { tags: ['admin-keys'], response: { 200: Me, 401: ErrorBody } } }, async (req) => {
    // The principal has no name: the key the auth hook has just matched is read again for it.
    const key = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')![1]!;
    const found = await s.store.findAdminKeyByHash(s.hasher.hash(key));
    const p = req.principal;
    return { id: p.id, name: found?.name ?? p.id, role: p.role, tenant_id: p.tenant_id };
  });
}
