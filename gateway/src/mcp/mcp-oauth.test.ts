// OAuth 2.1 on both sides of /mcp, against a real authorization server (oidc-provider on a loopback port):
// - resource side: protected resource metadata (RFC 9728), 401 with its pointer, JWT access tokens checked (issuer,
//   audience, expiry, signature, required scopes) and mapped to an agent; the MCP SDK client's own OAuth support gets a
//   token and calls a tool; agent keys keep working;
// - upstream side: an upstream protected by the same server gets agentgw's client-credentials token, fetched again
//   after it expires and after a 401, and never a client's token.
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SignJWT, importJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../config.js';
import { adminClient } from '../test-support/admin.js';
import { freePort, startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type OAuthTestServer, startOAuthServer } from '../test-support/oauth-server.js';
import { type OAuthMcpFixture, startOAuthMcpServer } from './__fixtures__/oauth-mcp-server.js';

const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Lifetime of agentgw's own tokens for the upstream: short, so the test sees one expire. */
const GATEWAY_TOKEN_TTL_S = 3;

let as: OAuthTestServer;
let foreignAs: OAuthTestServer;
let upstream: OAuthMcpFixture;
let gw: TestGateway;
let resource = '';
let agentKey = '';

/** A token of the client-credentials grant, straight from the token endpoint. */
async function tokenFor(server: OAuthTestServer, client: string, secret: string, forResource: string, scope = 'mcp:tools'): Promise<string> {
  const res = await fetch(server.tokenUrl, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${client}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource: forResource, scope }),
  });
  const body = (await res.json()) as { access_token?: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.access_token!;
}

function initialize(token: string, path = '/mcp'): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  });
}

beforeAll(async () => {
  as = await startOAuthServer([
    { client_id: 'support-bot', client_secret: 'bot-secret', scope: 'mcp:tools mcp:admin', claims: { agentgw_agent: 'acme/support-bot' } },
    { client_id: 'narrow-bot', client_secret: 'narrow-secret', scope: 'mcp:admin', claims: { agentgw_agent: 'acme/support-bot' } },
    { client_id: 'stranger', client_secret: 'stranger-secret', scope: 'mcp:tools', claims: { agentgw_agent: 'acme/nobody' } },
    { client_id: 'agentgw-gw', client_secret: 'gw-secret', scope: 'mcp:tools', ttl_s: GATEWAY_TOKEN_TTL_S },
  ]);
  foreignAs = await startOAuthServer([{ client_id: 'support-bot', client_secret: 'bot-secret', scope: 'mcp:tools', claims: { agentgw_agent: 'acme/support-bot' } }]);
  upstream = await startOAuthMcpServer(as.issuer);
  const port = await freePort();
  resource = `http://127.0.0.1:${port}/mcp`;
  gw = await startTestGateway({
    port,
    config: {
      mcp: { authorization_servers: [{ issuer: as.issuer, audience: resource, agent_claim: 'agentgw_agent', required_scopes: ['mcp:tools'] }] },
      mcp_servers: {
        secure: { url: upstream.url, timeout_ms: 5_000, oauth: { token_url: as.tokenUrl, client_id: 'agentgw-gw', client_secret: 'gw-secret', scopes: ['mcp:tools'] } },
      },
    },
  });
  const { call } = adminClient(gw.adminUrl, gw.adminKey);
  await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
  agentKey = (await call('POST', '/agents', { name: 'support-bot', tenant_id: 'acme' })).api_key;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await as?.close();
  await foreignAs?.close();
});

