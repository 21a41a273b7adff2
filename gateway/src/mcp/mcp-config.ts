// `mcp_servers:` in agentgw.yaml: the upstream MCP servers /mcp federates. Secrets are `${ENV_VAR}` (read by loadConfig).
import { z } from 'zod';
import { McpUpstreamOAuth } from './oauth-config.js';

/** Server names prefix tool names as `<server>__<tool>`, so a name never holds `__` (nor ends with `_`): the split is unambiguous. */
export const McpServerName = z
  .string()
  .max(64)
  .regex(/^[a-z0-9]+(?:[-_][a-z0-9]+)*$/, { message: 'MCP server names are lowercase letters and digits, joined by single "-" or "_"' });

/** Per-server timeout of one upstream request (CONTRACT: 60 s by default). */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;

/** What MCP tool pinning holds back until an admin accepts it (CONTRACT: changes by default). */
export const PIN_MODES = ['changes', 'strict', 'off'] as const;
export type PinMode = (typeof PIN_MODES)[number];
const PIN_MESSAGE = 'pin must be changes (withhold tools whose definition changed), strict (withhold every tool until an admin accepts it) or off';

const common = {
  /**
   * changes: a tool whose definition differs from the one first seen (or last accepted) is withheld; strict: every tool
   * is withheld until an admin accepts it, new ones included; off: nothing is withheld or recorded.
   */
  pin: z.enum(PIN_MODES, { message: PIN_MESSAGE }).default('changes'),
  /** How long one upstream request (tools/call, a list) may take before the call fails with upstream_timeout. */
  timeout_ms: z.number().int().min(100).max(3_600_000).default(DEFAULT_MCP_TIMEOUT_MS),
  /** USD per call of a tool (by its upstream name), reserved before the call and billed against the budgets. */
  prices: z.record(z.string().min(1).max(256), z.number().min(0).max(1_000_000)).default({}),
};

/** A Streamable HTTP server. */
export const McpHttpServerConfig = z.strictObject({
  url: z.url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' }),
  /** Sent on every request (Authorization and the like), `${ENV_VAR}` for secrets. */
  headers: z.record(z.string().min(1).max(256), z.string().max(8192)).default({}),
  /** agentgw's own token for the server (client credentials), sent as Authorization; see oauth-config.ts. */
  oauth: McpUpstreamOAuth.optional(),
  ...common,
}).superRefine((c, ctx) => {
  // One source of the server's Authorization: the token would silently replace the static header.
  const header = Object.keys(c.headers).find((k) => k.toLowerCase() === 'authorization');
  if (c.oauth && header !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['headers', header], message: 'is set and so is oauth, and both would be the Authorization header: keep one (oauth gets agentgw a token of its own; headers send a fixed one)' });
  }
});

/** A server agentgw starts itself (on first use) and talks to over stdio. */
export const McpStdioServerConfig = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Added to the few variables the MCP SDK passes on by default (PATH, HOME, ...): the gateway's own secrets stay out. */
  env: z.record(z.string().min(1), z.string()).default({}),
  cwd: z.string().min(1).optional(),
  ...common,
});

export const McpServerConfig = z.union([McpHttpServerConfig, McpStdioServerConfig]);
export type McpServerConfig = z.infer<typeof McpServerConfig>;
export type McpHttpServerConfig = z.infer<typeof McpHttpServerConfig>;
export type McpStdioServerConfig = z.infer<typeof McpStdioServerConfig>;

/** pin read first, so a wrong value is named with its own sentence rather than as a server that fits no transport. */
const PinnedServer = z.looseObject({ pin: z.enum(PIN_MODES, { message: PIN_MESSAGE }).optional() });

export const McpServersConfig = z.record(McpServerName, PinnedServer.pipe(McpServerConfig));
export type McpServersConfig = z.infer<typeof McpServersConfig>;

export function isStdio(c: McpServerConfig): c is McpStdioServerConfig {
  return 'command' in c;
}
