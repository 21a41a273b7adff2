// /mcp/<server> serves one upstream alone, with the upstream's own tool names, prompt names and resource URIs, under the
// same auth, policies (allowed_tools and tool_rules over `server/tool`), prices and traces as /mcp; its sessions are its
// own. The SDK's Client against the gateway, in front of two HTTP fixture servers.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { eventually, traceWithSteps } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from '../test-support/gateway.js';
import { type HttpMcpFixture, startHttpMcpServer } from './__fixtures__/http-mcp-server.js';

async function connect(url: string, key: string, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } } });
  const client = new Client({ name: 'mcp-single-server-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const meta = (r: CallToolResult) => r._meta?.['agentgw/error'] as { type: string; code: string } | undefined;
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('/mcp/<server>', () => {
  let web: HttpMcpFixture;
  let docs: HttpMcpFixture;
  let gw: TestGateway;
  let key = '';
  let agentId = '';

  beforeAll(async () => {
    web = await startHttpMcpServer();
    docs = await startHttpMcpServer();
    gw = await startTestGateway({
      config: {
        mcp_servers: {
          web: { url: web.url, prices: { paid_lookup: 0.01 }, timeout_ms: 5_000 },
          docs: { url: docs.url, timeout_ms: 5_000 },
        },
      },
    });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    await call('PUT', '/policies/p-web', {
      tenant_id: 'acme',
      allowed_tools: ['web/search', 'web/linked', 'web/paid_lookup', 'web/send_email', 'docs/*'],
      tool_rules: [{ tools: ['web/send_email'], action: 'deny', reason: 'no email from here' }],
    });
    const agent = await call('POST', '/agents', { name: 'main', tenant_id: 'acme', policy_id: 'p-web' });
    key = agent.api_key;
    agentId = agent.id;
  });
  afterAll(async () => {
    await gw?.close();
    await web?.close();
    await docs?.close();
  });

  test("lists and calls the server's tools under their own names, filtered by allowed_tools over server/tool, with prices", async () => {
    const trace = `single-${Date.now()}`;
    const { client } = await connect(`${gw.url}/mcp/web`, key, { 'x-agent-trace-id': trace });
    try {
      const tools = (await client.listTools()).tools;
      expect(tools.map((t) => t.name).sort()).toEqual(['linked', 'paid_lookup', 'search', 'send_email']);
      expect(tools.find((t) => t.name === 'paid_lookup')?._meta).toMatchObject({ 'agentgw/price_usd': 0.01 });
      const r = (await client.callTool({ name: 'search', arguments: { query: 'mcp' } })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      expect(text(r)).toBe('results for mcp');
      // Another server's tools are not served here, under either name.
      for (const name of ['docs__search', 'web__search']) {
        const err = await client.callTool({ name, arguments: { query: 'x' } }).then(() => undefined, (e: Error) => e);
        expect(err?.message, name).toMatch(/-32602/);
      }
      const refused = (await client.callTool({ name: 'delete_everything', arguments: {} })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(meta(refused)?.code).toBe('tool_not_allowed');
      const denied = (await client.callTool({ name: 'send_email', arguments: { to: 'a@b.c', body: 'hi' } })) as CallToolResult;
      expect(meta(denied)).toEqual({ type: 'policy_blocked', code: 'tool_denied' });
      expect(text(denied)).toMatch(/^agentgw refused the call to web\/send_email: no email from here/);
      expect(web.calls.get('send_email') ?? 0).toBe(0);
      await client.callTool({ name: 'paid_lookup', arguments: {} });
    } finally {
      await client.close();
    }
    const detail = await traceWithSteps(gw, trace, 6);
    expect(detail.requests.map((s) => [s.endpoint, s.tool, s.status])).toEqual([
      ['mcp', 'web/search', 'ok'],
      ['mcp', 'web/docs__search', 'error'],
      ['mcp', 'web/web__search', 'error'],
      ['mcp', 'web/delete_everything', 'blocked'],
      ['mcp', 'web/send_email', 'blocked'],
      ['mcp', 'web/paid_lookup', 'ok'],
    ]);
    // The priced call is billed to the agent, as on /mcp.
    const agent = (await adminClient(gw.adminUrl, gw.adminKey).call('GET', `/agents/${agentId}`)) as { spend: { day: number } };
    expect(agent.spend.day).toBeCloseTo(0.01, 10);
  });

  test('resources and prompts keep their upstream names and URIs, in lists, reads and tool results', async () => {
    const { client } = await connect(`${gw.url}/mcp/docs`, key);
    try {
      expect((await client.listTools()).tools.some((t) => t.name === 'delete_everything')).toBe(true);
      const resources = (await client.listResources()).resources.map((r) => r.uri);
      expect(resources).toContain('file:///readme.md');
      expect(resources.every((u) => !u.startsWith('agentgw://'))).toBe(true);
      const read = await client.readResource({ uri: 'file:///readme.md' });
      expect(read.contents[0]).toMatchObject({ uri: 'file:///readme.md' });
      const linked = (await client.callTool({ name: 'linked', arguments: {} })) as CallToolResult;
      expect(linked.content).toMatchObject([{ type: 'resource_link', uri: 'file:///readme.md' }, { type: 'resource', resource: { uri: 'file:///readme.md' } }]);
      const federated = await client.readResource({ uri: 'agentgw://docs/file:///readme.md' }).then(() => undefined, (e: Error) => e);
      expect(federated?.message).toMatch(/-32602/);
      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      expect(prompts.every((n) => !n.includes('__'))).toBe(true);
    } finally {
      await client.close();
    }
  });

  test("completion, subscriptions and log messages speak the upstream's URIs and logger names", async () => {
    const { client } = await connect(`${gw.url}/mcp/docs`, key);
    try {
      const template = (await client.listResourceTemplates()).resourceTemplates.find((t) => t.name === 'doc');
      expect(template?.uriTemplate).toBe('file:///docs/{name}');
      const done = await client.complete({ ref: { type: 'ref/resource', uri: template!.uriTemplate }, argument: { name: 'name', value: 'al' } });
      expect(done.completion.values).toEqual(['alpha', 'alpine']);
      const messages: Array<{ level: string; logger?: string; data: unknown }> = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
      await client.setLoggingLevel('info');
      await client.callTool({ name: 'progress', arguments: { steps: 1 } });
      expect(messages).toEqual([{ level: 'info', logger: 'fixture', data: 'ran 1 steps' }]);
      const updated: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
      // The client opens its notification stream after initialising; give it a moment.
      await new Promise((r) => setTimeout(r, 300));
      await client.subscribeResource({ uri: 'file:///readme.md' });
      expect(docs.subscriptions.has('file:///readme.md')).toBe(true);
      docs.updateResource('file:///readme.md');
      await eventually(() => updated.length > 0, 5_000, 'notifications/resources/updated');
      expect(updated).toEqual(['file:///readme.md']);
      await client.unsubscribeResource({ uri: 'file:///readme.md' });
      expect(docs.subscriptions.has('file:///readme.md')).toBe(false);
    } finally {
      await client.close();
    }
  });

  test('an unknown server is 404 with a sentence, and a session of one endpoint is unknown to the others', async () => {
    const res = await fetch(`${gw.url}/mcp/nope`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('route_not_found');
    expect(body.error.message).toMatch(/No MCP server named "nope" is configured/);
    // Without a key it is the 401 of every MCP request: which servers exist is not told.
    expect((await fetch(`${gw.url}/mcp/nope`, { method: 'POST', body: '{}' })).status).toBe(401);
    const { client, transport } = await connect(`${gw.url}/mcp/web`, key);
    try {
      const sid = transport.sessionId!;
      const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
      for (const path of ['/mcp', '/mcp/docs']) {
        const other = await fetch(`${gw.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify(list),
        });
        expect(other.status, path).toBe(404);
        await other.body?.cancel();
      }
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  test('a session of /mcp/<server> is served round-robin by three nodes, under the upstream names on each', async () => {
    const shared: TestGatewayOptions = {
      sqlitePath: (gw.storage as { path: string }).path,
      adminKey: gw.adminKey,
      config: { mcp_servers: { web: { url: web.url, prices: { paid_lookup: 0.01 }, timeout_ms: 5_000 }, docs: { url: docs.url, timeout_ms: 5_000 } } },
    };
    const nodes = [gw, await startTestGateway(shared), await startTestGateway(shared)];
    let n = 0;
    const roundRobin: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      url.host = new URL(nodes[n++ % nodes.length]!.url).host;
      return fetch(url, init);
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/web`), { requestInit: { headers: { authorization: `Bearer ${key}` } }, fetch: roundRobin });
    const client = new Client({ name: 'mcp-single-server-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      for (let i = 0; i < 3; i++) {
        expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['linked', 'paid_lookup', 'search', 'send_email']);
        const r = (await client.callTool({ name: 'search', arguments: { query: `q${i}` } })) as CallToolResult;
        expect(text(r)).toBe(`results for q${i}`);
      }
      expect(nodes.slice(1).map((g) => g.runtime.mcp.sessionCount)).toEqual([1, 1]);
    } finally {
      await client.close();
      await Promise.all(nodes.slice(1).map((g) => g.close()));
    }
  });
});