describe('/mcp as an OAuth protected resource', () => {
  test('publishes its metadata at the well-known path, with the endpoint path appended, naming the authorization server', async () => {
    for (const [path, id] of [['', resource], ['/mcp', resource], ['/mcp/secure', `${resource}/secure`]] as const) {
      const res = await fetch(`${gw.url}/.well-known/oauth-protected-resource${path}`);
      expect(res.status, path).toBe(200);
      // RFC 9728 3.3: the resource is the one whose path the metadata path was made from.
      expect(await res.json()).toEqual({
        resource: id,
        authorization_servers: [as.issuer],
        bearer_methods_supported: ['header'],
        scopes_supported: ['mcp:tools'],
        resource_name: 'agentgw MCP gateway',
      });
    }
    const unknown = await fetch(`${gw.url}/.well-known/oauth-protected-resource/mcp/nope`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('route_not_found');
    expect((await fetch(`${gw.url}/.well-known/oauth-protected-resource/elsewhere`)).status).toBe(404);
  });

  test('a request without credentials is 401 with WWW-Authenticate pointing at the metadata of the endpoint it reached', async () => {
    const res = await fetch(`${gw.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`);
    const one = await fetch(`${gw.url}/mcp/secure`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(one.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp/secure", scope="mcp:tools"`);
  });

  test("the MCP SDK client's OAuth support gets a token from the authorization server and calls a tool through /mcp", async () => {
    const authProvider = new ClientCredentialsProvider({ clientId: 'support-bot', clientSecret: 'bot-secret', expectedIssuer: as.issuer, scope: 'mcp:tools' });
    const before = as.tokenRequests.get('support-bot') ?? 0;
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider }));
    try {
      expect(as.tokenRequests.get('support-bot')).toBe(before + 1);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['secure__whoami']);
      const r = (await client.callTool({ name: 'secure__whoami', arguments: {} })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      // The upstream saw agentgw's own client, never the agent's token.
      expect(text(r)).toBe('called by agentgw-gw');
    } finally {
      await client.close();
    }
    const agentToken = (await authProvider.tokens())!.access_token;
    expect(upstream.authorizations).not.toContain(`Bearer ${agentToken}`);
    expect(upstream.accepted.every((t) => t.client_id === 'agentgw-gw')).toBe(true);
  });

  test("the same flow reaches /mcp/<server> with a token for that endpoint, which /mcp refuses; /mcp's token serves both", async () => {
    const authProvider = new ClientCredentialsProvider({ clientId: 'support-bot', clientSecret: 'bot-secret', expectedIssuer: as.issuer, scope: 'mcp:tools' });
    const client = new Client({ name: 'oauth-test-one', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${resource}/secure`), { authProvider }));
    try {
      expect(text((await client.callTool({ name: 'whoami', arguments: {} })) as CallToolResult)).toBe('called by agentgw-gw');
    } finally {
      await client.close();
    }
    const endpointToken = (await authProvider.tokens())!.access_token;
    const onMcp = await initialize(endpointToken);
    expect(onMcp.status).toBe(401);
    expect(((await onMcp.json()) as { error: { message: string } }).error.message).toMatch(/not for this resource \(its audience must be http:\/\/127\.0\.0\.1:\d+\/mcp\)/);
    expect((await initialize(endpointToken, '/mcp/secure')).status).toBe(200);
    expect((await initialize(await tokenFor(as, 'support-bot', 'bot-secret', resource), '/mcp/secure')).status).toBe(200);
  });

  test("a token for another audience, an expired one and another issuer's are refused with 401 and the metadata pointer", async () => {
    const pointer = `Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`;
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ agentgw_agent: 'acme/support-bot', scope: 'mcp:tools', client_id: 'support-bot' })
      .setProtectedHeader({ alg: 'RS256', kid: as.privateJwk.kid!, typ: 'at+jwt' })
      .setIssuer(as.issuer)
      .setAudience(resource)
      .setSubject('support-bot')
      .setIssuedAt(now - 600)
      .setExpirationTime(now - 120)
      .sign(await importJWK(as.privateJwk, 'RS256'));
    const cases: Array<[string, string, RegExp]> = [
      ['another audience', await tokenFor(as, 'support-bot', 'bot-secret', upstream.url), /not for this resource/],
      ['expired', expired, /expired/],
      ['another issuer', await tokenFor(foreignAs, 'support-bot', 'bot-secret', resource), /not issued by an authorization server this gateway trusts/],
      ['not a JWT', 'opaque-token-value', /neither an agent key/],
    ];
    for (const [what, token, why] of cases) {
      const res = await initialize(token);
      expect(res.status, what).toBe(401);
      expect(res.headers.get('www-authenticate'), what).toBe(pointer);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code, what).toBe('invalid_api_key');
      expect(body.error.message, what).toMatch(why);
      expect(body.error.message, what).not.toContain(token);
    }
  });

  test('a token of a trusted issuer signed with another key is refused', async () => {
    const { generateKeyPair, exportJWK } = await import('jose');
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const forged = await new SignJWT({ agentgw_agent: 'acme/support-bot', scope: 'mcp:tools' })
      .setProtectedHeader({ alg: 'RS256', kid: as.privateJwk.kid! })
      .setIssuer(as.issuer)
      .setAudience(resource)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(await importJWK(await exportJWK(privateKey), 'RS256'));
    const res = await initialize(forged);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/signature/);
  });

  test('scopes are read from scp as a list (Okta) or a space-separated string (Entra ID) when there is no scope claim', async () => {
    const signed = async (scp: unknown) =>
      new SignJWT({ agentgw_agent: 'acme/support-bot', scp })
        .setProtectedHeader({ alg: 'RS256', kid: as.privateJwk.kid!, typ: 'at+jwt' })
        .setIssuer(as.issuer)
        .setAudience(resource)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(await importJWK(as.privateJwk, 'RS256'));
    expect((await initialize(await signed(['mcp:admin', 'mcp:tools']))).status).toBe(200);
    expect((await initialize(await signed('mcp:admin mcp:tools'))).status).toBe(200);
    expect((await initialize(await signed('mcp:admin mcp:toolsx'))).status).toBe(403);
  });

  test('a token without the required scopes is 403 insufficient_scope naming them; one naming no agent is 401', async () => {
    const narrow = await initialize(await tokenFor(as, 'narrow-bot', 'narrow-secret', resource, 'mcp:admin'));
    expect(narrow.status).toBe(403);
    expect(narrow.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="mcp:tools", resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp"`);
    expect(((await narrow.json()) as { error: { code: string; type: string } }).error).toMatchObject({ code: 'insufficient_scope', type: 'policy_blocked' });
    const stranger = await initialize(await tokenFor(as, 'stranger', 'stranger-secret', resource));
    expect(stranger.status).toBe(401);
    expect(((await stranger.json()) as { error: { message: string } }).error.message).toMatch(/"agentgw_agent" claim names no agent/);
  });

  test('agent keys keep working beside tokens', async () => {
    const client = new Client({ name: 'key-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/secure`), { requestInit: { headers: { authorization: `Bearer ${agentKey}` } } }));
    try {
      expect(text((await client.callTool({ name: 'whoami', arguments: {} })) as CallToolResult)).toBe('called by agentgw-gw');
    } finally {
      await client.close();
    }
  });
});

describe('upstream client credentials', () => {
  async function callWhoami(): Promise<string> {
    const client = new Client({ name: 'cc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agentKey}` } } }));
    try {
      const r = (await client.callTool({ name: 'secure__whoami', arguments: {} })) as CallToolResult;
      expect(r.isError, text(r)).toBeFalsy();
      return text(r);
    } finally {
      await client.close();
    }
  }

  test('the token is cached, fetched again once it has expired, and every request carried a valid one', async () => {
    // Start from a fresh token (the one held may be near its end): the upstream refuses the one held once.
    upstream.refuseNext(1);
    expect(await callWhoami()).toBe('called by agentgw-gw');
    const first = upstream.accepted.at(-1)!;
    const refused = upstream.refused;
    // Within its lifetime the same token is used.
    expect(await callWhoami()).toBe('called by agentgw-gw');
    expect(upstream.accepted.at(-1)!.jti).toBe(first.jti);
    await sleep((first.exp + 0.5) * 1000 - Date.now());
    const requests = as.tokenRequests.get('agentgw-gw')!;
    expect(await callWhoami()).toBe('called by agentgw-gw');
    const after = upstream.accepted.at(-1)!;
    expect(after.jti).not.toBe(first.jti);
    expect(after.exp).toBeGreaterThan(first.exp);
    expect(as.tokenRequests.get('agentgw-gw')).toBe(requests + 1);
    // Fetched before it was needed: the upstream refused no request for an expired token.
    expect(upstream.refused).toBe(refused);
    for (const t of upstream.accepted) expect(t.at / 1000).toBeLessThanOrEqual(t.exp);
  });

  test('a request the upstream answers 401 is sent once more with a new token', async () => {
    const requests = as.tokenRequests.get('agentgw-gw')!;
    const refused = upstream.refused;
    upstream.refuseNext(1);
    expect(await callWhoami()).toBe('called by agentgw-gw');
    expect(upstream.refused).toBe(refused + 1);
    expect(as.tokenRequests.get('agentgw-gw')).toBe(requests + 1);
  });
});

describe('per-agent credentials on a server with client credentials', () => {
  test("the agent's own token goes instead of agentgw's, for that agent alone", async () => {
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    const agents = (await call('GET', '/agents?tenant_id=acme')).data as Array<{ id: string; name: string }>;
    const bot = agents.find((a) => a.name === 'support-bot')!;
    const other = await call('POST', '/agents', { name: 'other-bot', tenant_id: 'acme' });
    // A token of the agent's own client, for the upstream (as the agent's operator would get one).
    const own = await tokenFor(as, 'support-bot', 'bot-secret', upstream.url);
    await call('PUT', `/agents/${bot.id}/mcp-credentials/secure`, { headers: { Authorization: `Bearer ${own}` } });
    const whoami = async (key: string) => {
      const client = new Client({ name: 'cc-own', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/secure`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
      try {
        return text((await client.callTool({ name: 'whoami', arguments: {} })) as CallToolResult);
      } finally {
        await client.close();
      }
    };
    try {
      expect(await whoami(agentKey)).toBe('called by support-bot');
      expect(await whoami(other.api_key)).toBe('called by agentgw-gw');
    } finally {
      await call('DELETE', `/agents/${bot.id}/mcp-credentials/secure`);
    }
    expect(await whoami(agentKey)).toBe('called by agentgw-gw');
  });
});

describe('config', () => {
  const load = (mcp: unknown, servers: unknown = {}) => () => loadConfig({ env: {}, overrides: { mcp, mcp_servers: servers } });
  test('authorization servers and upstream oauth are validated with sentences naming the field', () => {
    expect(load({ authorization_servers: [{ issuer: 'https://as.example', audience: 'not a url' }] })).toThrow(/mcp\.authorization_servers\[0\]\.audience: must be the URL clients reach \/mcp at/);
    expect(
      load({ authorization_servers: [{ issuer: 'https://as.example', audience: 'https://gw/mcp' }, { issuer: 'https://as.example', audience: 'https://gw/mcp' }] }),
    ).toThrow(/issuer.*second time/);
    expect(load({ authorization_servers: [{ issuer: 'https://as.example', audience: 'https://gw/mcp', required_scopes: ['two words'] }] })).toThrow(/scope/);
    expect(load({}, { s: { url: 'https://mcp.example', oauth: { token_url: 'https://as.example/token', client_id: 'c' } } })).toThrow(/client_secret/);
    expect(
      load({}, { s: { url: 'https://mcp.example', headers: { authorization: 'Bearer x' }, oauth: { token_url: 'https://as.example/token', client_id: 'c', client_secret: 's' } } }),
    ).toThrow(/mcp_servers\.s\.headers\.authorization: is set and so is oauth/);
    const c = loadConfig({ env: {}, overrides: { mcp: { authorization_servers: [{ issuer: 'https://as.example', audience: 'https://gw/mcp' }] } } });
    expect(c.mcp.authorization_servers).toEqual([{ issuer: 'https://as.example', audience: 'https://gw/mcp', agent_claim: 'sub', required_scopes: [] }]);
  });
});
