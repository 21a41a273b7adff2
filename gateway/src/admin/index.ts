import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { adminKeyRoutes } from './admin-keys.js';
import { agentRoutes } from './agents.js';
import { registerAdminAuth } from './auth.js';
import { refuseNulCharacters } from './nul-characters.js';
import { policyRoutes } from './policies.js';
import { systemRoutes } from './system.js';
import { tenantRoutes } from './tenants.js';
import { traceRoutes } from './traces.js';

/** The control plane, mounted at /api. Admin auth lives in this scope only, so it never runs on /v1. */
export async function adminPlugin(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const s = opts.services;
  await app.register(async (secured) => {
    registerAdminAuth(secured, s);
    // Admin bodies are JSON only: without this, Fastify's built-in text/plain parser lets a string body through.
    secured.removeContentTypeParser('text/plain');
    refuseNulCharacters(secured);
    secured.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    tenantRoutes(secured, s);
    agentRoutes(secured, s);
    policyRoutes(secured, s);
    adminKeyRoutes(secured, s);
    systemRoutes(secured, s);
    traceRoutes(secured, s);
  });
}
