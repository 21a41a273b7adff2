// Requests of the 2026-07-28 revision (stateless: no initialize, no session; protocol version and client capabilities in
// each request's `_meta`) on /mcp/<server> and /mcp: answered without a session, under the same auth, allow-lists, tool
// rules, PII rules, prices and trace steps as a session's requests. Raw HTTP, as that revision's wire has it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { traceWithSteps } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type Message, REVISION, errorMeta, rpc, textOf } from '../test-support/mcp-2026.js';
import { type HttpMcpFixture, startHttpMcpServer } from './__fixtures__/http-mcp-server.js';

describe('2026-07-28 requests on /mcp and /mcp/<server>', () => {
  let web: HttpMcpFixture;
  let gw: TestGateway;
  let key = '';
  let agentId = '';

  beforeAll(async () => {
    web = await startHttpMcpServer();
    gw = await startTestGateway({ config: { mcp_servers: { web: { url: web.url, prices: { paid_lookup: 0.01 }, timeout_ms: 5_000 } } } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    await call('PUT', '/policies/p-web', {
      tenant_id: 'acme',
      allowed_tools: ['web/search', 'web/paid_lookup', 'web/send_email', 'web/get_profile', 'web/progress'],
      rules: { pii: 'redact' },
      tool_rules: [{ tools: ['web/send_email'], action: 'deny', reason: 'no email from here' }],
    });
    const agent = await call('POST', '/agents', { name: 'main', tenant_id: 'acme', policy_id: 'p-web' });
    key = agent.api_key;
    agentId = agent.id;
  });
  afterAll(async () => {
    await gw?.close();
    await web?.close();
  });

  test('server/discover names the revision and what the endpoint offers, and no session is made', async () => {
    const r = await rpc(`${gw.url}/mcp/web`, key, 'server/discover');
    expect(r.status).toBe(200);
    expect(r.headers.get('mcp-session-id')).toBeNull();
    expect(r.response?.result).toMatchObject({
      supportedVersions: expect.arrayContaining([REVISION]),
      capabilities: { tools: {}, resources: {}, prompts: {} },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'agentgw' } },
    });
  });

  test('tools/list shows only the allowed tools, with their price and cache hints; calls go through every check and are traced', async () => {
    const trace = `stateless-${Date.now()}`;
    const url = `${gw.url}/mcp/web`;
    const h = { 'x-agent-trace-id': trace };
    const list = await rpc(url, key, 'tools/list', {}, h);
    const tools = list.response?.result?.tools as Array<{ name: string; _meta?: Record<string, unknown> }>;
    expect(tools.map((t) => t.name).sort()).toEqual(['get_profile', 'paid_lookup', 'progress', 'search', 'send_email']);
    expect(tools.find((t) => t.name === 'paid_lookup')?._meta).toMatchObject({ 'agentgw/price_usd': 0.01 });
    // What an agent is shown depends on its policies: never a shared cache.
    expect(list.response?.result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });

    const ok = await rpc(url, key, 'tools/call', { name: 'search', arguments: { query: 'mcp' } }, h);
    expect(ok.response?.result).toMatchObject({ resultType: 'complete' });
    expect(textOf(ok.response?.result)).toBe('results for mcp');

    const refused = await rpc(url, key, 'tools/call', { name: 'delete_everything', arguments: {} }, h);
    expect(refused.response?.result?.isError).toBe(true);
    expect(errorMeta(refused.response?.result)?.code).toBe('tool_not_allowed');
    expect(web.calls.get('delete_everything') ?? 0).toBe(0);

    const denied = await rpc(url, key, 'tools/call', { name: 'send_email', arguments: { to: 'x', body: 'hi' } }, h);
    expect(errorMeta(denied.response?.result)).toEqual({ type: 'policy_blocked', code: 'tool_denied' });
    expect(web.calls.get('send_email') ?? 0).toBe(0);

    // PII in results is redacted, as in a session.
    const profile = await rpc(url, key, 'tools/call', { name: 'get_profile', arguments: {} }, h);
    expect(textOf(profile.response?.result)).toContain('[REDACTED:EMAIL]');
    expect(JSON.stringify(profile.response?.result)).not.toContain('ann.lee@example.org');

    await rpc(url, key, 'tools/call', { name: 'paid_lookup', arguments: {} }, h);

    // An unknown tool is JSON-RPC error -32602 (CONTRACT).
    const unknown = await rpc(url, key, 'tools/call', { name: 'web__search', arguments: { query: 'x' } }, h);
    expect(unknown.response?.error?.code).toBe(-32602);
    // Its message as written: no "MCP error -32602: " before it (the client's SDK adds its own).
    expect(unknown.response?.error?.message).toMatch(/^Unknown tool web__search: /);

    const detail = await traceWithSteps(gw, trace, 6);
    expect(detail.requests.map((s) => [s.endpoint, s.tool, s.status])).toEqual([
      ['mcp', 'web/search', 'ok'],
      ['mcp', 'web/delete_everything', 'blocked'],
      ['mcp', 'web/send_email', 'blocked'],
      ['mcp', 'web/get_profile', 'ok'],
      ['mcp', 'web/paid_lookup', 'ok'],
      ['mcp', 'web/web__search', 'error'],
    ]);
    const agent = (await adminClient(gw.adminUrl, gw.adminKey).call('GET', `/agents/${agentId}`)) as { spend: { day: number } };
    expect(agent.spend.day).toBeCloseTo(0.01, 10);
  });

  test("the upstream's progress reaches the caller under its own token, on the call's stream", async () => {
    const r = await rpc(`${gw.url}/mcp/web`, key, 'tools/call', { name: 'progress', arguments: { steps: 2 }, _meta: { progressToken: 'p-1' } });
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const progress = r.messages.filter((m) => m.method === 'notifications/progress').map((m) => [m.params?.progressToken, m.params?.progress]);
    expect(progress).toEqual([
      ['p-1', 1],
      ['p-1', 2],
    ]);
    expect(textOf(r.response?.result)).toBe('done');
  });

  test('/mcp serves the same tools renamed <server>__<tool>, under the same policies', async () => {
    const list = await rpc(`${gw.url}/mcp`, key, 'tools/list');
    expect((list.response?.result?.tools as Array<{ name: string }>).map((t) => t.name)).toContain('web__search');
    expect((list.response?.result?.tools as Array<{ name: string }>).map((t) => t.name)).not.toContain('web__delete_everything');
    const ok = await rpc(`${gw.url}/mcp`, key, 'tools/call', { name: 'web__search', arguments: { query: 'fed' } });
    expect(textOf(ok.response?.result)).toBe('results for fed');
  });

  test('without a valid key: 401, and the upstream is never reached', async () => {
    const before = web.calls.get('search') ?? 0;
    for (const k of [undefined, 'agk_wrong']) {
      const r = await rpc(`${gw.url}/mcp/web`, k, 'tools/call', { name: 'search', arguments: { query: 'x' } });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
    }
    expect(web.calls.get('search') ?? 0).toBe(before);
  });

  test("the revision's validation: a missing envelope field is -32602, a removed method is 404, and 2025 requests outside a session are still refused", async () => {
    const res = await fetch(`${gw.url}/mcp/web`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': REVISION } } }),
    });
    expect(((await res.json()) as Message).error?.code).toBe(-32602);
    const ping = await rpc(`${gw.url}/mcp/web`, key, 'ping');
    expect(ping.status).toBe(404);
    expect(ping.response?.error?.code).toBe(-32601);
    // A request of 2025-11-25 without a session: as before, initialize first.
    const legacy = await fetch(`${gw.url}/mcp/web`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(legacy.status).toBe(400);
    expect(((await legacy.json()) as Message).error?.message).toMatch(/Mcp-Session-Id header is required/);
  });
});
