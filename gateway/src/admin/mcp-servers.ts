import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentgwError, ErrorBody, McpPinnedTool, McpServer, McpServersQuery, McpServerTools, McpToolAccept, type Policy } from '../contract/index.js';
import type { Services } from '../services.js';
import type { McpToolPinRecord } from '../storage/store.js';
import { audited } from './audit-trail.js';
import { requireAdmin, requireTenant } from './principal.js';

const ServerParams = z.strictObject({ name: z.string().max(64) });
const ToolParams = z.strictObject({ name: z.string().max(64), tool: z.string().min(1).max(256) });

/** A pin as the audit log keeps it. */
function pinView(p: McpToolPinRecord): object {
  return { server: p.server, tool: p.tool, digest: p.digest, definition: p.definition, pinned_at: p.pinned_at, pinned_by: p.pinned_by };
}

/**
 * GET /mcp/servers: the upstream MCP servers of the server config, their state and tools, never their secrets. Every
 * role may read it (the tools are what agents are offered); `?agent_id=` keeps the tools that agent's policy allows.
 * GET /mcp/servers/{name}/tools and POST .../tools/{tool}/accept: MCP tool pinning (accepting is for admins).
 */
export function mcpServerRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 502: ErrorBody, 504: ErrorBody };
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

  const serverOf = (name: string): string => {
    if (!s.mcp.hasServer(name)) throw new AgentgwError('mcp_server_not_found', `No MCP server ${name} in mcp_servers: agentgw mcp servers lists them.`);
    return name;
  };

  r.get('/mcp/servers/:name/tools', { schema: { tags: ['mcp'], params: ServerParams, response: { 200: McpServerTools, ...errors } } }, async (req) => {
    return s.mcp.pinnedTools(serverOf(req.params.name));
  });

  r.post(
    '/mcp/servers/:name/tools/:tool/accept',
    { schema: { tags: ['mcp'], params: ToolParams, body: McpToolAccept.nullish(), response: { 200: McpPinnedTool, ...errors } } },
    async (req) => {
      requireAdmin(req.principal, 'accept MCP tool definitions');
      const server = serverOf(req.params.name);
      const tool = req.params.tool;
      const now = await s.mcp.definitionToAccept(server, tool);
      if (!now) throw new AgentgwError('mcp_tool_not_found', `MCP server ${server} lists no tool ${tool}: agentgw mcp tools --server ${server} lists its tools.`);
      const reviewed = req.body?.digest;
      if (reviewed !== undefined && reviewed !== now.digest) {
        throw new AgentgwError(
          'validation_failed',
          `The definition of ${server}/${tool} is now ${now.digest.slice(0, 12)}, not the ${reviewed.slice(0, 12)} you reviewed: review it again and accept that one.`,
          { param: 'digest' },
        );
      }
      const pin: McpToolPinRecord = { server, tool, digest: now.digest, definition: now.definition, pinned_at: new Date().toISOString(), pinned_by: req.principal.name };
      if (now.before?.digest !== now.digest) {
        await audited(s, req, async (tx) => {
          const before = await tx.acceptMcpToolPin(pin);
          return [undefined, { action: 'mcp_tool.accept', object: { kind: 'mcp_tool', id: `${server}/${tool}` }, tenant_id: null, before: before ? pinView(before) : null, after: pinView(pin) }];
        });
        // This node serves it at once; the others read the pins again once their snapshots move on (within a second).
        await s.mcp.accepted(pin);
        await s.snapshot.changed();
      }
      const answer = (await s.mcp.pinnedTools(server)).data.find((t) => t.name === tool);
      if (!answer) throw new AgentgwError('mcp_tool_not_found', `MCP server ${server} no longer lists ${tool}: agentgw mcp tools --server ${server} lists its tools.`);
      return answer;
    },
  );
}
