// Requests of the 2026-07-28 revision (no session) beside sessions' requests on the same upstream connection: what an
// upstream asks while it runs a stateless call (sampling, elicitation) never reaches another agent's client, and that
// client's answer never reaches the upstream for it.
import { type AddressInfo } from 'node:net';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, CreateMessageRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type ConformanceUpstream, startConformanceUpstream } from './__fixtures__/conformance-upstream.js';
import { type HttpMcpFixture, startHttpMcpServer } from './__fixtures__/http-mcp-server.js';

const REVISION = '2026-07-28';
const text = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');

/**
 * An HTTP relay in front of `target`: `answer` sees each request (its JSON body parsed, when it has one) and may answer
 * it itself (returns true), else it goes on to the target as it came.
 */
async function relay(target: string, answer: (req: IncomingMessage, msg: { method?: string; params?: Record<string, unknown> } | undefined, res: ServerResponse) => boolean): Promise<{ url: string; server: Server }> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let msg;
      try {
        msg = JSON.parse(body.toString()) as { method?: string; params?: Record<string, unknown> };
      } catch {
        // a GET or an empty body
      }
      if (answer(req, msg, res)) return;
      const out = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: { ...req.headers, host: to.host } }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      out.on('error', () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${to.pathname}`, server };
}

/** One tools/call of the revision, without a session; the result's text. */
async function statelessCall(url: string, key: string, name: string, args: Record<string, unknown>): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': REVISION,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: args, _meta: { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } } },
    }),
  });
  const body = await res.text();
  const lines = (res.headers.get('content-type') ?? '').startsWith('text/event-stream') ? body.split('\n').filter((l) => l.startsWith('data:') && l.length > 5).map((l) => l.slice(5)) : [body];
  const answer = lines.map((l) => JSON.parse(l) as { id?: number; result?: CallToolResult }).find((m) => m.id === 1 && m.result);
  return answer ? text(answer.result) : `no result (${res.status}): ${body.slice(0, 200)}`;
}

describe('2026-07-28 calls beside sessions on one upstream connection', () => {
  let upstream: ConformanceUpstream;
  let sessionsOnly: Server;
  let gw: TestGateway;
  const keys: Record<string, string> = {};
  const clients: Client[] = [];

  beforeAll(async () => {
    upstream = await startConformanceUpstream();
    // Reached as a server of 2025-11-25 only (server/discover is not found): stateless calls share its session connection.
    const hop = await relay(upstream.url, (_req, msg, res) => {
      if (msg?.method !== 'server/discover') return false;
      res.writeHead(404).end();
      return true;
    });
    sessionsOnly = hop.server;
    gw = await startTestGateway({ config: { mcp_servers: { conf: { url: hop.url, timeout_ms: 10_000 } } } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    await call('PUT', '/policies/p-acme', { tenant_id: 'acme' });
    keys.acme = (await call('POST', '/agents', { name: 'acme-agent', tenant_id: 'acme', policy_id: 'p-acme' })).api_key;
    await call('POST', '/tenants', { id: 'globex', name: 'Globex' });
    await call('PUT', '/policies/p-globex', { tenant_id: 'globex' });
    keys.globex = (await call('POST', '/agents', { name: 'globex-agent', tenant_id: 'globex', policy_id: 'p-globex' })).api_key;
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.close();
    await new Promise<void>((r) => (sessionsOnly ? sessionsOnly.close(() => r()) : r()));
    await upstream?.close();
  });

  test("sampling an upstream asks during another tenant's stateless call never reaches a session's client", async () => {
    // Acme's session client samples; its own call holds its sampling answer until Globex's stateless call has ended, so
    // Acme's call is the one call in flight with a client while Globex's runs.
    const seen: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const acme = new Client({ name: 'acme', version: '1.0.0' }, { capabilities: { sampling: {} } });
    acme.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const first = req.params.messages[0]?.content;
      const prompt = first && !Array.isArray(first) && first.type === 'text' ? first.text : '';
      seen.push(prompt);
      if (prompt === 'acme-own') await released;
      return { role: 'assistant', model: 'acme-model', content: { type: 'text', text: `acme answers ${prompt}` } };
    });
    await acme.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/conf`), { requestInit: { headers: { authorization: `Bearer ${keys.acme}` } } }));
    clients.push(acme);
    const acmeCall = acme.callTool({ name: 'sample_on_stream', arguments: { prompt: 'acme-own' } });
    await expect.poll(() => seen.includes('acme-own')).toBe(true);

    const globex = await statelessCall(`${gw.url}/mcp/conf`, keys.globex!, 'sample_on_stream', { prompt: 'globex-secret' });
    release();
    expect(text(await acmeCall)).toBe('sampled: acme answers acme-own');

    expect(seen).not.toContain('globex-secret');
    expect(globex).not.toContain('acme answers');
    expect(upstream.received).not.toContain('acme answers globex-secret');
    // The upstream hears that this client cannot be asked, and the call still answers.
    expect(globex).toMatch(/^Sampling not supported or error: /);
  }, 30_000);
});

