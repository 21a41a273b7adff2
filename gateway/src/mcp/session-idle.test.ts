// MCP sessions end after mcp.session_idle_s without use, on every node: a request with the id then gets what the MCP
// spec answers for an unknown session (404), and the client initialises a new one. A session its client ended (DELETE)
// ends on every node too.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

const PROTOCOL = '2025-06-18';

interface McpReply {
  status: number;
  sessionId: string | null;
  body: any;
}

async function post(url: string, key: string, message: Record<string, unknown>, sessionId?: string): Promise<McpReply> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  });
  const text = await res.text();
  // A request may be answered as JSON or as one SSE event.
  const json = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)?.[1];
  return { status: res.status, sessionId: res.headers.get('mcp-session-id'), body: json ? JSON.parse(json) : null };
}

async function initialize(url: string, key: string): Promise<string> {
  const init = await post(url, key, { id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'idle-test', version: '1' } } });
  expect(init.status).toBe(200);
  expect(init.sessionId).toBeTruthy();
  return init.sessionId!;
}

async function open(url: string, key: string): Promise<string> {
  const id = await initialize(url, key);
  expect((await post(url, key, { method: 'notifications/initialized' }, id)).status).toBe(202);
  return id;
}

const listTools = (url: string, key: string, sessionId: string) => post(url, key, { id: 2, method: 'tools/list' }, sessionId);

function expectUnknownSession(r: McpReply): void {
  expect(r.status).toBe(404);
  expect(r.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
}

describe.each(['sqlite', 'postgres'] as const)('MCP session idle time on %s', (storage) => {
  let gw: TestGateway;
  let other: TestGateway;
  let key: string;

  beforeAll(async () => {
    gw = await startTestGateway({ storage, config: { mcp: { session_idle_s: 1 } } });
    // A second node on the same database, which has never held the sessions below.
    other = await startTestGateway({
      storage,
      ...(gw.storage.kind === 'sqlite' ? { sqlitePath: gw.storage.path } : { pgSchema: gw.storage.schema }),
      adminKey: gw.adminKey,
      config: { mcp: { session_idle_s: 1 } },
    });
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    await admin.policy('open', { tenant_id: 'acme' });
    key = (await admin.agent('acme', 'bot', 'open')).api_key;
  });
  afterAll(async () => {
    await other?.close();
    await gw?.close();
  });

  // Only what a slower run cannot change is asserted: waiting longer leaves a session idle longer, never less.
  test('a session unused for longer than session_idle_s is a 404 on the node that held it and on any other', async () => {
    const id = await initialize(gw.url, key);
    await new Promise((r) => setTimeout(r, 1_500));
    expectUnknownSession(await listTools(other.url, key, id));
    expectUnknownSession(await listTools(gw.url, key, id));
    // The client starts again, as the spec tells it to.
    expect(await initialize(gw.url, key)).not.toBe(id);
  });
});

describe('a session its client ended', () => {
  let gw: TestGateway;
  let other: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    other = await startTestGateway({ sqlitePath: gw.storage.kind === 'sqlite' ? gw.storage.path : undefined, adminKey: gw.adminKey });
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    await admin.policy('open', { tenant_id: 'acme' });
    key = (await admin.agent('acme', 'bot', 'open')).api_key;
  });
  afterAll(async () => {
    await other?.close();
    await gw?.close();
  });

  test('is a 404 on another node, which would otherwise re-create it from its id', async () => {
    const id = await open(gw.url, key);
    const ended = await fetch(`${gw.url}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${key}`, 'mcp-session-id': id, 'mcp-protocol-version': PROTOCOL } });
    expect(ended.status).toBe(200);
    expectUnknownSession(await listTools(other.url, key, id));
    // A live session is still served by a node that never held it (no affinity needed).
    const live = await open(gw.url, key);
    expect((await listTools(other.url, key, live)).status).toBe(200);
  });
});
