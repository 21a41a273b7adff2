// An MCP server protected by OAuth (as the MCP authorization spec has one): every request needs a JWT access token of
// the test authorization server for this server's URL, checked against the issuer's JWKS; without one it answers 401
// with its protected resource metadata pointer. Stateless (a new SDK server per request), so each request is checked.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createRemoteJWKSet, jwtVerify } from 'jose';

export interface OAuthMcpFixture {
  url: string;
  /** Every access token accepted, in order: its jti, client and expiry (s). */
  accepted: Array<{ jti: string; client_id: string; exp: number; at: number }>;
  /** Authorization headers refused (401), counted. */
  refused: number;
  /** Every Authorization header received (to check that no other token ever arrives). */
  authorizations: Array<string | undefined>;
  /** Refuses the next n requests with 401 even with a valid token (a token the server revoked). */
  refuseNext(n: number): void;
  close(): Promise<void>;
}

export async function startOAuthMcpServer(issuer: string): Promise<OAuthMcpFixture> {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const http = createServer();
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  let refuse = 0;
  const fixture: OAuthMcpFixture = {
    url,
    accepted: [],
    refused: 0,
    authorizations: [],
    refuseNext(n) {
      refuse = n;
    },
    close: () =>
      new Promise<void>((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  };

  async function check(req: IncomingMessage): Promise<{ client_id: string } | null> {
    const h = req.headers.authorization;
    fixture.authorizations.push(h);
    if (!h?.startsWith('Bearer ')) return null;
    try {
      const { payload } = await jwtVerify(h.slice(7), jwks, { issuer, audience: url });
      if (refuse > 0) {
        refuse--;
        return null;
      }
      const client_id = String(payload.client_id ?? payload.sub);
      fixture.accepted.push({ jti: String(payload.jti), client_id, exp: Number(payload.exp), at: Date.now() });
      return { client_id };
    } catch {
      return null;
    }
  }

  http.on('request', (req, res) => {
    void (async () => {
      const who = await check(req);
      if (!who) {
        fixture.refused++;
        req.resume();
        res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${url.replace('/mcp', '/.well-known/oauth-protected-resource/mcp')}"`, 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_token' }));
        return;
      }
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      const server = new McpServer({ name: 'fixture-oauth', version: '1.0.0' });
      server.registerTool('whoami', { description: 'Says which OAuth client called.' }, async () => ({ content: [{ type: 'text', text: `called by ${who.client_id}` }] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  return fixture;
}
