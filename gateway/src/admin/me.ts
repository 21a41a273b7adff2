import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AdminKey, ErrorBody } from '../contract/index.js';
import type { Services } from '../services.js';

/** The calling admin key, without its secret or prefix: the console shows only what the role may do. */
export const Me = AdminKey.pick({ id: true, name: true, role: true, tenant_id: true }).meta({ id: 'Me' });

export function meRoutes(app: FastifyInstance, _s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get('/me', { schema: { tags: ['admin-keys'], response: { 200: Me, 401: ErrorBody } } }, async (req) => {
    const p = req.principal;
    return { id: p.id, name: p.name, role: p.role, tenant_id: p.tenant_id };
  });
}
