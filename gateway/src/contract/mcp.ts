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

/** `mcp_servers.<name>.pin`: what tool pinning withholds until an admin accepts it. */
export const McpPinMode = z.enum(['changes', 'strict', 'off']);

/** What tool pinning pins of an upstream tool: what the model reads and what shapes its arguments. */
export const McpToolDefinition = z
  .object({
    description: z.string().nullable(),
    inputSchema: z.unknown(),
    annotations: z.unknown(),
  })
  .meta({ id: 'McpToolDefinition' });

/** One upstream tool as tool pinning sees it (GET /mcp/servers/{name}/tools). */
export const McpPinnedTool = z
  .object({
    name: z.string().describe('The upstream tool name.'),
    status: z.enum(['pinned', 'changed', 'new']).describe('pinned: listed as accepted; changed: listed otherwise than accepted; new: never accepted.'),
    withheld: z.boolean().describe('Not listed to agents and refused with tool_changed until an admin accepts it.'),
    digest: z.string().describe('SHA-256 of the canonical JSON (keys sorted) of the definition listed now.'),
    pinned_digest: z.string().nullable(),
    definition: McpToolDefinition.describe('The definition the server lists now.'),
    pinned_definition: McpToolDefinition.nullable().describe('The accepted definition, for a changed tool (null otherwise).'),
    pinned_at: z.string().nullable(),
    pinned_by: z.string().nullable().describe('Who accepted it; null when it was pinned as first seen.'),
  })
  .meta({ id: 'McpPinnedTool' });
export type McpPinnedTool = z.infer<typeof McpPinnedTool>;

export const McpServerTools = z.object({ server: z.string(), pin: McpPinMode, data: z.array(McpPinnedTool) }).meta({ id: 'McpServerTools' });
export type McpServerTools = z.infer<typeof McpServerTools>;

/** POST /mcp/servers/{name}/tools/{tool}/accept: `digest` makes sure the definition accepted is the one reviewed. */
export const McpToolAccept = z.strictObject({
  digest: z
    .string()
    .regex(/^[0-9a-f]{64}$/, { message: 'digest must be the 64 hex digits GET /mcp/servers/{name}/tools shows' })
    .optional()
    .describe('The digest reviewed: the accept is refused when the server lists another definition now.'),
});
