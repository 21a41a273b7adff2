// A hostile upstream of the 2026-07-28 revision, and agents that try the multi-round-trip members: what crosses agentgw
// is what its checks read. An input_required answer reaches the client with its requests only (PII redacted), never a
// result beside them; its requestState is sealed for the agent and tool it was issued for; the client's capabilities
// reach the upstream as the revision defines them, nothing of the client's own making; a tool list without ttlMs is
// read once for many calls.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { traceWithSteps } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { errorMeta, rpc } from '../test-support/mcp-2026.js';
import { ModernChannel } from './modern-upstream.js';

interface Received {
  method: string;
  params: Record<string, unknown>;
}

/** A raw 2026-07-28 server: discover, a list of two priced tools, and calls answered input_required with a result smuggled beside. */
async function hostileUpstream(): Promise<{ url: string; server: Server; received: Received[] }> {
  const received: Received[] = [];
  const tools = ['paid', 'cheap', 'broken'].map((name) => ({ name, description: `${name} tool`, inputSchema: { type: 'object', properties: {} } }));
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const msg = JSON.parse(body) as { id: number; method: string; params: Record<string, unknown> };
      received.push({ method: msg.method, params: msg.params });
      const answer = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      if (msg.method === 'server/discover') return answer({ supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1' } });
      if (msg.method === 'tools/list') return answer({ tools, resultType: 'complete' });
      if (msg.method === 'tools/call') {
        if (msg.params.name === 'broken') return answer({ resultType: 'complete', content: 'a string where a list of blocks goes' });
        if (msg.params.requestState !== undefined) return answer({ resultType: 'complete', content: [{ type: 'text', text: `done with ${String(msg.params.requestState)}` }] });
        return answer({
          resultType: 'input_required',
          inputRequests: { who: { method: 'elicitation/create', params: { message: 'Is ann.lee@example.org you?', requestedSchema: { type: 'object', properties: {} } } } },
          requestState: `state-of-${String(msg.params.name)}`,
          content: [{ type: 'text', text: 'the whole answer, ann.lee@example.org, for free' }],
          structuredContent: { email: 'ann.lee@example.org' },
        });
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server, received };
}

const CAPS = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, experimental: { leak: { email: 'ann.lee@example.org' } } } };

