import type { FastifyInstance } from 'fastify';
import { AgentgwError } from '../contract/index.js';
import { KeyHasher } from '../security/keys.js';
import type { Services } from '../services.js';

/** Resolves `Authorization: Bearer <ADMIN_KEY>` to a principal; registered only inside the admin scope. */
export function registerAdminAuth(app: FastifyInstance, services: Services): void {
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (req) => {
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      throw new AgentgwError('invalid_api_key', 'Missing admin key: send it as "Authorization: Bearer <ADMIN_KEY>".');
    }
    const key = match[1]!;
    const hash = services.hasher.hash(key);
    const found = await services.store.findAdminKeyByHash(hash);
    if (!found || !KeyHasher.equal(found.key_hash, hash)) throw new AgentgwError('invalid_api_key', 'The admin key is unknown or was deleted: check the key you sent.');
    req.principal = { id: found.id, role: found.role, tenant_id: found.tenant_id };
  });
}
