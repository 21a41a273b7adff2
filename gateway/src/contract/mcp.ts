import { z } from 'zod';

/** One upstream MCP server of `mcp_servers:`, as GET /mcp/servers shows it: never its URL, headers, command or env (secrets). */
export const McpServer = z
  .object({
    name: z.string(),
    transport: z.enum(['http', 'stdio']),
    status: z.enum(['idle', 'connecting', 'up', 'down']).describe('idle: not used yet (stdio servers start on first use); down: the last attempt failed.'),
    error: z.string().nullable().describe('Why it is down, in a few words.'),
    timeout_ms: z.number().int(),
    tools: z.array(z.string()).describe('Upstream tool names: agents call them <server>__<name>, policies name them <server>/<name>.'),
    prices: z.record(z.string(), z.number()).describe('USD per call of the priced tools (a tool without a price costs nothing).'),
  })
  .meta({ id: 'McpServer' });
export type McpServer = z.infer<typeof McpServer>;

/** `?agent_id=` lists only the tools that agent's policy allows (what `agentgw mcp tools --agent` prints). */
export const McpServersQuery = z.strictObject({ agent_id: z.string().max(64).optional() });
