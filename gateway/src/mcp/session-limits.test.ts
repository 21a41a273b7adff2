// MCP sessions cost a bounded amount: limits.mcp_sessions_per_agent and limits.mcp_sessions end the longest unused
// session first (busy ones last), on every node, with the 404 the MCP spec gives an unknown session; idle sessions keep
// only a small record and are rebuilt when used again. A request that repeats the id of one in flight in its session is
// a JSON-RPC error at once, and the first is still answered.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type HttpMcpFixture, startHttpMcpServer } from './__fixtures__/http-mcp-server.js';

const PROTOCOL = '2025-06-18';

interface McpReply {
  status: number;
  sessionId: string | null;
  body: any;
}

async function post(url: string, key: string, message: unknown, sessionId?: string): Promise<McpReply> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL } : {}),
    },
    body: JSON.stringify(message),
  });
  const text = await res.text();
  // A request may be answered as JSON or as one SSE event.
  const json = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)?.[1];
  return { status: res.status, sessionId: res.headers.get('mcp-session-id'), body: json ? JSON.parse(json) : null };
}

async function open(url: string, key: string): Promise<string> {
  const init = await post(url, key, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'limits-test', version: '1' } } });
  expect(init.status).toBe(200);
  expect((await post(url, key, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.sessionId!)).status).toBe(202);
  return init.sessionId!;
}

const listTools = (url: string, key: string, sessionId: string, id: number | string = 2) => post(url, key, { jsonrpc: '2.0', id, method: 'tools/list' }, sessionId);
const callSlow = (url: string, key: string, sessionId: string, id: number | string) =>
  post(url, key, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'web__slow', arguments: {} } }, sessionId);

async function expectServed(url: string, key: string, sessionId: string): Promise<void> {
  const r = await listTools(url, key, sessionId);
  expect(r.status).toBe(200);
  expect(r.body.result.tools.map((t: { name: string }) => t.name)).toContain('web__slow');
}

