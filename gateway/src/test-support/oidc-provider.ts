import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type JWK, exportJWK, generateKeyPair } from 'jose';
import Provider, { type ProviderContext } from 'oidc-provider';

/** The people the test issuer knows: login name -> the claims its id tokens carry. */
export type OidcUsers = Record<string, Record<string, unknown>>;

export interface TestIssuer {
  /** The issuer URL (http://127.0.0.1:<port>), as its discovery document names it. */
  issuer: string;
  /** Its signing key, private part included: tests sign tokens with it that the issuer would not issue. */
  privateJwk: JWK;
  /** Registers the console as a client once the gateway's address (its redirect URI) is known. */
  start(client: { client_id: string; client_secret: string; redirect_uri: string }): void;
  close(): Promise<void>;
}

/**
 * A real OpenID provider (the oidc-provider package, its built-in login page accepting any login) on a loopback port.
 * Custom claims (agentgw_role, agentgw_tenant) come with the `agentgw` scope and are put in the id token itself.
 */
export async function startTestIssuer(users: OidcUsers): Promise<TestIssuer> {
  const server = createServer((_req, res) => {
    res.statusCode = 503;
    res.end('not started');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  return {
    issuer,
    privateJwk,
    start(client) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: client.client_id,
            client_secret: client.client_secret,
            redirect_uris: [client.redirect_uri],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        jwks: { keys: [privateJwk] },
        cookies: { keys: ['agentgw-test-issuer-cookie-key'] },
        claims: { openid: ['sub'], profile: ['name'], agentgw: ['agentgw_role', 'agentgw_tenant'] },
        scopes: ['openid', 'profile', 'agentgw'],
        conformIdTokenClaims: false,
        pkce: { required: () => true },
        ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
        findAccount: async (_ctx: unknown, sub: string) =>
          users[sub] ? { accountId: sub, claims: async () => ({ sub, ...users[sub] }) } : undefined,
        // Every client of this test issuer is trusted: no consent page.
        loadExistingGrant: async (ctx: ProviderContext) => {
          const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
          grant.addOIDCScope('openid profile agentgw');
          grant.addOIDCClaims(['sub', 'name', 'agentgw_role', 'agentgw_tenant']);
          await grant.save();
          return grant;
        },
      });
      server.removeAllListeners('request');
      server.on('request', provider.callback());
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
