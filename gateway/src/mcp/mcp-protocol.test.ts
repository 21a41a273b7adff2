// /mcp relays what the protocol carries: Origin and Host validation, errors with their request's id, progress,
// cancellation, logging, the upstreams' capabilities and resource URIs inside results. The SDK's Client against the
// gateway, in front of the HTTP fixture server.
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { eventually } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from '../test-support/gateway.js';
import { federatedPromptResult } from './names.js';
import { type HttpMcpFixture, startHttpMcpServer } from './__fixtures__/http-mcp-server.js';

async function connect(url: string, key: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  const client = new Client({ name: 'mcp-protocol-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** A POST with headers fetch would not send (Host). */
function rawPost(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(INIT));
  });
}

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };

describe('/mcp protocol relay', () => {
  let upstream: HttpMcpFixture;
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    upstream = await startHttpMcpServer();
    gw = await startTestGateway({
      config: {
        mcp: { allowed_origins: ['https://app.example.com'] },
        mcp_servers: { web: { url: upstream.url, timeout_ms: 5_000 } },
      },
    });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    await call('PUT', '/policies/p-main', { tenant_id: 'acme', allowed_tools: ['web/*'] });
    key = (await call('POST', '/agents', { name: 'main', tenant_id: 'acme', policy_id: 'p-main' })).api_key;
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  function post(headers: Record<string, string>, body: unknown = INIT): Promise<Response> {
    return fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
  }

  test("a page of another origin, or a Host that is not the gateway's (DNS rebinding), is refused with 403 origin_not_allowed", async () => {
    const evil = await post({ origin: 'http://evil.example.com' });
    expect(evil.status).toBe(403);
    const body = (await evil.json()) as { error: { code: string; type: string; message: string } };
    expect(body.error).toMatchObject({ code: 'origin_not_allowed', type: 'policy_blocked' });
    expect(body.error.message).toMatch(/mcp\.allowed_origins/);
    // Refused before auth: no key needed to be told, and a valid key does not help.
    const rebound = await rawPost(`${gw.url}/mcp`, { host: 'attacker.example.com:8080', authorization: `Bearer ${key}` });
    expect(rebound.status).toBe(403);
    expect((JSON.parse(rebound.body) as { error: { code: string } }).error.code).toBe('origin_not_allowed');
    // An allowed origin's host is accepted as Host (a page served there through a proxy on this machine).
    expect((await rawPost(`${gw.url}/mcp`, { host: 'app.example.com', authorization: `Bearer ${key}` })).status).toBe(200);
    expect((await post({ origin: 'null' })).status).toBe(403);
    // Same origin, a listed origin and no Origin at all are served.
    for (const headers of [{ origin: gw.url }, { origin: 'https://app.example.com' }, {}] as Array<Record<string, string>>) {
      const ok = await post(headers);
      expect(ok.status, JSON.stringify(headers)).toBe(200);
      await ok.body?.cancel();
    }
  });

  test("errors carry the request's id, and their messages are not prefixed twice", async () => {
    const noSession = await post({}, { jsonrpc: '2.0', id: 'list-1', method: 'tools/list' });
    expect(noSession.status).toBe(400);
    expect(await noSession.json()).toMatchObject({ id: 'list-1', error: { code: -32000 } });
    const unknown = await post({ 'mcp-session-id': 'mcp_nope', 'mcp-protocol-version': '2025-06-18' }, { jsonrpc: '2.0', id: 9, method: 'tools/list' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ id: 9, error: { code: -32001 } });
    const { client } = await connect(gw.url, key);
    try {
      const err = await client.callTool({ name: 'web__no_such_tool', arguments: {} }).then(() => undefined, (e: Error) => e);
      expect(err?.message).toMatch(/^MCP error -32602: Unknown tool web__no_such_tool/);
      expect(err?.message).not.toMatch(/MCP error -32602: MCP error/);
    } finally {
      await client.close();
    }
  });

  test("a client's progressToken reaches the upstream and its progress comes back; cancelling a call cancels it upstream", async () => {
    const { client } = await connect(gw.url, key);
    try {
      const seen: Array<{ progress: number; total?: number; message?: string }> = [];
      const r = (await client.callTool({ name: 'web__progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => void seen.push(p) })) as CallToolResult;
      expect(r.content).toEqual([{ type: 'text', text: 'done' }]);
      expect(seen).toEqual([1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i}` })));
      // Without a token, no progress is asked for (and none is sent).
      expect(((await client.callTool({ name: 'web__progress', arguments: {} })) as CallToolResult).isError).toBeFalsy();

      const before = upstream.calls.get('wait') ?? 0;
      const cancelledBefore = upstream.cancelled;
      const controller = new AbortController();
      const call = client.callTool({ name: 'web__wait', arguments: {} }, undefined, { signal: controller.signal });
      await eventually(() => (upstream.calls.get('wait') ?? 0) > before, 5_000, 'the call to reach the upstream');
      controller.abort('changed my mind');
      await expect(call).rejects.toThrow();
      await eventually(() => upstream.cancelled > cancelledBefore, 5_000, 'notifications/cancelled to reach the upstream');
    } finally {
      await client.close();
    }
  });

  test("initialize advertises the upstreams' logging; logging/setLevel reaches them and their messages reach the caller tagged with the server", async () => {
    const { client } = await connect(gw.url, key);
    try {
      expect(client.getServerCapabilities()?.logging).toEqual({});
      const messages: Array<{ level: string; logger?: string; data: unknown }> = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
      await client.setLoggingLevel('info');
      expect(upstream.logLevel).toBe('info');
      await client.callTool({ name: 'web__progress', arguments: { steps: 1 } });
      expect(messages).toEqual([{ level: 'info', logger: 'web/fixture', data: 'ran 1 steps' }]);
      // Below the level the client set: not sent.
      await client.setLoggingLevel('warning');
      expect(upstream.logLevel).toBe('warning');
      await client.callTool({ name: 'web__progress', arguments: { steps: 1 } });
      expect(messages).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  test("two agents' sessions on one node: the upstream gets the more verbose level, each session only what its own lets through", async () => {
    const quiet = await connect(gw.url, key);
    const chatty = await connect(gw.url, key);
    try {
      const heard = { quiet: 0, chatty: 0 };
      quiet.client.setNotificationHandler(LoggingMessageNotificationSchema, () => void heard.quiet++);
      chatty.client.setNotificationHandler(LoggingMessageNotificationSchema, () => void heard.chatty++);
      await chatty.client.setLoggingLevel('info');
      await quiet.client.setLoggingLevel('error');
      expect(upstream.logLevel).toBe('info');
      await quiet.client.callTool({ name: 'web__progress', arguments: { steps: 1 } });
      await chatty.client.callTool({ name: 'web__progress', arguments: { steps: 1 } });
      expect(heard).toEqual({ quiet: 0, chatty: 1 });
    } finally {
      await quiet.client.close();
      await chatty.client.close();
    }
  });

  test('resource links and embedded resources in tool results are named as resources/list names them, and resources/read takes them', async () => {
    const { client } = await connect(gw.url, key);
    try {
      const r = (await client.callTool({ name: 'web__linked', arguments: {} })) as CallToolResult;
      expect(r.content).toEqual([
        { type: 'resource_link', uri: 'agentgw://web/file:///readme.md', name: 'readme', mimeType: 'text/markdown' },
        { type: 'resource', resource: { uri: 'agentgw://web/file:///readme.md', mimeType: 'text/markdown', text: '# Readme' } },
      ]);
      const listed = (await client.listResources()).resources.map((x) => x.uri);
      const link = r.content[0] as { uri: string };
      expect(listed).toContain(link.uri);
      const read = await client.readResource({ uri: link.uri });
      expect(read.contents[0]).toMatchObject({ uri: link.uri });
    } finally {
      await client.close();
    }
  });

  test('prompt messages name embedded resources the same way', () => {
    const r = federatedPromptResult('docs', {
      messages: [
        { role: 'user' as const, content: { type: 'resource' as const, resource: { uri: 'file:///a.md', text: 'a' } } },
        { role: 'user' as const, content: { type: 'resource_link' as const, uri: 'https://x.example/b', name: 'b' } },
        { role: 'user' as const, content: { type: 'text' as const, text: 'file:///a.md stays as written in text' } },
      ],
    });
    expect(r.messages.map((m) => m.content)).toEqual([
      { type: 'resource', resource: { uri: 'agentgw://docs/file:///a.md', text: 'a' } },
      { type: 'resource_link', uri: 'agentgw://docs/https://x.example/b', name: 'b' },
      { type: 'text', text: 'file:///a.md stays as written in text' },
    ]);
  });

  test('completion/complete is relayed for resource templates; resources/subscribe brings notifications/resources/updated', async () => {
    const { client } = await connect(gw.url, key);
    try {
      const caps = client.getServerCapabilities();
      expect(caps?.completions).toEqual({});
      expect(caps?.resources).toMatchObject({ subscribe: true });
      const template = (await client.listResourceTemplates()).resourceTemplates.find((t) => t.name === 'doc');
      expect(template?.uriTemplate).toBe('agentgw://web/file:///docs/{name}');
      const done = await client.complete({ ref: { type: 'ref/resource', uri: template!.uriTemplate }, argument: { name: 'name', value: 'al' } });
      expect(done.completion.values).toEqual(['alpha', 'alpine']);
      await expect(client.complete({ ref: { type: 'ref/prompt', name: 'nowhere__x' }, argument: { name: 'a', value: '' } })).rejects.toMatchObject({ code: -32602 });

      const updated: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
      // The client opens its notification stream after initialising; give it a moment.
      await new Promise((r) => setTimeout(r, 300));
      await client.subscribeResource({ uri: 'agentgw://web/file:///readme.md' });
      expect(upstream.subscriptions.has('file:///readme.md')).toBe(true);
      upstream.updateResource('file:///readme.md');
      await eventually(() => updated.length > 0, 5_000, 'notifications/resources/updated');
      expect(updated).toEqual(['agentgw://web/file:///readme.md']);
      await client.unsubscribeResource({ uri: 'agentgw://web/file:///readme.md' });
      expect(upstream.subscriptions.has('file:///readme.md')).toBe(false);
      await expect(client.subscribeResource({ uri: 'agentgw://nowhere/x' })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  });

  test('round-robin over three nodes: progress and log messages of a call come back on the call, whichever node serves it', async () => {
    const shared: TestGatewayOptions = {
      sqlitePath: (gw.storage as { path: string }).path,
      adminKey: gw.adminKey,
      config: { mcp_servers: { web: { url: upstream.url, timeout_ms: 5_000 } } },
    };
    const nodes = [gw, await startTestGateway(shared), await startTestGateway(shared)];
    let n = 0;
    const roundRobin: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      url.host = new URL(nodes[n++ % nodes.length]!.url).host;
      return fetch(url, init);
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } }, fetch: roundRobin });
    const client = new Client({ name: 'mcp-protocol-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const logs: string[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (m) => void logs.push(`${m.params.logger}: ${String(m.params.data)}`));
      for (let i = 0; i < 3; i++) {
        const seen: number[] = [];
        const r = (await client.callTool({ name: 'web__progress', arguments: { steps: 2 } }, undefined, { onprogress: (p) => void seen.push(p.progress) })) as CallToolResult;
        expect(r.content).toEqual([{ type: 'text', text: 'done' }]);
        expect(seen).toEqual([1, 2]);
      }
      expect(logs).toEqual(Array.from({ length: 3 }, () => 'web/fixture: ran 2 steps'));
      expect(nodes.slice(1).map((g) => g.runtime.mcp.sessionCount)).toEqual([1, 1]);
    } finally {
      await client.close();
      await Promise.all(nodes.slice(1).map((g) => g.close()));
    }
  });
});