async function expectEnded(url: string, key: string, sessionId: string): Promise<void> {
  const r = await listTools(url, key, sessionId);
  expect(r.status).toBe(404);
  expect(r.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
}

describe('MCP session limits and repeated ids', () => {
  let upstream: HttpMcpFixture;
  let gw: TestGateway;
  let other: TestGateway;
  const keys: Record<string, string> = {};
  let ann: string[] = [];

  beforeAll(async () => {
    upstream = await startHttpMcpServer();
    const config = { mcp_servers: { web: { url: upstream.url } } };
    gw = await startTestGateway({ config: { ...config, limits: { mcp_sessions_per_agent: 3, mcp_sessions: 5 } } });
    // A second node on the same database with the default limits.
    other = await startTestGateway({ sqlitePath: gw.storage.kind === 'sqlite' ? gw.storage.path : undefined, adminKey: gw.adminKey, config });
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    await admin.policy('open', { tenant_id: 'acme' });
    for (const name of ['ann', 'bob', 'cat', 'dan']) keys[name] = (await admin.agent('acme', name, 'open')).api_key;
  });
  afterAll(async () => {
    await other?.close();
    await gw?.close();
    await upstream?.close();
  });

  test("an agent's session past mcp_sessions_per_agent ends its longest unused one, on every node; others' stay", async () => {
    const k = keys.ann!;
    const [s1, s2, s3] = [await open(gw.url, k), await open(gw.url, k), await open(gw.url, k)];
    await expectServed(gw.url, k, s1); // s2 is now the longest unused
    const s4 = await open(gw.url, k);
    await expectEnded(gw.url, k, s2);
    await expectEnded(other.url, k, s2);
    for (const s of [s1, s3, s4]) await expectServed(gw.url, k, s);
    expect(gw.runtime.mcp.sessionCount).toBe(3);
    ann = [s1, s3, s4];
  });

  test('a session past mcp_sessions ends the longest unused of any agent', async () => {
    const [b1, b2] = [await open(gw.url, keys.bob!), await open(gw.url, keys.bob!)];
    expect(gw.runtime.mcp.sessionCount).toBe(5);
    const c1 = await open(gw.url, keys.cat!);
    // ann's three were used before bob's: the first of them (used before the other two above) is gone.
    expect(gw.runtime.mcp.sessionCount).toBe(5);
    await expectEnded(gw.url, keys.ann!, ann[0]!);
    for (const s of [b1, b2]) await expectServed(gw.url, keys.bob!, s);
    await expectServed(gw.url, keys.cat!, c1);
  });

  test('a session with a request in flight is pushed out only after the idle ones', async () => {
    const k = keys.dan!;
    const busy = await open(gw.url, k);
    const call = callSlow(gw.url, k, busy, 'slow-1');
    await new Promise((r) => setTimeout(r, 200));
    const idle = await open(gw.url, k);
    await open(gw.url, k);
    await open(gw.url, k); // dan's fourth: busy is the longest unused, idle goes instead
    await expectEnded(gw.url, k, idle);
    const answered = await call;
    expect(answered.status).toBe(200);
    expect(answered.body.result.content[0].text).toBe('late');
    await expectServed(gw.url, k, busy);
  });

  test('a repeated id of a request in flight is a JSON-RPC error at once; the first is answered; the id is free again after', async () => {
    const k = keys.cat!;
    const s = await open(gw.url, k);
    const first = callSlow(gw.url, k, s, 7);
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    const repeated = await listTools(gw.url, k, s, 7);
    expect(Date.now() - started).toBeLessThan(500);
    expect(repeated.status).toBe(400);
    expect(repeated.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: expect.stringMatching(/id 7 is already used/) } });
    // The same id as a string is another id.
    expect((await listTools(gw.url, k, s, '7')).status).toBe(200);
    const answered = await first;
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ id: 7, result: { content: [{ text: 'late' }] } });
    expect((await listTools(gw.url, k, s, 7)).status).toBe(200);
    // An id twice in one batch is refused whole.
    const batch = await post(gw.url, k, [{ jsonrpc: '2.0', id: 9, method: 'tools/list' }, { jsonrpc: '2.0', id: 9, method: 'tools/list' }], s);
    expect(batch.status).toBe(400);
    expect(batch.body.error.code).toBe(-32600);
  });

  test('a cancelled request frees its id', async () => {
    const k = keys.cat!;
    const s = await open(gw.url, k);
    // A cancelled request is not answered (MCP): its client stops reading, as the SDK's does.
    const gone = new AbortController();
    const first = fetch(`${gw.url}/mcp`, {
      method: 'POST',
      signal: gone.signal,
      headers: { authorization: `Bearer ${k}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-session-id': s, 'mcp-protocol-version': PROTOCOL },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'c-1', method: 'tools/call', params: { name: 'web__slow', arguments: {} } }),
    });
    expect((await first).status).toBe(200);
    expect((await post(gw.url, k, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c-1' } }, s)).status).toBe(202);
    gone.abort();
    expect((await listTools(gw.url, k, s, 'c-1')).status).toBe(200);
  });

  test('idle sessions past the most recently used few drop their SDK objects and are rebuilt when used', async () => {
    // The other node, with the default limits: 300 sessions of one agent are held, most of them as records only.
    const k = keys.ann!;
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(...(await Promise.all(Array.from({ length: 10 }, () => open(other.url, k)))));
    expect(other.runtime.mcp.sessionCount).toBeGreaterThanOrEqual(300);
    expect(other.runtime.mcp.builtSessionCount).toBeLessThanOrEqual(256);
    await expectServed(other.url, k, ids[0]!);
    const call = await callSlow(other.url, k, ids[1]!, 3);
    expect(call.body.result.content[0].text).toBe('late');
    // A DELETE of a session put down ends it.
    const del = await fetch(`${other.url}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${k}`, 'mcp-session-id': ids[2]!, 'mcp-protocol-version': PROTOCOL } });
    expect(del.status).toBe(200);
    await expectEnded(other.url, k, ids[2]!);
  });
});
