import type { McpPinnedTool, McpServer, McpServerTools } from '@agentgw/gateway/contract';
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

/** GET /api/mcp/servers/{name}/tools: each tool the server lists now with its pin status and, when changed, both definitions. */
export async function mcpServerTools(flags: ConnectionOptions, server: string): Promise<McpServerTools> {
  const res = await http(flags).send<McpServerTools>('GET', `/mcp/servers/${encodeURIComponent(server)}/tools`);
  return res.data;
}

/** SERVER/TOOL, split at the first `/` (server names never hold one; tool names may). */
export function parseToolRef(ref: string): { server: string; tool: string } {
  const at = ref.indexOf('/');
  if (at <= 0 || at === ref.length - 1) throw new CliError(`"${ref}" is not SERVER/TOOL: name the tool as agentgw mcp tools --server SERVER lists it, e.g. github/create_issue`);
  return { server: ref.slice(0, at), tool: ref.slice(at + 1) };
}

/** POST /api/mcp/servers/{name}/tools/{tool}/accept: pins the definition listed now (refused when it is not `digest`, when given). */
export async function acceptMcpTool(flags: ConnectionOptions, ref: string, digest?: string): Promise<McpPinnedTool> {
  const { server, tool } = parseToolRef(ref);
  // Fewer digits than the table shows match too many definitions (none at all match every one): the review would prove nothing.
  if (digest !== undefined && !/^[0-9a-fA-F]{12,64}$/.test(digest)) {
    throw new CliError(`--digest takes the digest you reviewed: at least the 12 hex digits agentgw mcp tools --server ${server} shows, not ${JSON.stringify(digest)}`);
  }
  if (digest !== undefined && digest.length < 64) {
    // A digest as the table prints it (its first 12 digits): completed from the definition listed now, if it is that one.
    const now = (await mcpServerTools(flags, server)).data.find((t) => t.name === tool);
    if (now && !now.digest.startsWith(digest.toLowerCase())) {
      throw new CliError(`the definition of ${ref} is now ${now.digest.slice(0, 12)}, not the ${digest} you reviewed: review it again (agentgw mcp tools --server ${server})`);
    }
    if (now) digest = now.digest;
  }
  const res = await http(flags).send<McpPinnedTool>('POST', `/mcp/servers/${encodeURIComponent(server)}/tools/${encodeURIComponent(tool)}/accept`, {
    body: digest === undefined ? {} : { digest },
  });
  return res.data;
}
