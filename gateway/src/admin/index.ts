import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { adminKeyRoutes } from './admin-keys.js';
import { agentRoutes } from './agents.js';
import { approvalRoutes } from './approvals.js';
import { auditRoutes } from './audit.js';
import { registerChangeIdCheck, registerRequestId } from './audit-trail.js';
import { registerAdminAuth } from './auth.js';
import { ConsoleSessions } from './console-session.js';
import { OidcClient, consoleAuthRoutes } from './oidc.js';
import { mcpCredentialRoutes } from './mcp-credentials.js';
import { mcpServerRoutes } from './mcp-servers.js';
import { meRoutes } from './me.js';
import { refuseNulCharacters } from './nul-characters.js';
import { policyRoutes } from './policies.js';
import { routeRoutes } from './routes.js';
import { systemRoutes } from './system.js';
import { tenantRoutes } from './tenants.js';
import { traceRoutes } from './traces.js';

/** The control plane, mounted at /api. Admin auth lives in this scope only, so it never runs on /v1. */
export async function adminPlugin(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const s = opts.services;
  const oidc = s.config.console.oidc;
  const sessions = oidc ? new ConsoleSessions(s.hasher, oidc.issuer, Math.round(oidc.session_hours * 3600), s.store) : null;
  consoleAuthRoutes(app, s, sessions, oidc ? new OidcClient(oidc) : null);
  await app.register(async (secured) => {
    registerRequestId(secured);
    registerAdminAuth(secured, s, sessions);
    registerChangeIdCheck(secured);
    // Admin bodies are JSON only: without this, Fastify's built-in text/plain parser lets a string body through.
    secured.removeContentTypeParser('text/plain');
    // A DELETE carries no body, but many clients still send Content-Type: application/json with it; any other empty
    // JSON body stays a 400.
    const json = secured.getDefaultJsonParser('error', 'error');
    secured.removeContentTypeParser('application/json');
    secured.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
      if (body === '' && req.method === 'DELETE') done(null, undefined);
      else json(req, body as string, done);
    });
    refuseNulCharacters(secured);
    secured.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    tenantRoutes(secured, s);
    agentRoutes(secured, s);
    policyRoutes(secured, s);
    adminKeyRoutes(secured, s);
    systemRoutes(secured, s);
    traceRoutes(secured, s);
    meRoutes(secured, s);
    mcpServerRoutes(secured, s);
    mcpCredentialRoutes(secured, s);
    auditRoutes(secured, s);
    approvalRoutes(secured, s);
    routeRoutes(secured, s);
  });
}
