// GET /metrics (Prometheus text). It names tenants, agents and models, so by default it takes an admin key without a
// tenant, on the main address; `metrics.listen` serves it on an address of its own instead (a private one for the scraper).
import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { AgentgwError } from '../contract/index.js';
import { registerErrorHandling } from '../http/error-handler.js';
import type { Services } from '../services.js';
import { adminPrincipal } from './auth.js';

export interface MetricsDeps extends Pick<Services, 'hasher' | 'store'> {
  registry: Registry;
  /** metrics.require_key: an admin key without a tenant must be sent. */
  requireKey: boolean;
}

export function metricsRoute(app: FastifyInstance, deps: MetricsDeps): void {
  const { registry } = deps;
  app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    if (deps.requireKey) {
      const p = await adminPrincipal(req.headers.authorization, deps);
      if (p.tenant_id) {
        throw new AgentgwError('tenant_forbidden', `This admin key is scoped to tenant ${p.tenant_id}, and /metrics covers every tenant: use an admin key without a tenant.`);
      }
    }
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}

/** The server of `metrics.listen`: /metrics and nothing else, with CONTRACT's error bodies. */
export function metricsApp(deps: MetricsDeps): FastifyInstance {
  const app = Fastify({ logger: false });
  registerErrorHandling(app);
  metricsRoute(app, deps);
  return app;
}
