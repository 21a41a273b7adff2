// /mcp end to end: real MCP servers written with the SDK (one Streamable HTTP, one stdio), the SDK's Client against
// the gateway, and the admin interface to set policies and read traces.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { adminApi, eventually, type TraceDetail, traceWithSteps } from '../test-support/admin-api.js';
import { startTestGateway, TEST_REDIS_URL, type TestGateway, type TestGatewayOptions } from '../test-support/gateway.js';
import { type HttpMcpFixture, startHttpMcpServer } from './__fixtures__/http-mcp-server.js';

const STDIO_SERVER = fileURLToPath(new URL('./__fixtures__/stdio-mcp-server.mjs', import.meta.url));

interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  close(): Promise<void>;
}

async function connect(url: string, key: string, headers: Record<string, string> = {}, fetchImpl?: typeof fetch): Promise<Connected> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  const client = new Client({ name: 'mcp-gateway-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

function errorCode(r: CallToolResult): string | undefined {
  return (r._meta?.['agentgw/error'] as { code?: string } | undefined)?.code;
}

function text(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

// SQLite with in-memory counters (one node's default), and PostgreSQL with Redis (the multi-node mode).
const MODES: Array<{ name: string; storage: 'sqlite' | 'postgres'; counters?: Record<string, unknown> }> = [
  { name: 'sqlite + memory counters', storage: 'sqlite' },
  { name: 'postgres + redis counters', storage: 'postgres', counters: { kind: 'redis', url: TEST_REDIS_URL } },
];

describe.each(MODES)('/mcp on $name', (mode) => {
  let upstream: HttpMcpFixture;
  let gw: TestGateway;
  let admin: {
    get(path: string): Promise<any>;
    post(path: string, body: unknown): Promise<any>;
    put(path: string, body: unknown): Promise<any>;
    call(method: string, path: string, body?: unknown): Promise<any>;
  };
  const keys: Record<string, string> = {};
  const ids: Record<string, string> = {};

  async function agent(name: string, policy: Record<string, unknown>): Promise<void> {
    await admin.put(`/policies/p-${name}`, { tenant_id: 'acme', ...policy });
    const a = await admin.post('/agents', { name, tenant_id: 'acme', policy_id: `p-${name}` });
    keys[name] = a.api_key;
    ids[name] = a.id;
  }

  beforeAll(async () => {
    upstream = await startHttpMcpServer();
    gw = await startTestGateway({
      storage: mode.storage,
      config: {
        ...(mode.counters ? { counters: mode.counters } : {}),
        mcp_servers: {
          web: { url: upstream.url, headers: { 'x-upstream-token': 'upstream-secret' }, prices: { paid_lookup: 0.01 }, timeout_ms: 5_000 },
          local: { command: process.execPath, args: [STDIO_SERVER], timeout_ms: 5_000 },
          gone: { url: 'http://127.0.0.1:9/mcp', timeout_ms: 1_000 },
          impatient: { url: upstream.url, timeout_ms: 300 },
        },
      },
    });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    admin = { call, get: (path) => call('GET', path), post: (path, body) => call('POST', path, body), put: (path, body) => call('PUT', path, body) };
    await admin.post('/tenants', { id: 'acme', name: 'Acme' });
    await agent('main', { allowed_tools: ['web/search', 'web/send_email', 'web/get_profile', 'local/*', 'gone/*'], rules: { pii: 'block' } });
    await agent('redactor', { allowed_tools: ['web/*'], rules: { pii: 'redact' } });
    await agent('capped', { allowed_tools: null, rules: { max_tool_calls_per_trace: 3 } });
    await agent('payer', { allowed_tools: ['web/paid_lookup'], daily_budget: 0.5 });
    await agent('looper', { allowed_tools: ['web/search', 'impatient/slow'], rules: { retry_block: { max_repeats: 2, window_seconds: 60 }, rpm: 1 } });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  test('without an agent key: 401 with the OpenAI error body and WWW-Authenticate: Bearer', async () => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
  });

  test("a session is its agent's: another agent's key gets 404, and an ended session (DELETE) is not served again", async () => {
    const c = await connect(gw.url, keys.main!);
    const sessionId = c.transport.sessionId!;
    const probe = (key: string) =>
      fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
      });
    expect((await probe(keys.payer!)).status).toBe(404);
    const own = await probe(keys.main!);
    expect(own.status).toBe(200);
    await own.body?.cancel();
    await c.transport.terminateSession();
    await c.close();
    expect((await probe(keys.main!)).status).toBe(404);
  });

  test('tools/list federates both servers as <server>__<tool>, filtered by the policy', async () => {
    const c = await connect(gw.url, keys.main!);
    try {
      const names = (await c.client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(['local__crash', 'local__echo', 'local__lookup_customer', 'local__whoami', 'web__get_profile', 'web__search', 'web__send_email']);
      // X-Agent-Policy tightens: only what both policies allow.
      await admin.put('/policies/only-search', { tenant_id: 'acme', allowed_tools: ['*/search', 'local/echo'] });
      const tight = await connect(gw.url, keys.main!, { 'x-agent-policy': 'only-search' });
      expect((await tight.client.listTools()).tools.map((t) => t.name).sort()).toEqual(['local__echo', 'web__search']);
      await tight.close();
      // The priced tool shows its price; agents that may not call it do not see it.
      const payer = await connect(gw.url, keys.payer!);
      const tools = (await payer.client.listTools()).tools;
      expect(tools.map((t) => [t.name, t._meta?.['agentgw/price_usd']])).toEqual([['web__paid_lookup', 0.01]]);
      await payer.close();
    } finally {
      await c.close();
    }
  });

  test('an allowed call is answered, recorded as an mcp step of the trace, interleaved with model calls by time', async () => {
    const trace = `mcp-trace-${Date.now()}`;
    const c = await connect(gw.url, keys.main!, { 'x-agent-trace-id': trace });
    const model = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.main}`, 'content-type': 'application/json', 'x-agent-trace-id': trace },
      body: JSON.stringify({ model: 'mock/mock-1', messages: [{ role: 'user', content: 'plan' }] }),
    });
    expect(model.status).toBe(200);
    const r = (await c.client.callTool({ name: 'web__search', arguments: { query: 'mcp' } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(text(r)).toBe('results for mcp');
    const e = (await c.client.callTool({ name: 'local__echo', arguments: { text: 'hi' } })) as CallToolResult;
    expect(text(e)).toBe('hi');
    await c.close();
    // The configured headers reach the upstream (a secret from ${ENV} in a real config).
    expect(upstream.headers.some((h) => h['x-upstream-token'] === 'upstream-secret')).toBe(true);
    const detail = await traceWithSteps(gw, trace, 3);
    expect(detail.requests.map((s) => [s.endpoint, s.tool, s.status])).toEqual([
      ['chat.completions', null, 'ok'],
      ['mcp', 'web/search', 'ok'],
      ['mcp', 'local/echo', 'ok'],
    ]);
    expect(detail.requests[1]).toMatchObject({ provider: 'web', model: null, http_status: 200, error_code: null });
  });

  test('a refused call is a tool result with isError and its code; an unknown tool is JSON-RPC -32602', async () => {
    const c = await connect(gw.url, keys.main!);
    try {
      const r = (await c.client.callTool({ name: 'web__delete_everything', arguments: {} })) as CallToolResult;
      expect(r.isError).toBe(true);
      expect(errorCode(r)).toBe('tool_not_allowed');
      expect(r._meta?.['agentgw/error']).toEqual({ type: 'policy_blocked', code: 'tool_not_allowed' });
      expect(text(r)).toMatch(/not allowed by policy p-main/);
      expect(upstream.calls.get('delete_everything')).toBeUndefined();
      await expect(c.client.callTool({ name: 'web__no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
      await expect(c.client.callTool({ name: 'nosuchserver__x', arguments: {} })).rejects.toMatchObject({ code: -32602 });
      // The refusal is a blocked step of the session's trace (the session id is the trace without a trace header).
      const sessionId = c.transport.sessionId!;
      const api = adminApi(gw.adminUrl, gw.adminKey);
      const detail = await eventually(async () => {
        const res = await api<TraceDetail>('GET', `/traces/${encodeURIComponent(sessionId)}`);
        return res.status === 200 && res.body.requests.length >= 1 ? res.body : undefined;
      });
      expect(detail.requests[0]).toMatchObject({ endpoint: 'mcp', tool: 'web/delete_everything', status: 'blocked', http_status: 403, error_code: 'tool_not_allowed' });
    } finally {
      await c.close();
    }
  });

  test('PII in arguments is blocked (block) or redacted (redact); PII in results is redacted', async () => {
    const blocker = await connect(gw.url, keys.main!);
    const before = upstream.calls.get('send_email') ?? 0;
    const blocked = (await blocker.client.callTool({ name: 'web__send_email', arguments: { to: 'bob@example.com', body: 'hi' } })) as CallToolResult;
    expect(blocked.isError).toBe(true);
    expect(errorCode(blocked)).toBe('pii_detected');
    expect(text(blocked)).not.toContain('bob@example.com');
    expect(upstream.calls.get('send_email') ?? 0).toBe(before);
    // Results are redacted, structured content too, over HTTP and stdio.
    const profile = (await blocker.client.callTool({ name: 'web__get_profile', arguments: {} })) as CallToolResult;
    expect(profile.isError).toBeFalsy();
    expect(text(profile)).toContain('[REDACTED:EMAIL]');
    expect(text(profile)).not.toContain('ann.lee@example.org');
    expect(JSON.stringify(profile.structuredContent)).not.toContain('ann.lee@example.org');
    const customer = (await blocker.client.callTool({ name: 'local__lookup_customer', arguments: { id: '42' } })) as CallToolResult;
    expect(text(customer)).not.toContain('jane.doe@example.com');
    expect(text(customer)).not.toContain('4111 1111 1111 1111');
    await blocker.close();

    const redactor = await connect(gw.url, keys.redactor!);
    const sent = (await redactor.client.callTool({ name: 'web__send_email', arguments: { to: 'carol@example.com', body: 'call me at +1 415 555 2671' } })) as CallToolResult;
    expect(sent.isError).toBeFalsy();
    expect(upstream.lastEmail).toEqual({ to: '[REDACTED:EMAIL]', body: 'call me at [REDACTED:PHONE]' });
    await redactor.close();
  });

  test('max_tool_calls_per_trace: the call past the cap is refused with tool_calls_exceeded; a new trace starts again', async () => {
    const trace = `capped-${Date.now()}`;
    const c = await connect(gw.url, keys.capped!, { 'x-agent-trace-id': trace });
    const results: CallToolResult[] = [];
    for (let i = 0; i < 4; i++) results.push((await c.client.callTool({ name: 'web__search', arguments: { query: String(i) } })) as CallToolResult);
    expect(results.map((r) => errorCode(r) ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'tool_calls_exceeded']);
    await c.close();
    const next = await connect(gw.url, keys.capped!, { 'x-agent-trace-id': `${trace}-2` });
    expect(errorCode((await next.client.callTool({ name: 'web__search', arguments: { query: 'again' } })) as CallToolResult)).toBeUndefined();
    await next.close();
  });

  test('retry_block applies to tool calls (same tool and arguments), rpm does not; a slow upstream is upstream_timeout', async () => {
    const c = await connect(gw.url, keys.looper!);
    try {
      const same = () => c.client.callTool({ name: 'web__search', arguments: { query: 'loop  again' } }) as Promise<CallToolResult>;
      expect(errorCode(await same())).toBeUndefined();
      expect(errorCode(await c.client.callTool({ name: 'web__search', arguments: { query: 'other' } }) as CallToolResult)).toBeUndefined();
      expect(errorCode(await same())).toBeUndefined();
      // Whitespace is normalised: the third "same" call is refused.
      expect(errorCode((await c.client.callTool({ name: 'web__search', arguments: { query: 'loop again' } })) as CallToolResult)).toBe('retry_blocked');
      const slow = (await c.client.callTool({ name: 'impatient__slow', arguments: {} })) as CallToolResult;
      expect(slow.isError).toBe(true);
      expect(errorCode(slow)).toBe('upstream_timeout');
    } finally {
      await c.close();
    }
  });

  test('a priced tool under 100 concurrent calls never takes the budget over', async () => {
    const c = await connect(gw.url, keys.payer!);
    const before = upstream.calls.get('paid_lookup') ?? 0;
    const results = (await Promise.all(
      Array.from({ length: 100 }, () => c.client.callTool({ name: 'web__paid_lookup', arguments: {} })),
    )) as CallToolResult[];
    await c.close();
    const ok = results.filter((r) => !r.isError).length;
    expect(ok).toBe(50);
    expect(new Set(results.filter((r) => r.isError).map(errorCode))).toEqual(new Set(['daily_budget_exceeded']));
    expect((upstream.calls.get('paid_lookup') ?? 0) - before).toBe(50);
    const a = await admin.get(`/agents/${ids.payer}`);
    expect(a.spend.day).toBeCloseTo(0.5, 10);
    expect(a.spend.day).toBeLessThanOrEqual(0.5);
  });

  test('an upstream that is down: its calls are isError upstream_unavailable, the other servers still list and answer', async () => {
    const c = await connect(gw.url, keys.main!);
    try {
      const names = (await c.client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('web__search');
      expect(names.some((n) => n.startsWith('gone__'))).toBe(false);
      const r = (await c.client.callTool({ name: 'gone__anything', arguments: {} })) as CallToolResult;
      expect(r.isError).toBe(true);
      expect(errorCode(r)).toBe('upstream_unavailable');
      expect(errorCode((await c.client.callTool({ name: 'web__search', arguments: { query: 'still' } })) as CallToolResult)).toBeUndefined();
      const servers = await admin.get('/mcp/servers');
      expect(servers.data.find((s: { name: string }) => s.name === 'gone')).toMatchObject({ transport: 'http', status: 'down', tools: [] });
      expect(JSON.stringify(servers)).not.toContain('upstream-secret');
    } finally {
      await c.close();
    }
  });

  test('an expired upstream session is initialised again without the agent noticing', async () => {
    const c = await connect(gw.url, keys.main!);
    try {
      expect(text((await c.client.callTool({ name: 'web__search', arguments: { query: 'one' } })) as CallToolResult)).toBe('results for one');
      await upstream.expireSessions();
      expect(upstream.sessionCount()).toBe(0);
      const r = (await c.client.callTool({ name: 'web__search', arguments: { query: 'two' } })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      expect(text(r)).toBe('results for two');
      expect(upstream.sessionCount()).toBe(1);
    } finally {
      await c.close();
    }
  });

  test('a stdio server that crashes is restarted', async () => {
    const c = await connect(gw.url, keys.main!);
    try {
      const first = text((await c.client.callTool({ name: 'local__whoami', arguments: {} })) as CallToolResult);
      const crashed = (await c.client.callTool({ name: 'local__crash', arguments: {} })) as CallToolResult;
      expect(crashed.isError).toBe(true);
      expect(errorCode(crashed)).toBe('upstream_unavailable');
      const second = await eventually(async () => {
        const r = (await c.client.callTool({ name: 'local__whoami', arguments: {} })) as CallToolResult;
        return r.isError ? undefined : text(r);
      }, 10_000, 'the stdio server to be restarted');
      expect(Number(second)).toBeGreaterThan(0);
      expect(second).not.toBe(first);
    } finally {
      await c.close();
    }
  });

  test('a policy change that alters what the agent may call sends notifications/tools/list_changed', async () => {
    await agent('watched', { allowed_tools: ['web/search'] });
    const c = await connect(gw.url, keys.watched!);
    try {
      let changed = 0;
      c.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changed++;
      });
      expect((await c.client.listTools()).tools.map((t) => t.name)).toEqual(['web__search']);
      // The client opens its notification stream after initialising; give it a moment.
      await new Promise((r) => setTimeout(r, 300));
      await admin.put('/policies/p-watched', { allowed_tools: ['web/search', 'local/echo'] });
      await eventually(() => changed > 0, 3_000, 'tools/list_changed');
      expect((await c.client.listTools()).tools.map((t) => t.name).sort()).toEqual(['local__echo', 'web__search']);
      // An upstream whose tools change is told on too.
      const seen = changed;
      await admin.put('/policies/p-watched', { allowed_tools: ['web/*'] });
      await eventually(() => changed > seen, 3_000, 'tools/list_changed after the policy change');
      await c.client.listTools();
      const again = changed;
      upstream.addTool('brand_new');
      await eventually(() => changed > again, 3_000, 'tools/list_changed after the upstream changed');
      expect((await c.client.listTools()).tools.map((t) => t.name)).toContain('web__brand_new');
    } finally {
      await c.close();
    }
  });

  test('resources and prompts are federated (agentgw://<server>/<uri>, <server>__<prompt>) and their texts redacted', async () => {
    const c = await connect(gw.url, keys.main!);
    try {
      const resources = (await c.client.listResources()).resources.map((r) => r.uri);
      expect(resources).toEqual(['agentgw://web/file:///readme.md']);
      const read = await c.client.readResource({ uri: 'agentgw://web/file:///readme.md' });
      expect(read.contents[0]).toMatchObject({ uri: 'agentgw://web/file:///readme.md' });
      expect(JSON.stringify(read.contents)).not.toContain('owner@example.com');
      await expect(c.client.readResource({ uri: 'agentgw://nowhere/x' })).rejects.toMatchObject({ code: -32602 });
      expect((await c.client.listPrompts()).prompts.map((p) => p.name)).toEqual(['local__greet']);
      const prompt = await c.client.getPrompt({ name: 'local__greet', arguments: { name: 'Ann' } });
      expect(prompt.messages[0]!.content).toMatchObject({ type: 'text', text: 'Say hello to Ann.' });
    } finally {
      await c.close();
    }
    // A policy whose globs name no server of a resource or prompt sees none.
    const payer = await connect(gw.url, keys.payer!);
    expect((await payer.client.listPrompts()).prompts).toEqual([]);
    await payer.close();
  });

  test('a stopped trace and a suspended agent get refused calls (isError with their code)', async () => {
    const trace = `to-stop-${Date.now()}`;
    await agent('stoppable', { allowed_tools: ['web/search'] });
    const c = await connect(gw.url, keys.stoppable!, { 'x-agent-trace-id': trace });
    try {
      expect(errorCode((await c.client.callTool({ name: 'web__search', arguments: { query: 'a' } })) as CallToolResult)).toBeUndefined();
      await eventually(async () => (await adminApi(gw.adminUrl, gw.adminKey)('GET', `/traces/${trace}`)).status === 200);
      await admin.post(`/traces/${trace}/stop`, { reason: 'test' });
      expect(errorCode((await c.client.callTool({ name: 'web__search', arguments: { query: 'b' } })) as CallToolResult)).toBe('trace_stopped');
      await admin.call('PATCH', `/agents/${ids.stoppable}`, { suspended: true });
      const r = (await c.client.callTool({ name: 'web__search', arguments: { query: 'c' } })) as CallToolResult;
      expect(errorCode(r)).toBe('agent_suspended');
      // Both refusals are blocked steps of the trace, as on /v1.
      const detail = await traceWithSteps(gw, trace, 3);
      expect(detail.requests.map((s) => [s.endpoint, s.status, s.error_code])).toEqual([
        ['mcp', 'ok', null],
        ['mcp', 'blocked', 'trace_stopped'],
        ['mcp', 'blocked', 'agent_suspended'],
      ]);
    } finally {
      await c.close();
    }
  });

  test('Prometheus series per server, tool and outcome', async () => {
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.adminKey}` } })).text();
    expect(metrics).toMatch(/agentgw_mcp_tool_calls_total\{server="web",tool="search",outcome="ok"\} [1-9]/);
    expect(metrics).toMatch(/agentgw_mcp_tool_calls_total\{server="web",tool="delete_everything",outcome="tool_not_allowed"\} 1/);
    expect(metrics).toMatch(/agentgw_mcp_tool_call_duration_seconds_count\{server="local"\} [1-9]/);
  });

  test('GET /api/mcp/servers names each server, its transport, status and tools; ?agent_id= keeps what the agent may call', async () => {
    const all = await admin.get('/mcp/servers');
    const web = all.data.find((s: { name: string }) => s.name === 'web');
    expect(web).toMatchObject({ transport: 'http', status: 'up', error: null, timeout_ms: 5000, prices: { paid_lookup: 0.01 } });
    expect(web.tools).toEqual(expect.arrayContaining(['search', 'send_email', 'paid_lookup']));
    expect(all.data.find((s: { name: string }) => s.name === 'local')).toMatchObject({ transport: 'stdio' });
    const payer = await admin.get(`/mcp/servers?agent_id=${ids.payer}`);
    expect(payer.data.map((s: { name: string; tools: string[] }) => [s.name, s.tools])).toEqual([
      ['web', ['paid_lookup']],
      ['local', []],
      ['gone', []],
      ['impatient', []],
    ]);
    // The policy fields round-trip through the admin interface.
    expect(await admin.get('/policies/p-capped')).toMatchObject({ allowed_tools: null, rules: { max_tool_calls_per_trace: 3 } });
    expect(await admin.get('/policies/p-payer')).toMatchObject({ allowed_tools: ['web/paid_lookup'], rules: { max_tool_calls_per_trace: null } });
  });

  test('sessions need no affinity: one session served round-robin by three nodes', async () => {
    const shared: TestGatewayOptions = {
      storage: mode.storage,
      ...(gw.storage.kind === 'sqlite' ? { sqlitePath: gw.storage.path } : { pgSchema: gw.storage.schema }),
      adminKey: gw.adminKey,
      config: { ...(mode.counters ? { counters: mode.counters } : {}), mcp_servers: { web: { url: upstream.url } } },
    };
    const nodes = [gw, await startTestGateway(shared), await startTestGateway(shared)];
    let n = 0;
    const roundRobin: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const node = new URL(nodes[n++ % nodes.length]!.url);
      url.host = node.host;
      return fetch(url, init);
    };
    const c = await connect(gw.url, keys.redactor!, {}, roundRobin);
    try {
      for (let i = 0; i < 6; i++) {
        const r = (await c.client.callTool({ name: 'web__search', arguments: { query: `rr${i}` } })) as CallToolResult;
        expect(text(r)).toBe(`results for rr${i}`);
      }
      expect(n).toBeGreaterThanOrEqual(7);
      // Every node served the session: the two that did not open it re-created it from its id.
      expect(nodes.slice(1).map((g) => g.runtime.mcp.sessionCount)).toEqual([1, 1]);
      // A change to allowed_tools holds on every node once the admin call returns.
      await admin.put('/policies/p-redactor', { allowed_tools: ['web/search'] });
      for (let i = 0; i < 3; i++) expect((await c.client.listTools()).tools.map((t) => t.name)).toEqual(['web__search']);
    } finally {
      await c.close();
      await Promise.all(nodes.slice(1).map((g) => g.close()));
    }
  });
});
