import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AgentgwError, type AuditObjectKind, CHANGE_ID_HEADER, ChangeId } from '../contract/index.js';
import { generateId } from '../security/keys.js';
import type { Services } from '../services.js';
import type { AuditRecord, Store } from '../storage/store.js';

/** What one admin write changed: the object as it was and as it is (null where it did not or no longer exists). */
export interface Change {
  /** `<kind>.<verb>`: tenant.create, agent.rotate_key, trace.stop, ... */
  action: string;
  object: { kind: AuditObjectKind; id: string };
  /** The tenant the object belongs to; null for global objects (only unscoped keys see their entries). */
  tenant_id: string | null;
  before: object | null;
  after: object | null;
}

/**
 * Members never written to the log, at the top level of an object (the resources' own fields; user-named keys such as
 * labels are below it): keys shown once, key hashes, credentials.
 */
const SECRET_FIELDS = new Set(['api_key', 'key_hash', 'headers', 'client_secret', 'secret', 'password', 'token', 'credentials']);

function withoutSecrets(o: object | null): Record<string, unknown> | null {
  if (o === null) return null;
  return Object.fromEntries(Object.entries(o).filter(([k]) => !SECRET_FIELDS.has(k)));
}

/**
 * Runs an admin write and appends its audit entry in the same database transaction: both are stored, or neither.
 * `write` makes the change through `tx` and returns the answer with what it changed; throwing undoes everything.
 * A new write is audited by running it in here.
 */
export function audited<T>(s: Pick<Services, 'store'>, req: FastifyRequest, write: (tx: Store) => Promise<[T, Change]>): Promise<T> {
  return s.store.transaction(async (tx) => {
    const [result, change] = await write(tx);
    await tx.appendAudit(auditRecord(req, change));
    return result;
  });
}

function auditRecord(req: FastifyRequest, c: Change): AuditRecord {
  const p = req.principal;
  return {
    id: generateId('aud'),
    at: new Date().toISOString(),
    actor: { kind: p.kind, id: p.id, name: p.name },
    action: c.action,
    object: c.object,
    tenant_id: c.tenant_id,
    before: withoutSecrets(c.before),
    after: withoutSecrets(c.after),
    request_id: req.id,
    change_id: changeIdOf(req),
  };
}

function changeIdOf(req: FastifyRequest): string | null {
  const v = req.headers[CHANGE_ID_HEADER];
  return typeof v === 'string' ? v : null;
}

/** Every answer of the admin interface names its request (x-request-id), as audit entries keep it. Before auth: 401s too. */
export function registerRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
}

/** A malformed x-agentgw-change-id is refused before anything runs, on reads too (typos must not pass silently). */
export function registerChangeIdCheck(app: FastifyInstance): void {
  app.addHook('onRequest', async (req) => {
    const v = req.headers[CHANGE_ID_HEADER];
    if (v !== undefined && !ChangeId.safeParse(v).success) {
      throw new AgentgwError(
        'invalid_header',
        `${CHANGE_ID_HEADER} must be 1-128 printable ASCII characters without spaces (agentgw apply sends the plan's digest): fix the header or leave it out.`,
        { param: CHANGE_ID_HEADER },
      );
    }
  });
}
