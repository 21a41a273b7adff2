import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody, PutMaintenance, ROLE_PERMISSIONS, ROLES, SystemConfig } from '../contract/index.js';
import type { Services } from '../services.js';
import { readMaintenance, writeMaintenance } from '../storage/snapshot.js';
import { audited } from './audit-trail.js';
import { type Principal, requireAdmin } from './principal.js';

const HealthState = z.enum(['healthy', 'cooling_down', 'probing']);
const RouteHealth = z.object({
  routes: z.array(
    z.object({
      alias: z.string().nullable(),
      strategy: z.enum(['fallback', 'weighted', 'least_busy', 'latency']),
      targets: z.array(
        z.object({
          model: z.string(),
          weight: z.number(),
          priority: z.number(),
          rpm: z.number().nullable(),
          tpm: z.number().nullable(),
          state: HealthState,
          cooldown_until: z.string().nullable(),
          in_flight: z.number(),
          latency_ms_p50: z.number().nullable(),
          error_rate: z.number(),
          keys: z.array(z.object({ key_index: z.number(), state: HealthState, cooldown_until: z.string().nullable() })),
        }),
      ),
    }),
  ),
});

export function systemRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };

  // A tenant-scoped key sees which providers and models there are, not where they live (internal addresses).
  const config = (p: Principal): SystemConfig => ({
    version: s.version,
    storage: { kind: s.store.kind },
    counters: { kind: s.countersKind },
    providers: p.tenant_id ? s.providerInfo().map((provider) => ({ ...provider, base_url: null })) : s.providerInfo(),
    rbac_roles: ROLES.map((name) => ({ name, permissions: ROLE_PERMISSIONS[name] })),
    maintenance: s.snapshot.maintenance,
  });

  r.get('/system/config', { schema: { tags: ['system'], response: { 200: SystemConfig, ...errors } } }, async (req) => config(req.principal));

  // Per node: each node keeps the health of the targets it calls (cooldowns are shared between nodes through Redis).
  r.get('/route-health', { schema: { tags: ['system'], response: { 200: RouteHealth, 401: ErrorBody, 403: ErrorBody } } }, async (req) => {
    requireAdmin(req.principal, 'read route health');
    return s.routeHealth();
  });

  r.put('/system/maintenance', { schema: { tags: ['system'], body: PutMaintenance, response: { 200: SystemConfig, ...errors } } }, async (req) => {
    requireAdmin(req.principal, 'switch maintenance mode');
    await audited(s, req, async (tx) => {
      const before = await readMaintenance(tx);
      const after = {
        enabled: req.body.enabled,
        message: req.body.enabled ? (req.body.message ?? null) : null,
        since: req.body.enabled ? (before.enabled && before.since ? before.since : new Date().toISOString()) : null,
      };
      await writeMaintenance(tx, after);
      return [undefined, { action: 'maintenance.update', object: { kind: 'maintenance', id: 'maintenance' }, tenant_id: null, before, after }];
    });
    // Every node holds it before the answer.
    await s.snapshot.changed();
    return config(req.principal);
  });
}
