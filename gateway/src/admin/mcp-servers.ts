import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentgwError, ErrorBody, McpServer, McpServersQuery, type Policy } from '../contract/index.js';
import type { Services } from '../services.js';
import { requireTenant } from './principal.js';

/**
 * GET /mcp/servers: the upstream MCP servers of the server config, their state and tools, never their secrets. Every
 * role may read it (the tools are what agents are offered); `?agent_id=` keeps the tools that agent's policy allows.
 */
export function mcpServerRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
  r.get('/mcp/servers', { schema: { tags: ['mcp'], querystring: McpServersQuery, response: { 200: z.object({ data: z.array(McpServer) }), ...errors } } }, async (req) => {
    let policies: Policy[] | undefined;
    if (req.query.agent_id !== undefined) {
      const agent = await s.store.getAgent(req.query.agent_id);
      if (!agent) throw new AgentgwError('agent_not_found', `Agent ${req.query.agent_id} does not exist: check the id.`);
      requireTenant(req.principal, agent.tenant_id);
      const policy = agent.policy_id ? s.snapshot.policy(agent.policy_id) : undefined;
      policies = policy ? [policy] : [];
    }
    return { data: await s.mcp.servers(policies) };
  });
}