describe("2026-07-28 calls with an agent's own upstream credentials", () => {
  let web: HttpMcpFixture;
  let proxy: Server;
  let gw: TestGateway;
  const keys: Record<string, string> = {};
  /** The tools/call requests the upstream received: the query asked, with the Authorization it came with. */
  const calls: Array<{ query: string; authorization: string | undefined }> = [];
  /** Every JSON-RPC method the upstream received. */
  const methods: string[] = [];

  beforeAll(async () => {
    web = await startHttpMcpServer();
    // In front of the upstream, a relay that notes which credentials each tool call arrives with.
    const hop = await relay(web.url, (req, msg) => {
      if (msg?.method) methods.push(msg.method);
      if (msg?.method === 'tools/call') calls.push({ query: String((msg.params?.arguments as { query?: string } | undefined)?.query), authorization: req.headers.authorization });
      return false;
    });
    proxy = hop.server;
    const url = hop.url;
    gw = await startTestGateway({ config: { mcp_servers: { web: { url, headers: { Authorization: 'Bearer server-static' }, timeout_ms: 5_000 } } } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    for (const n of ['a', 'b']) {
      const agent = await call('POST', '/agents', { name: `agent-${n}`, tenant_id: 'acme' });
      keys[n] = agent.api_key;
      if (n === 'a') await call('PUT', `/agents/${agent.id}/mcp-credentials/web`, { headers: { Authorization: 'Bearer agent-a-own-token' } });
    }
  });
  afterAll(async () => {
    await gw?.close();
    proxy?.closeAllConnections();
    await new Promise((r) => proxy?.close(r));
    await web?.close();
  });

  test("each agent's calls reach the upstream with its own credentials, the others' with the server's", async () => {
    const order = ['b1', 'a1', 'b2', 'a2'];
    await Promise.all(order.map(async (q) => expect(await statelessCall(`${gw.url}/mcp/web`, keys[q[0]!]!, 'search', { query: q })).toBe(`results for ${q}`)));
    expect(calls.sort((x, y) => x.query.localeCompare(y.query))).toEqual([
      { query: 'a1', authorization: 'Bearer agent-a-own-token' },
      { query: 'a2', authorization: 'Bearer agent-a-own-token' },
      { query: 'b1', authorization: 'Bearer server-static' },
      { query: 'b2', authorization: 'Bearer server-static' },
    ]);
  });

  test('a call or a read that has been answered is not cancelled upstream afterwards', async () => {
    const from = methods.length;
    expect(await statelessCall(`${gw.url}/mcp/web`, keys.b!, 'search', { query: 'done' })).toBe('results for done');
    const read = await fetch(`${gw.url}/mcp/web`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.b}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': REVISION, 'mcp-method': 'resources/read', 'mcp-name': 'file:///readme.md' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'file:///readme.md', _meta: { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    expect(await read.text()).toContain('# Readme');
    // What the exchange's end may still send arrives within moments.
    await new Promise((r) => setTimeout(r, 300));
    expect(methods.slice(from)).toEqual(['tools/call', 'resources/read']);
  });

  test("what the upstream logs while it runs an agent's stateless call is not sent to another agent's session", async () => {
    const heard: string[] = [];
    const other = new Client({ name: 'listener', version: '1.0.0' });
    other.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void heard.push(String(n.params.data)));
    await other.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/web`), { requestInit: { headers: { authorization: `Bearer ${keys.b}` } } }));
    try {
      // The session's own call: its log reaches it (its notification stream is open from here on).
      expect(text(await other.callTool({ name: 'progress', arguments: { steps: 1 } }))).toBe('done');
      await expect.poll(() => heard).toContain('ran 1 steps');
      expect(await statelessCall(`${gw.url}/mcp/web`, keys.a!, 'progress', { steps: 3 })).toBe('done');
      await new Promise((r) => setTimeout(r, 300));
      expect(heard).not.toContain('ran 3 steps');
    } finally {
      await other.close();
    }
  });

  test('a client that leaves while its call runs cancels it upstream', async () => {
    const from = methods.length;
    const leave = new AbortController();
    const pending = fetch(`${gw.url}/mcp/web`, {
      method: 'POST',
      signal: leave.signal,
      headers: { authorization: `Bearer ${keys.b}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/call', 'mcp-name': 'wait' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    }).then((r) => r.text());
    await expect.poll(() => methods.slice(from)).toContain('tools/call');
    leave.abort();
    await pending.catch(() => undefined);
    await expect.poll(() => methods.slice(from)).toContain('notifications/cancelled');
  });
});

describe('2026-07-28 subscriptions/listen streams', () => {
  let gw: TestGateway;
  const keys: Record<string, string> = {};
  const streams: AbortController[] = [];

  beforeAll(async () => {
    gw = await startTestGateway({ config: { mcp_servers: {} } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    for (const t of ['acme', 'globex']) {
      await call('POST', '/tenants', { id: t, name: t });
      keys[t] = (await call('POST', '/agents', { name: `${t}-agent`, tenant_id: t })).api_key;
    }
  });
  afterAll(async () => {
    for (const s of streams) s.abort();
    await gw?.close();
  });

  /** Opens a listen stream; its reader once the acknowledgement has come. */
  async function listen(key: string): Promise<ReadableStreamDefaultReader<Uint8Array>> {
    const stop = new AbortController();
    streams.push(stop);
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      signal: stop.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': REVISION, 'mcp-method': 'subscriptions/listen' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {} } },
      }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('notifications/subscriptions/acknowledged');
    return reader;
  }

  /** Whether the stream ends within the time (anything it still carries is read and dropped). */
  async function ends(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number): Promise<boolean> {
    const deadline = new Promise<false>((r) => setTimeout(() => r(false), ms));
    const end = (async () => {
      for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return true;
    })();
    return Promise.race([end, deadline]);
  }

  test("one agent's streams are bounded: a new one beyond its share ends its oldest, and another tenant's still opens", async () => {
    const mine = [];
    for (let i = 0; i < 17; i++) mine.push(await listen(keys.acme!));
    expect(await ends(mine[0]!, 2_000)).toBe(true);
    expect(await ends(mine[16]!, 300)).toBe(false);
    expect(await ends(await listen(keys.globex!), 300)).toBe(false);
  });
});
