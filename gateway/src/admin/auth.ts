import type { FastifyInstance } from 'fastify';
import { AgentgwError } from '../contract/index.js';
import { bearerKey } from '../policy/auth.js';
import { KeyHasher } from '../security/keys.js';
import type { Services } from '../services.js';
import { type ConsoleSessions, SESSION_COOKIE, readCookie, refuseCrossSite } from './console-session.js';
import type { Principal } from './principal.js';

/** The admin key of an `Authorization: Bearer <ADMIN_KEY>` header, or 401 invalid_api_key. */
export async function adminPrincipal(header: string | undefined, services: Pick<Services, 'hasher' | 'store'>): Promise<Principal> {
  const parsed = bearerKey(typeof header === 'string' ? header : undefined);
  if ('missing' in parsed) throw new AgentgwError('invalid_api_key', 'Missing admin key: send it as "Authorization: Bearer <ADMIN_KEY>".');
  if ('malformed' in parsed) {
    throw new AgentgwError('invalid_api_key', `The Authorization header is malformed: ${parsed.malformed}. Send the admin key as "Authorization: Bearer <ADMIN_KEY>".`);
  }
  const key = parsed.key;
  const hash = services.hasher.hash(key);
  const found = await services.store.findAdminKeyByHash(hash);
  if (!found || !KeyHasher.equal(found.key_hash, hash)) throw new AgentgwError('invalid_api_key', 'The admin key is unknown or was deleted: check the key you sent.');
  return { id: found.id, role: found.role, tenant_id: found.tenant_id, kind: 'admin_key', name: found.name };
}

/**
 * Resolves `Authorization: Bearer <ADMIN_KEY>` to a principal, or, without that header and with OIDC configured, the
 * console's session cookie (writes then need its CSRF token). A write from another site is refused first (403).
 * Registered only inside the admin scope.
 */
export function registerAdminAuth(app: FastifyInstance, services: Services, sessions: ConsoleSessions | null = null): void {
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (req) => {
    refuseCrossSite(req);
    const cookie = sessions && req.headers.authorization === undefined ? readCookie(req.headers.cookie, SESSION_COOKIE) : undefined;
    req.principal = cookie && sessions ? await sessions.principal(req, cookie) : await adminPrincipal(req.headers.authorization, services);
  });
}
