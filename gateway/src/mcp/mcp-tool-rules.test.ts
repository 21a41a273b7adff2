// Tool rules on /mcp with the MCP SDK's client: a tools/call is decided by the policies' tool_rules (`server/tool`), a
// denied call never reaches the upstream and comes back as a refused tool result with tool_denied and the refusal sentence.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { adminApi, eventually, traceWithSteps } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type HttpMcpFixture, startHttpMcpServer } from './__fixtures__/http-mcp-server.js';

async function connect(url: string, key: string, headers: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } } });
  const client = new Client({ name: 'mcp-tool-rules-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const meta = (r: CallToolResult) => r._meta?.['agentgw/error'] as { type: string; code: string } | undefined;
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('tool rules on /mcp', () => {
  let upstream: HttpMcpFixture;
  let gw: TestGateway;
  let key = '';
  beforeAll(async () => {
    upstream = await startHttpMcpServer();
    gw = await startTestGateway({ config: { mcp_servers: { web: { url: upstream.url, timeout_ms: 5_000 } }, approvals: { keep_alive_s: 0.2 } } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    await call('PUT', '/policies/guard', {
      tenant_id: 'acme',
      tool_rules: [
        { tools: ['web/search'], when: { query: ['*rm -rf*', 're:(?i)drop\\s+table'] }, action: 'deny', reason: 'no destructive searches' },
        { tools: ['web/send_*'], when: { to: '*@example.com' }, action: 'allow' },
        { tools: ['web/send_*'], action: 'approve' },
      ],
    });
    await call('PUT', '/policies/no-email', { tenant_id: 'acme', tool_rules: [{ tools: ['web/send_email'], action: 'deny' }] });
    key = (await call('POST', '/agents', { name: 'agent', tenant_id: 'acme', policy_id: 'guard' })).api_key;
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  test('a call a when matcher denies is a refused tool result with tool_denied, recorded and never sent upstream', async () => {
    const trace = `rules-${Date.now()}`;
    const client = await connect(gw.url, key, { 'x-agent-trace-id': trace });
    const metric = async () => Number(/^agentgw_tool_calls_total\{decision="denied"\} (\d+)/m.exec(await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.adminKey}` } })).text())?.[1] ?? 0);
    const deniedBefore = await metric();
    const api = adminApi(gw.adminUrl, gw.adminKey);
    const heldIn = (t: string) =>
      eventually(async () => {
        const res = await api('GET', `/approvals?trace_id=${t}&status=pending`);
        return res.body?.data?.[0] as { id: string; tool: string; arguments: unknown; rule: unknown } | undefined;
      });
    try {
      const before = upstream.calls.get('search') ?? 0;
      const denied = (await client.callTool({ name: 'web__search', arguments: { query: 'how to  rm -rf / safely' } })) as CallToolResult;
      expect(denied.isError).toBe(true);
      expect(meta(denied)).toEqual({ type: 'policy_blocked', code: 'tool_denied' });
      expect(text(denied)).toBe('agentgw refused the call to web/search: no destructive searches (policy guard, rule 1)');
      const regex = (await client.callTool({ name: 'web__search', arguments: { query: 'DROP   TABLE users' } })) as CallToolResult;
      expect(meta(regex)?.code).toBe('tool_denied');
      expect(upstream.calls.get('search') ?? 0).toBe(before);

      const allowed = (await client.callTool({ name: 'web__search', arguments: { query: 'mcp' } })) as CallToolResult;
      expect(allowed.isError).toBeFalsy();
      expect(text(allowed)).toBe('results for mcp');
      expect(upstream.calls.get('search')).toBe(before + 1);

      // An allow rule that matches, and an approve rule for the rest: held until a person decides (denied, then approved).
      expect((await client.callTool({ name: 'web__send_email', arguments: { to: 'bob@example.com', body: 'hi' } })).isError).toBeFalsy();
      const sent = upstream.calls.get('send_email') ?? 0;
      const pending = client.callTool({ name: 'web__send_email', arguments: { to: 'eve@evil.test', body: 'hi' } }) as Promise<CallToolResult>;
      const first = await heldIn(trace);
      expect(first).toMatchObject({ tool: 'web/send_email', arguments: { to: 'eve@evil.test', body: 'hi' }, rule: { policy_id: 'guard', index: 3 } });
      expect((await api('POST', `/approvals/${first.id}/deny`, { body: { comment: 'not to eve' } })).status).toBe(200);
      const held = await pending;
      expect(meta(held)?.code).toBe('tool_denied');
      expect(text(held)).toBe(`agentgw refused the call to web/send_email: denied by root (approval ${first.id}): not to eve (policy guard, rule 3)`);
      expect(upstream.calls.get('send_email') ?? 0).toBe(sent);
      const again = client.callTool({ name: 'web__send_email', arguments: { to: 'eve@evil.test', body: 'hi' } }) as Promise<CallToolResult>;
      const second = await heldIn(trace);
      expect((await api('POST', `/approvals/${second.id}/approve`, { body: {} })).status).toBe(200);
      expect((await again).isError).toBeFalsy();
      expect(upstream.calls.get('send_email')).toBe(sent + 1);
    } finally {
      await client.close();
    }
    expect(await metric()).toBe(deniedBefore + 2);
    const detail = await traceWithSteps(gw, trace, 6);
    // The step carries the decision and the rule, as a model step's tool_calls do.
    expect(detail.requests.map((s) => s.tool_calls?.map((c) => [c.name, c.decision, c.rule?.index ?? null, c.reason]))).toEqual([
      [['web/search', 'denied', 1, 'no destructive searches']],
      [['web/search', 'denied', 1, 'no destructive searches']],
      [['web/search', 'allowed', null, null]],
      [['web/send_email', 'allowed', 2, null]],
      [['web/send_email', 'rejected', 3, expect.stringContaining('not to eve')]],
      [['web/send_email', 'approved', 3, null]],
    ]);
    expect(detail.requests[0]!.tool_calls![0]).toMatchObject({ id: detail.requests[0]!.request_id, rule: { policy_id: 'guard', index: 1 }, approval_id: null });
    expect(detail.requests.map((s) => [s.tool, s.status, s.error_code])).toEqual([
      ['web/search', 'blocked', 'tool_denied'],
      ['web/search', 'blocked', 'tool_denied'],
      ['web/search', 'ok', null],
      ['web/send_email', 'ok', null],
      ['web/send_email', 'blocked', 'tool_denied'],
      ['web/send_email', 'ok', null],
    ]);
  });

  test('a held call tells a client that asked for progress that it waits, so a request timeout shorter than the wait is not reached', async () => {
    const trace = `progress-${Date.now()}`;
    const client = await connect(gw.url, key, { 'x-agent-trace-id': trace });
    const api = adminApi(gw.adminUrl, gw.adminKey);
    try {
      const notices: string[] = [];
      const call = client.callTool({ name: 'web__send_email', arguments: { to: 'eve@evil.test', body: 'late' } }, undefined, {
        onprogress: (p) => notices.push(p.message ?? ''),
        timeout: 1000,
        resetTimeoutOnProgress: true,
      }) as Promise<CallToolResult>;
      const held = await eventually(async () => (await api('GET', `/approvals?trace_id=${trace}&status=pending`)).body?.data?.[0] as { id: string } | undefined);
      // Longer than the client's 1 s timeout.
      await new Promise((r) => setTimeout(r, 2000));
      expect((await api('POST', `/approvals/${held.id}/approve`, { body: {} })).status).toBe(200);
      expect((await call).isError).toBeFalsy();
      expect(notices.length).toBeGreaterThan(3);
      expect(notices[0]).toBe('waiting for a person to approve the call');
    } finally {
      await client.close();
    }
  });

  test('X-Agent-Policy adds its rules: a deny in either policy wins', async () => {
    const client = await connect(gw.url, key, { 'x-agent-policy': 'no-email' });
    try {
      const r = (await client.callTool({ name: 'web__send_email', arguments: { to: 'bob@example.com', body: 'hi' } })) as CallToolResult;
      expect(meta(r)?.code).toBe('tool_denied');
      expect(text(r)).toBe('agentgw refused the call to web/send_email: denied by policy (policy no-email, rule 1)');
      expect((await client.callTool({ name: 'web__search', arguments: { query: 'fine' } })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});
