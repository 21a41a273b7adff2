// /mcp over three nodes sharing PostgreSQL and Redis, with the MCP SDK's Client behind a loopback balancer that sends
// each HTTP request to the next node (no affinity): progress, sampling, elicitation and a resource subscription each
// work, though the client's answer to a sampling or elicitation request, its cancellation and its notification stream
// land on other nodes than the one running the call or holding the subscription.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type Progress,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { eventually } from '../test-support/admin-api.js';
import { startTestGateway, TEST_REDIS_URL, type TestGateway } from '../test-support/gateway.js';
import { type ConformanceUpstream, startConformanceUpstream } from './__fixtures__/conformance-upstream.js';
import { type HttpMcpFixture, startHttpMcpServer } from './__fixtures__/http-mcp-server.js';

const STDIO_SERVER = fileURLToPath(new URL('./__fixtures__/stdio-relay-server.mjs', import.meta.url));

const text = (r: unknown) => (r as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('');

/** A loopback balancer: each HTTP request goes to the next node in turn; `served` counts what each node got, by method. */
async function startBalancer(nodes: () => TestGateway[]): Promise<{ url: string; served: Array<Record<string, number>>; last: number; close(): Promise<void> }> {
  let n = 0;
  let last = -1;
  const served: Array<Record<string, number>> = [{}, {}, {}];
  const server: Server = createServer((req, res) => {
    const i = n++ % nodes().length;
    const target = new URL(nodes()[i]!.url);
    last = i;
    served[i]![req.method!] = (served[i]![req.method!] ?? 0) + 1;
    const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    get last() {
      return last;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('/mcp round-robin over three nodes (PostgreSQL + Redis)', () => {
  let web: HttpMcpFixture;
  let conf: ConformanceUpstream;
  const nodes: TestGateway[] = [];
  let balancer: Awaited<ReturnType<typeof startBalancer>>;
  let key: string;
  const clients: Client[] = [];

  /** A client through the balancer that samples (answering "<prompt> from the client") and accepts elicitations. */
  async function connect(path: string): Promise<Client> {
    const client = new Client({ name: 'round-robin', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const first = req.params.messages[0]?.content;
      const prompt = first && !Array.isArray(first) && first.type === 'text' ? first.text : '';
      return { role: 'assistant', model: 'client-model', content: { type: 'text', text: `${prompt} from the client` } };
    });
    client.setRequestHandler(ElicitRequestSchema, async (req) => ({ action: 'accept', content: { response: `yes to ${req.params.message}` } }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${balancer.url}${path}`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    [web, conf] = await Promise.all([startHttpMcpServer(), startConformanceUpstream()]);
    const mcp_servers = { web: { url: web.url, timeout_ms: 10_000 }, conf: { url: conf.url, timeout_ms: 10_000 } };
    const config = { counters: { kind: 'redis', url: TEST_REDIS_URL }, mcp_servers };
    // A stdio server on the first node only: the others pass /mcp/local to it.
    nodes.push(await startTestGateway({ storage: 'postgres', config: { ...config, mcp_servers: { ...mcp_servers, local: { command: process.execPath, args: [STDIO_SERVER], timeout_ms: 10_000 } } } }));
    const shared = { storage: 'postgres' as const, pgSchema: nodes[0]!.storage.kind === 'postgres' ? nodes[0]!.storage.schema : '', adminKey: nodes[0]!.adminKey, config };
    nodes.push(await startTestGateway(shared), await startTestGateway(shared));
    balancer = await startBalancer(() => nodes);
    const { call } = adminClient(nodes[0]!.adminUrl, nodes[0]!.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    await call('PUT', '/policies/p-rr', { tenant_id: 'acme' });
    key = (await call('POST', '/agents', { name: 'rr', tenant_id: 'acme', policy_id: 'p-rr' })).api_key;
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await balancer?.close();
    for (const n of nodes.slice(1).reverse()) await n.close();
    await nodes[0]?.close();
    await Promise.all([web?.close(), conf?.close()]);
  });

  test('progress of a call reaches the client whichever node runs it', async () => {
    const c = await connect('/mcp');
    for (let i = 0; i < 3; i++) {
      const seen: Progress[] = [];
      const r = await c.callTool({ name: 'web__progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => void seen.push(p) });
      expect(r.isError).toBeFalsy();
      expect(seen.map((p) => p.progress)).toEqual([1, 2, 3]);
    }
    // Every node served requests of the session.
    expect(balancer.served.map((s) => s.POST ?? 0).every((x) => x > 0)).toBe(true);
  });

  test("sampling: the client's answer, POSTed to another node than the call's, reaches the upstream (on the call's stream and on the standalone stream)", async () => {
    for (const path of ['/mcp/conf', '/mcp']) {
      const c = await connect(path);
      const name = (t: string) => (path === '/mcp' ? `conf__${t}` : t);
      // Six calls: with three nodes, the answers land on each node beside the one running the call.
      for (let i = 0; i < 6; i++) {
        const before = conf.received.length;
        expect(text(await c.callTool({ name: name('sample_on_stream'), arguments: { prompt: `p${i}` } }))).toBe(`sampled: p${i} from the client`);
        expect(conf.received.slice(before)).toEqual([`p${i} from the client`]);
      }
      for (let i = 0; i < 3; i++) {
        expect(text(await c.callTool({ name: name('test_sampling'), arguments: { prompt: `s${i}` } }))).toBe(`LLM response: s${i} from the client`);
      }
    }
  });

  test('sampling asked by calls running at once on different nodes: each answer reaches its own call', async () => {
    const c = await connect('/mcp/conf');
    const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => c.callTool({ name: 'sample_on_stream', arguments: { prompt: `at-once-${i}` } }).then(text)));
    expect(runs).toEqual(Array.from({ length: 6 }, (_, i) => `sampled: at-once-${i} from the client`));
  });

  test("elicitation: the client's answer reaches the upstream from any node", async () => {
    const c = await connect('/mcp');
    for (let i = 0; i < 4; i++) {
      expect(text(await c.callTool({ name: 'conf__test_elicitation', arguments: { message: `go ${i}?` } }))).toBe(
        `User response: action=accept, content={"response":"yes to go ${i}?"}`,
      );
    }
  });

  test('a stdio server configured on one node only: progress, sampling, elicitation and a subscription through /mcp/local from every node', async () => {
    const c = await connect('/mcp/local');
    const before = balancer.served.map((s) => s.POST ?? 0);
    for (let i = 0; i < 3; i++) {
      const seen: Progress[] = [];
      const r = await c.callTool({ name: 'progress', arguments: {} }, undefined, { onprogress: (p) => void seen.push(p) });
      expect(text(r)).toMatch(/^done in process \d+$/);
      expect(seen.map((p) => p.progress)).toEqual([1, 2, 3]);
      expect(text(await c.callTool({ name: 'sample', arguments: { prompt: `q${i}` } }))).toBe(`sampled: q${i} from the client`);
      expect(text(await c.callTool({ name: 'elicit', arguments: { message: `ok ${i}?` } }))).toBe(`answer: accept {"response":"yes to ok ${i}?"}`);
    }
    // The requests reached every node; those without the server passed them on.
    expect(balancer.served.map((s, i) => (s.POST ?? 0) - before[i]!).every((x) => x > 0)).toBe(true);
    const updated: string[] = [];
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await c.subscribeResource({ uri: 'file:///watched.txt' });
    expect(text(await c.callTool({ name: 'touch', arguments: {} }))).toBe('touched (1 subscribed)');
    await eventually(() => updated.length > 0, 5_000, 'notifications/resources/updated');
    expect(updated).toEqual(['file:///watched.txt']);
    // A node that does not run it, and has no node that does to pass it to, answers as for any unknown server.
    const res = await fetch(`${nodes[1]!.url}/mcp/nowhere`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(404);
  });

  test('a cancellation POSTed to another node than the call cancels the call upstream', async () => {
    const c = await connect('/mcp');
    for (let i = 0; i < 3; i++) {
      const started = web.calls.get('wait') ?? 0;
      const cancelled = web.cancelled;
      const ac = new AbortController();
      const call = c.callTool({ name: 'web__wait', arguments: {} }, undefined, { signal: ac.signal });
      await eventually(() => (web.calls.get('wait') ?? 0) > started, 5_000, 'the call upstream');
      const callNode = balancer.last;
      ac.abort();
      await expect(call).rejects.toThrow();
      await eventually(() => web.cancelled > cancelled, 5_000, 'the cancellation upstream');
      expect(balancer.last, 'the cancellation went to another node than the call').not.toBe(callNode);
    }
  });

  test('a resource subscription made on one node notifies the client on the stream another node holds', async () => {
    // The clients of the tests before leave: their notification streams close.
    for (const c of clients.splice(0)) await c.close();
    await eventually(() => nodes.every((n) => n.runtime.mcp.openStreams === 0), 5_000, `the streams closed (${nodes.map((n) => n.runtime.mcp.openStreams)})`);
    let crossed = 0;
    for (let round = 0; round < 4 && crossed < 2; round++) {
      const c = await connect('/mcp');
      const updated: string[] = [];
      c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
      // The client opens its notification stream (GET) after initialising: wait until a node holds it.
      await eventually(() => nodes.filter((n) => n.runtime.mcp.openStreams > 0).length === 1, 5_000, 'the notification stream');
      const streamNode = nodes.findIndex((n) => n.runtime.mcp.openStreams > 0);
      await c.subscribeResource({ uri: 'agentgw://web/file:///readme.md' });
      if (balancer.last !== streamNode) crossed++;
      expect(web.subscriptions.has('file:///readme.md')).toBe(true);
      web.updateResource('file:///readme.md');
      await eventually(() => updated.length > 0, 5_000, 'notifications/resources/updated');
      expect(updated).toEqual(['agentgw://web/file:///readme.md']);
      await c.close();
      await eventually(() => nodes.every((n) => n.runtime.mcp.openStreams === 0), 5_000, `the stream closed (${nodes.map((n) => n.runtime.mcp.openStreams)})`);
    }
    expect(crossed).toBeGreaterThanOrEqual(1);
  });
});
