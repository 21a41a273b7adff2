import type { McpServer } from '@agentgw/gateway/contract';
import { AdminHttp } from '../admin-client/http.js';
import type { Agent } from '../admin-client/types.js';
import { CliError } from '../errors.js';
import { findAgent } from './agent-ref.js';
import { connect, resolveAdminUrl, type ConnectionOptions } from './connection.js';

/** One tool an agent may call through /mcp, as it calls it. */
export interface McpToolRow {
  /** `<server>__<tool>`: the name the agent sees in tools/list. */
  tool: string;
  server: string;
  /** USD per call, or null when the tool has no price. */
  price_usd: number | null;
}

function http(flags: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): AdminHttp {
  const adminKey = flags.adminKey ?? env.AGENTGW_ADMIN_KEY;
  if (!adminKey) throw new CliError('no admin key: pass --admin-key or set AGENTGW_ADMIN_KEY');
  return new AdminHttp({ baseUrl: resolveAdminUrl(flags, env), adminKey });
}

/** GET /api/mcp/servers: every upstream MCP server of the gateway's config, its state and tools. */
export async function mcpServers(flags: ConnectionOptions, agentId?: string): Promise<McpServer[]> {
  const res = await http(flags).send<{ data: McpServer[] }>('GET', '/mcp/servers', { query: { agent_id: agentId } });
  return res.data.data;
}

/** The tools an agent (TENANT/NAME or agt_...) may call through /mcp, by its own policy (X-Agent-Policy can only take more away). */
export async function mcpToolsOf(flags: ConnectionOptions, agentRef: string): Promise<{ agent: Agent; tools: McpToolRow[] }> {
  const agent = await findAgent(connect(flags), agentRef);
  const servers = await mcpServers(flags, agent.id);
  const tools = servers.flatMap((s) => s.tools.map((t) => ({ tool: `${s.name}__${t}`, server: s.name, price_usd: s.prices[t] ?? null })));
  return { agent, tools };
}
