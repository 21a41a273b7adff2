import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AgentgwError, ID_PATTERN } from '../contract/index.js';
import { sendError, toAgentgwError } from '../http/error-handler.js';
import { authenticateAgent } from '../policy/auth.js';
import { modelAllowed } from '../policy/model-allowlist.js';
import { effectivePolicy } from '../policy/effective-policy.js';
import { chatCompletions } from './chat-completions.js';
import type { DataPlane } from './data-plane.js';
import { embeddings } from './embeddings.js';
import type { RequestContext } from './request-context.js';

const TRACE_ID = /^[\x20-\x7e]{1,128}$/;

/** Node joins repeated headers with ", "; the raw list tells a repeated header from a value with a comma. */
function headerCount(req: FastifyRequest, name: string): number {
  let n = 0;
  for (let i = 0; i < req.raw.rawHeaders.length; i += 2) if (req.raw.rawHeaders[i]!.toLowerCase() === name) n++;
  return n;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The data plane, mounted at /v1: maintenance -> auth -> headers in onRequest, the rest in the handlers. */
export function dataPlanePlugin(dp: DataPlane, bodyLimit: number) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.decorateRequest('agw', null as never);

    app.addHook('onRequest', async (req, reply) => {
      const agentTrace = header(req, 'x-agent-trace-id');
      const gatewayTrace = header(req, 'x-gateway-trace-id');
      const named = agentTrace ?? gatewayTrace;
      const traceId = named !== undefined && TRACE_ID.test(named) ? named : req.id;
      reply.header('x-request-id', req.id);
      reply.header('x-agent-trace-id', traceId);

      const m = dp.snapshot.maintenance;
      if (m.enabled) {
        throw new AgentgwError('maintenance', m.message ? `The gateway is in maintenance: ${m.message}` : 'The gateway is in maintenance: retry later.', {
          headers: { 'retry-after': '60' },
        });
      }
      const agent = authenticateAgent(header(req, 'authorization'), dp.hasher, dp.snapshot);
      const now = Date.now();
      const ctx: RequestContext = {
        requestId: req.id,
        traceId,
        traceFromClient: named !== undefined,
        startedAt: performance.now(),
        startedAtIso: new Date(now).toISOString(),
        agent,
        headerPolicyId: header(req, 'x-agent-policy'),
        model: null,
        provider: null,
        stream: false,
        operation: req.url.startsWith('/v1/embeddings') ? 'embeddings' : 'chat',
        piiTypes: [],
      };
      req.agw = ctx;
      if (named !== undefined && named.includes(',') && headerCount(req, agentTrace !== undefined ? 'x-agent-trace-id' : 'x-gateway-trace-id') > 1) {
        throw new AgentgwError('invalid_header', 'Send the trace id header once: it was repeated.', { param: agentTrace !== undefined ? 'x-agent-trace-id' : 'x-gateway-trace-id' });
      }
      if (named !== undefined && !TRACE_ID.test(named)) {
        const name = agentTrace !== undefined ? 'X-Agent-Trace-Id' : 'x-gateway-trace-id';
        throw new AgentgwError('invalid_header', `${name} must be 1-128 printable ASCII characters.`, { param: name.toLowerCase() });
      }
      if (ctx.headerPolicyId !== undefined && !ID_PATTERN.test(ctx.headerPolicyId)) {
        throw new AgentgwError('invalid_header', 'X-Agent-Policy must be a policy id (lowercase letters, digits, "_" or "-").', { param: 'x-agent-policy' });
      }
    });

    // Every request that got past auth is recorded, blocked ones included, with its error code.
    app.addHook('onError', async (req, _reply, err) => {
      if (!req.agw) return;
      // No logger here: the error handler that answers logs a bug once.
      const e = toAgentgwError(err);
      dp.record(req.agw, { httpStatus: e.status, error: e });
    });

    // Unknown /v1 paths still answer with the request and trace ids, like every gateway response.
    app.setNotFoundHandler((req, reply) => {
      sendError(reply, new AgentgwError('route_not_found', `No route ${req.method} ${req.url.split('?')[0]}: the gateway serves /v1/chat/completions, /v1/embeddings and /v1/models.`));
    });

    const opts = { bodyLimit, schema: { hide: true } };
    app.post('/chat/completions', opts, (req: FastifyRequest, reply: FastifyReply) => chatCompletions(dp, req, reply));
    app.post('/embeddings', opts, (req: FastifyRequest, reply: FastifyReply) => embeddings(dp, req, reply));
    app.get('/models', { schema: { hide: true } }, async (req) => {
      const eff = effectivePolicy(req.agw.agent, (id) => dp.snapshot.policy(id), req.agw.headerPolicyId);
      const created = Math.floor(Date.now() / 1000);
      const data = dp.router
        .listModels()
        .filter((m) => eff.policies.every((p) => modelAllowed(p.allowed_models, m.id)))
        .map((m) => ({ id: m.id, object: 'model', created, owned_by: m.owned_by }));
      return { object: 'list', data };
    });
  };
}