describe('a hostile 2026-07-28 upstream, and agents trying the round members', () => {
  let up: Awaited<ReturnType<typeof hostileUpstream>>;
  let gw: TestGateway;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    up = await hostileUpstream();
    gw = await startTestGateway({ config: { mcp_servers: { h: { url: up.url, timeout_ms: 5_000, prices: { paid: 5 } } } } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    await call('PUT', '/policies/p-h', { tenant_id: 'acme', allowed_tools: ['h/*'], rules: { pii: 'redact' } });
    for (const n of ['a', 'b']) keys[n] = (await call('POST', '/agents', { name: `agent-${n}`, tenant_id: 'acme', policy_id: 'p-h' })).api_key;
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise<void>((r) => up.server.close(() => r()));
  });

  test('an input_required round carries its requests (redacted) and a sealed state, and nothing beside them', async () => {
    const trace = `hostile-${Date.now()}`;
    const r = await rpc(`${gw.url}/mcp/h`, keys.a, 'tools/call', { name: 'paid', arguments: {}, _meta: CAPS }, { 'x-agent-trace-id': trace });
    const result = r.response?.result as Record<string, unknown>;
    expect(Object.keys(result).filter((k) => k !== '_meta').sort()).toEqual(['inputRequests', 'requestState', 'resultType']);
    expect(JSON.stringify(result)).not.toContain('ann.lee@example.org');
    expect(JSON.stringify(result.inputRequests)).toContain('[REDACTED:EMAIL]');
    expect(result.requestState).toMatch(/^agentgw1\./);
    // The client's capabilities reached the upstream as the revision defines them.
    const call = up.received.filter((m) => m.method === 'tools/call').at(-1)!;
    expect((call.params._meta as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities']).toEqual({ elicitation: { form: {} } });

    // The retry with the sealed state: the upstream gets its own state back, and the completed call costs its price.
    const done = await rpc(`${gw.url}/mcp/h`, keys.a, 'tools/call', { name: 'paid', arguments: {}, inputResponses: { who: { action: 'accept', content: {} } }, requestState: result.requestState, _meta: CAPS }, { 'x-agent-trace-id': trace });
    expect(JSON.stringify(done.response?.result)).toContain('done with state-of-paid');
    const detail = await traceWithSteps(gw, trace, 2);
    expect(detail.requests.map((s) => s.cost)).toEqual([0, 5]);
  });

  test('a state agentgw did not issue, or issued for another agent or tool, is refused and never reaches the upstream', async () => {
    const first = await rpc(`${gw.url}/mcp/h`, keys.a, 'tools/call', { name: 'paid', arguments: {}, _meta: CAPS });
    const sealed = (first.response?.result as { requestState: string }).requestState;
    const before = up.received.length;
    const tries: Array<[string, string, string]> = [
      [keys.a!, 'paid', 'EXFIL 4111 1111 1111 1111 ann.lee@example.org'],
      [keys.a!, 'paid', `${sealed}x`],
      [keys.b!, 'paid', sealed],
      [keys.a!, 'cheap', sealed],
    ];
    for (const [key, name, requestState] of tries) {
      const r = await rpc(`${gw.url}/mcp/h`, key, 'tools/call', { name, arguments: {}, inputResponses: { who: { action: 'accept', content: {} } }, requestState, _meta: CAPS });
      expect(r.response?.error?.code, `${name} with ${requestState.slice(0, 20)}`).toBe(-32602);
      expect(r.response?.error?.message).toMatch(/requestState is not one agentgw issued/);
    }
    expect(up.received.slice(before).filter((m) => m.method === 'tools/call')).toEqual([]);
  });

  test('a tool list without ttlMs is read once for many calls', async () => {
    const lists = () => up.received.filter((m) => m.method === 'tools/list').length;
    const calls = () => up.received.filter((m) => m.method === 'tools/call').length;
    await rpc(`${gw.url}/mcp/h`, keys.a, 'tools/call', { name: 'cheap', arguments: {}, _meta: CAPS });
    const [listed, called] = [lists(), calls()];
    expect(listed).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) {
      const r = await rpc(`${gw.url}/mcp/h`, keys.a, 'tools/call', { name: 'cheap', arguments: {}, _meta: CAPS });
      expect(r.response?.result?.resultType).toBe('input_required');
    }
    expect([lists(), calls()]).toEqual([listed, called + 5]);
  });

  test('a complete answer of the wrong shape is upstream_bad_response, not passed on and not charged', async () => {
    const r = await rpc(`${gw.url}/mcp/h`, keys.a, 'tools/call', { name: 'broken', arguments: {}, _meta: CAPS });
    expect(r.response?.result?.isError).toBe(true);
    expect(errorMeta(r.response?.result)?.code).toBe('upstream_bad_response');
    expect(JSON.stringify(r.response?.result)).not.toContain('a string where');
  });

  test('a server of earlier revisions that answers server/discover with a 400 and no answer to it is asked once', async () => {
    let discovers = 0;
    const old = createServer((req, res) => {
      discovers++;
      req.resume();
      // As the Python SDK answers a request without a session.
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 'server-error', error: { code: -32600, message: 'Bad Request: No valid session ID provided' } }));
    });
    await new Promise<void>((r) => old.listen(0, '127.0.0.1', r));
    try {
      const channel = new ModernChannel(`http://127.0.0.1:${(old.address() as AddressInfo).port}/mcp`, {}, undefined, 2_000);
      expect(await channel.discover()).toBe(false);
      expect(discovers).toBe(1);
    } finally {
      await new Promise<void>((r) => old.close(() => r()));
    }
  });
});
