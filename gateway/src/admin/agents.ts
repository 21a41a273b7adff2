import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  Agent,
  AgentgwError,
  AgentWithKey,
  AgentWithSpend,
  CreateAgent,
  ErrorBody,
  PaginationQuery,
  PatchAgent,
  ResourceId,
  RotatedKey,
  page,
} from '../contract/index.js';
import { generateId, generateKey, keyPrefix } from '../security/keys.js';
import { isForeignKeyViolation, isUniqueViolation } from '../storage/store-errors.js';
import type { Services } from '../services.js';
import { audited } from './audit-trail.js';
import { type Principal, listScope, requireTenant, requireWrite } from './principal.js';
import { policyNamedNotFound, tenantNamedNotFound } from './references.js';

export const AgentId = z.string().regex(/^agt_[0-9A-Za-z]{16}$/, { message: 'must be an agent id such as agt_0123456789abcdef' });
const Params = z.strictObject({ id: AgentId });
const ListQuery = PaginationQuery.extend({ tenant_id: ResourceId.optional() });
const IdempotencyHeader = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, { message: 'Idempotency-Key must be 1-255 printable ASCII characters' })
  .optional();
const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000;

const agentNotFound = (id: string) => new AgentgwError('agent_not_found', `Agent ${id} does not exist: check the id.`);
const nameTaken = (tenant: string, name: string) =>
  new AgentgwError('agent_exists', `An agent named ${name} already exists in tenant ${tenant}: choose another name.`);

