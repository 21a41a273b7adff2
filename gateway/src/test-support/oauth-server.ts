// A real OAuth 2.1 authorization server for the MCP authorization tests: oidc-provider on a loopback port, issuing JWT
// access tokens (RFC 9068) by the client-credentials grant for the resource a client names (RFC 8707).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type JWK, exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export interface OAuthTestClient {
  client_id: string;
  client_secret: string;
  /** Scopes the client may be granted. */
  scope: string;
  /** Lifetime of its access tokens, in seconds (600 unless set). */
  ttl_s?: number;
  /** Claims added to its access tokens (the agent claim, say). */
  claims?: Record<string, unknown>;
}

export interface OAuthTestServer {
  issuer: string;
  tokenUrl: string;
  /** Its signing key, private part included: tests sign tokens with it that the server would not issue. */
  privateJwk: JWK;
  /** Token requests received (any outcome), by client id. */
  tokenRequests: Map<string, number>;
  close(): Promise<void>;
}

/** Scopes any resource of this server offers. */
const RESOURCE_SCOPES = 'mcp:tools mcp:admin';

export async function startOAuthServer(clients: OAuthTestClient[]): Promise<OAuthTestServer> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid: 'as-key-1', alg: 'RS256', use: 'sig' };
  const byId = new Map(clients.map((c) => [c.client_id, c]));
  const tokenRequests = new Map<string, number>();
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: c.scope,
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    jwks: { keys: [privateJwk] },
    cookies: { keys: ['agentgw-test-oauth-cookie-key'] },
    scopes: ['openid', ...RESOURCE_SCOPES.split(' ')],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx: { oidc: { client?: { clientId: string } } }, resource: string) => ({
          scope: RESOURCE_SCOPES,
          audience: resource,
          accessTokenTTL: byId.get(ctx.oidc.client?.clientId ?? '')?.ttl_s ?? 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: async (_ctx: unknown, token: { clientId?: string }) => byId.get(token.clientId ?? '')?.claims,
  });
  const handle = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/token')) {
      const auth = req.headers.authorization ?? '';
      const id = auth.startsWith('Basic ') ? decodeURIComponent(Buffer.from(auth.slice(6), 'base64').toString().split(':')[0] ?? '') : '';
      tokenRequests.set(id, (tokenRequests.get(id) ?? 0) + 1);
    }
    handle(req, res);
  });
  return {
    issuer,
    tokenUrl: `${issuer}/token`,
    privateJwk,
    tokenRequests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
