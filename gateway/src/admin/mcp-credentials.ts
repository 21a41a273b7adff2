// Per-agent credentials for upstream MCP servers: PUT sets the headers sent to that server alone for that agent (stored
// sealed with the deployment's secret), GET tells only whether they are set, which headers and when, DELETE removes
// them. Every write is audited without the values; every node uses the new credential once the snapshot moved on.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentgwError, ErrorBody, McpCredentials, McpCredentialsList, PutMcpCredentials } from '../contract/index.js';
import { mcpCredentialBinding, mcpCredentialBox } from '../security/credential-box.js';
import type { Services } from '../services.js';
import type { StoredMcpCredential } from '../storage/store.js';
import { AgentId } from './agents.js';
import { audited } from './audit-trail.js';
import { requireTenant, requireWrite } from './principal.js';

const Params = z.strictObject({ id: AgentId, server: z.string().min(1).max(64) });
const AgentParams = z.strictObject({ id: AgentId });

/** What is shown of a stored credential (and what the audit log keeps): never the sealed headers. */
function shown(agentId: string, server: string, c: StoredMcpCredential | undefined): McpCredentials {
  return { agent_id: agentId, server, set: c !== undefined, header_names: c?.header_names ?? [], created_at: c?.created_at ?? null, updated_at: c?.updated_at ?? null };
}

export function mcpCredentialRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
  const box = mcpCredentialBox(s.hasher);

  async function loadOwned(req: { principal: Parameters<typeof requireTenant>[0] }, id: string) {
    const agent = await s.store.getAgent(id);
    if (!agent) throw new AgentgwError('agent_not_found', `Agent ${id} does not exist: check the id.`);
    requireTenant(req.principal, agent.tenant_id);
    return agent;
  }

  /** The server must be an HTTP server of mcp_servers: stdio servers are started by agentgw and take no headers. */
  function checkServer(server: string): void {
    const config = Object.hasOwn(s.config.mcp_servers, server) ? s.config.mcp_servers[server] : undefined;
    if (!config) {
      throw new AgentgwError('mcp_server_not_found', `No MCP server named ${JSON.stringify(server.slice(0, 64))} is configured (mcp_servers): use a name GET /api/mcp/servers lists.`);
    }
    if ('command' in config) {
      throw new AgentgwError('validation_failed', `MCP server ${server} is a stdio server (agentgw starts it itself): it takes no per-agent headers; only HTTP servers do.`, { param: 'server' });
    }
  }

  r.put(
    '/agents/:id/mcp-credentials/:server',
    { schema: { tags: ['agents'], params: Params, body: PutMcpCredentials, response: { 200: McpCredentials, 201: McpCredentials, ...errors } } },
    async (req, reply) => {
      requireWrite(req.principal);
      const { id, server } = req.params;
      const agent = await loadOwned(req, id);
      checkServer(server);
      const now = new Date().toISOString();
      const headers = req.body.headers;
      const sealed = box.seal(JSON.stringify(headers), mcpCredentialBinding(agent.id, server));
      const { credential, created } = await audited(s, req, async (tx) => {
        const before = await tx.getMcpCredential(agent.id, server);
        const put = await tx.putMcpCredential({ agent_id: agent.id, server, sealed, header_names: Object.keys(headers), created_at: now, updated_at: now });
        return [
          put,
          {
            action: put.created ? 'mcp_credentials.create' : 'mcp_credentials.update',
            object: { kind: 'mcp_credentials', id: `${agent.id}/${server}` },
            tenant_id: agent.tenant_id,
            before: before ? shown(agent.id, server, before) : null,
            after: shown(agent.id, server, put.credential),
          },
        ];
      });
      // Every node sends the new headers from its next request on.
      await s.snapshot.changed();
      return reply.code(created ? 201 : 200).send(shown(agent.id, server, credential));
    },
  );

  r.get('/agents/:id/mcp-credentials/:server', { schema: { tags: ['agents'], params: Params, response: { 200: McpCredentials, ...errors } } }, async (req) => {
    const agent = await loadOwned(req, req.params.id);
    checkServer(req.params.server);
    return shown(agent.id, req.params.server, await s.store.getMcpCredential(agent.id, req.params.server));
  });

  r.get('/agents/:id/mcp-credentials', { schema: { tags: ['agents'], params: AgentParams, response: { 200: McpCredentialsList, ...errors } } }, async (req) => {
    const agent = await loadOwned(req, req.params.id);
    return { data: (await s.store.listMcpCredentials(agent.id)).map((c) => shown(agent.id, c.server, c)) };
  });

  r.delete('/agents/:id/mcp-credentials/:server', { schema: { tags: ['agents'], params: Params, response: { 204: z.null(), ...errors } } }, async (req, reply) => {
    requireWrite(req.principal);
    const agent = await loadOwned(req, req.params.id);
    const { server } = req.params;
    // Idempotent: removing what is not set changes nothing, so nothing is audited.
    if (!(await s.store.getMcpCredential(agent.id, server))) return reply.code(204).send(null);
    await audited(s, req, async (tx) => {
      const before = await tx.getMcpCredential(agent.id, server);
      if (before) await tx.deleteMcpCredential(agent.id, server);
      return [undefined, { action: 'mcp_credentials.delete', object: { kind: 'mcp_credentials', id: `${agent.id}/${server}` }, tenant_id: agent.tenant_id, before: before ? shown(agent.id, server, before) : null, after: null }];
    });
    await s.snapshot.changed();
    return reply.code(204).send(null);
  });
}