export function agentRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

  /** An agent may use a global policy or one of its own tenant. */
  async function checkPolicy(p: Principal, tenantId: string, policyId: string | null | undefined): Promise<void> {
    if (!policyId) return;
    const policy = await s.store.getPolicy(policyId);
    if (!policy) throw policyNamedNotFound(policyId);
    if (policy.tenant_id && policy.tenant_id !== tenantId) {
      throw new AgentgwError('tenant_forbidden', `Policy ${policyId} belongs to tenant ${policy.tenant_id}; an agent of ${tenantId} may use only global policies or its own tenant's.`);
    }
  }

  async function loadOwned(p: Principal, id: string) {
    const agent = await s.store.getAgent(id);
    if (!agent) throw agentNotFound(id);
    requireTenant(p, agent.tenant_id);
    return agent;
  }

  r.post(
    '/agents',
    {
      schema: {
        tags: ['agents'],
        body: CreateAgent,
        headers: z.looseObject({ 'idempotency-key': IdempotencyHeader }),
        response: { 201: AgentWithKey, ...errors },
      },
    },
    async (req, reply) => {
      requireWrite(req.principal);
      requireTenant(req.principal, req.body.tenant_id);
      const idemKey = req.headers['idempotency-key'];
      const requestHash = createHash('sha256').update(JSON.stringify(req.body)).digest('base64url');
      const idemHash = idemKey ? s.hasher.hash(`idem:${req.principal.id}:${idemKey}`) : undefined;
      if (idemKey && idemHash) {
        const replay = await replayIdempotent(s, idemHash, idemKey, req.principal.id, requestHash);
        if (replay) return reply.code(201).header('idempotent-replayed', 'true').send(replay);
      }
      if (!(await s.store.getTenant(req.body.tenant_id))) {
        throw tenantNamedNotFound(req.body.tenant_id);
      }
      await checkPolicy(req.principal, req.body.tenant_id, req.body.policy_id);
      const apiKey = generateKey('agk');
      let result;
      try {
        // The agent, its idempotency row and its audit entry are stored together, or none of them.
        result = await audited(s, req, async (tx) => {
          const agent = await tx.createAgent({
            id: generateId('agt'),
            name: req.body.name,
            tenant_id: req.body.tenant_id,
            policy_id: req.body.policy_id ?? null,
            labels: req.body.labels ?? {},
            suspended: req.body.suspended ?? false,
            key_prefix: keyPrefix(apiKey),
            key_hash: s.hasher.hash(apiKey),
          });
          const created = { ...agent, api_key: apiKey };
          if (idemKey && idemHash) {
            const response = s.hasher.seal(idemKey, JSON.stringify(created));
            if (!(await tx.putIdempotent({ key_hash: idemHash, scope: req.principal.id, request_hash: requestHash, response }))) throw new RetryWon();
          }
          return [created, { action: 'agent.create', object: { kind: 'agent', id: agent.id }, tenant_id: agent.tenant_id, before: null, after: agent }];
        });
      } catch (e) {
        if (isForeignKeyViolation(e)) throw await vanishedReference(s, req.body.tenant_id, req.body.policy_id);
        if (!isUniqueViolation(e) && !(e instanceof RetryWon)) throw e;
        if (idemKey && idemHash) {
          // A concurrent retry with the same key created this agent a moment ago (nothing of ours was kept): answer with its result.
          const replay = await awaitReplay(s, idemHash, idemKey, req.principal.id, requestHash);
          if (replay) return reply.code(201).header('idempotent-replayed', 'true').send(replay);
        }
        throw nameTaken(req.body.tenant_id, req.body.name);
      }
      await s.snapshot.changed();
      return reply.code(201).send(result);
    },
  );

  r.get('/agents', { schema: { tags: ['agents'], querystring: ListQuery, response: { 200: page(Agent), ...errors } } }, async (req) => {
    return s.store.listAgents({ ...req.query, tenant_id: listScope(req.principal, req.query.tenant_id) });
  });

  r.get('/agents/:id', { schema: { tags: ['agents'], params: Params, response: { 200: AgentWithSpend, ...errors } } }, async (req) => {
    const agent = await loadOwned(req.principal, req.params.id);
    const policy = agent.policy_id ? await s.store.getPolicy(agent.policy_id) : undefined;
    return { ...agent, spend: await s.spend(agent.id, policy) };
  });

  r.patch('/agents/:id', { schema: { tags: ['agents'], params: Params, body: PatchAgent, response: { 200: Agent, ...errors } } }, async (req) => {
    requireWrite(req.principal);
    const agent = await loadOwned(req.principal, req.params.id);
    await checkPolicy(req.principal, agent.tenant_id, req.body.policy_id);
    let updated;
    try {
      updated = await audited(s, req, async (tx) => {
        const before = await tx.getAgent(agent.id);
        const after = before && (await tx.updateAgent(agent.id, req.body));
        if (!before || !after) throw agentNotFound(agent.id);
        const action = before.suspended === after.suspended ? 'agent.update' : after.suspended ? 'agent.suspend' : 'agent.resume';
        return [after, { action, object: { kind: 'agent', id: agent.id }, tenant_id: agent.tenant_id, before, after }];
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken(agent.tenant_id, req.body.name ?? agent.name);
      if (isForeignKeyViolation(e)) throw await vanishedReference(s, agent.tenant_id, req.body.policy_id);
      throw e;
    }
    // A suspension, like a revoked key, holds on every node before this answers.
    await s.snapshot.changed();
    return updated;
  });

  r.delete('/agents/:id', { schema: { tags: ['agents'], params: Params, response: { 204: z.null(), ...errors } } }, async (req, reply) => {
    requireWrite(req.principal);
    const agent = await loadOwned(req.principal, req.params.id);
    await audited(s, req, async (tx) => {
      const before = await tx.getAgent(agent.id);
      if (!before || !(await tx.deleteAgent(agent.id))) throw agentNotFound(agent.id);
      return [undefined, { action: 'agent.delete', object: { kind: 'agent', id: agent.id }, tenant_id: agent.tenant_id, before, after: null }];
    });
    await s.snapshot.changed();
    return reply.code(204).send(null);
  });

  r.post('/agents/:id/rotate-key', { schema: { tags: ['agents'], params: Params, response: { 200: RotatedKey, ...errors } } }, async (req) => {
    requireWrite(req.principal);
    const agent = await loadOwned(req.principal, req.params.id);
    const apiKey = generateKey('agk');
    await audited(s, req, async (tx) => {
      const before = await tx.getAgent(agent.id);
      if (!before || !(await tx.setAgentKey(agent.id, s.hasher.hash(apiKey), keyPrefix(apiKey)))) throw agentNotFound(agent.id);
      const after = await tx.getAgent(agent.id);
      return [undefined, { action: 'agent.rotate_key', object: { kind: 'agent', id: agent.id }, tenant_id: agent.tenant_id, before, after: after ?? null }];
    });
    await s.snapshot.changed();
    return { id: agent.id, api_key: apiKey, key_prefix: keyPrefix(apiKey) };
  });
}

/** Thrown in a create's transaction to undo it: a concurrent retry with the same Idempotency-Key stored its result first. */
class RetryWon extends Error {}

/**
 * The 404 for an agent write naming a tenant or policy that was deleted while it ran (the checks before it had found
 * them): the database refused the reference.
 */
async function vanishedReference(s: Services, tenantId: string, policyId: string | null | undefined): Promise<AgentgwError> {
  return (await s.store.getTenant(tenantId)) ? policyNamedNotFound(policyId ?? '') : tenantNamedNotFound(tenantId);
}

/** Waits briefly for a concurrent request's idempotency row (it is written right after its agent). */
async function awaitReplay(s: Services, idemHash: string, idemKey: string, scope: string, requestHash: string) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const replay = await replayIdempotent(s, idemHash, idemKey, scope, requestHash);
    if (replay) return replay;
    await new Promise((r) => setTimeout(r, 25));
  }
  return undefined;
}

async function replayIdempotent(s: Services, idemHash: string, idemKey: string, scope: string, requestHash: string) {
  const row = await s.store.getIdempotent(idemHash, new Date(Date.now() - IDEMPOTENCY_WINDOW_MS).toISOString());
  if (!row) return undefined;
  if (row.scope !== scope || row.request_hash !== requestHash) {
    throw new AgentgwError('invalid_header', 'This Idempotency-Key was already used with a different request body: use a new key for a new request.', {
      param: 'idempotency-key',
    });
  }
  const body = s.hasher.unseal(idemKey, row.response);
  if (!body) throw new AgentgwError('invalid_header', 'This Idempotency-Key cannot be replayed: use a new key.', { param: 'idempotency-key' });
  return JSON.parse(body);
}
