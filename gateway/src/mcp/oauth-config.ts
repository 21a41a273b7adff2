// OAuth 2.1 in agentgw.yaml: the authorization servers whose access tokens /mcp accepts (`mcp.authorization_servers`),
// and the client-credentials grant agentgw uses towards an upstream MCP server (`mcp_servers.<name>.oauth`).
import { z } from 'zod';

/** An OAuth scope token (RFC 6749 3.3): printable ASCII without spaces, quotes or backslashes. */
const Scope = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/, { message: 'a scope is 1-128 printable characters without spaces, quotes or backslashes' });

/** One authorization server whose JWT access tokens /mcp accepts. */
export const McpAuthorizationServer = z.strictObject({
  /** The issuer exactly as its metadata names it (the token's `iss`); its JWKS is found through its metadata. */
  issuer: z.url({ protocol: /^https?$/, message: 'must be the issuer URL (http:// or https://) exactly as the authorization server names itself' }),
  /**
   * This resource: the URL clients reach /mcp at (https://gw.example.com/mcp). Tokens must name it in `aud`; it is the
   * `resource` of the protected resource metadata, so clients ask the authorization server for tokens for it (RFC 8707).
   */
  audience: z.url({ protocol: /^https?$/, message: 'must be the URL clients reach /mcp at, such as https://gw.example.com/mcp (tokens must name it in aud)' }),
  /** The claim that names the agent: its id, or `<tenant_id>/<agent name>`. */
  agent_claim: z.string().min(1).max(256).default('sub'),
  /** Scopes every token must hold (its `scope` or `scp` claim): missing ones are 403 insufficient_scope. */
  required_scopes: z.array(Scope).default([]),
});
export type McpAuthorizationServer = z.infer<typeof McpAuthorizationServer>;

export const McpAuthorizationServers = z
  .array(McpAuthorizationServer)
  .max(16)
  .default([])
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((s, i) => {
      if (seen.has(s.issuer)) ctx.addIssue({ code: 'custom', path: [i, 'issuer'], message: `names ${s.issuer} a second time: list each authorization server once` });
      seen.add(s.issuer);
    });
    const resources = new Set(list.map((s) => s.audience));
    if (resources.size > 1) {
      ctx.addIssue({ code: 'custom', path: [1, 'audience'], message: 'must be the same for every authorization server: it is the one URL of this resource (/mcp) that clients ask tokens for' });
    }
  });

/** `mcp_servers.<name>.oauth`: agentgw gets its own token for the server with the client-credentials grant. */
export const McpUpstreamOAuth = z.strictObject({
  /** The authorization server's token endpoint. */
  token_url: z.url({ protocol: /^https?$/, message: "must be the authorization server's token endpoint (an http:// or https:// URL)" }),
  client_id: z.string().min(1).max(512),
  /** `${ENV_VAR}`: read from the environment, never logged. */
  client_secret: z.string().min(1).max(4096),
  scopes: z.array(Scope).default([]),
  /** RFC 8707 resource indicator sent with the token request; the server's URL when left out. */
  resource: z.url({ protocol: /^https?$/, message: 'must be the resource URL the token is for (http:// or https://)' }).optional(),
});
export type McpUpstreamOAuth = z.infer<typeof McpUpstreamOAuth>;
