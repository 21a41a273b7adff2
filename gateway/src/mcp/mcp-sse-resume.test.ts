// SSE answers of /mcp start with a priming event (an id, `retry:` and empty data) for clients of protocol 2025-11-25 and
// later, so a client whose stream broke resumes it with GET and Last-Event-ID and still gets its answer; older clients,
// which cannot read an event with empty data, get none. Raw HTTP against the gateway in front of the HTTP fixture server.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { eventually } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type HttpMcpFixture, startHttpMcpServer } from './__fixtures__/http-mcp-server.js';
import { SSE_RETRY_MS } from './event-store.js';

describe('/mcp SSE priming and resumption', () => {
  let upstream: HttpMcpFixture;
  let gw: TestGateway;
  let key = '';

  beforeAll(async () => {
    upstream = await startHttpMcpServer();
    gw = await startTestGateway({ config: { mcp_servers: { web: { url: upstream.url, timeout_ms: 5_000 } } } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    await call('PUT', '/policies/p', { tenant_id: 'acme', allowed_tools: ['web/*'] });
    key = (await call('POST', '/agents', { name: 'a', tenant_id: 'acme', policy_id: 'p' })).api_key;
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  function post(body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
    return fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
      signal,
    });
  }

  async function initialize(version: string): Promise<{ sid: string; text: string }> {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    expect(res.status).toBe(200);
    const sid = res.headers.get('mcp-session-id')!;
    const text = await res.text();
    const h = { 'mcp-session-id': sid, 'mcp-protocol-version': version };
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h)).body?.cancel();
    return { sid, text };
  }

  test('an SSE answer to a 2025-11-25 client starts with an event holding an id, retry and empty data; a 2025-06-18 client gets none', async () => {
    const latest = await initialize('2025-11-25');
    expect(latest.text).toMatch(new RegExp(`^id: \\S+\\nretry: ${SSE_RETRY_MS}\\ndata: \\n\\n`));
    expect(latest.text).toContain('"protocolVersion":"2025-11-25"');
    const older = await initialize('2025-06-18');
    expect(older.text).toMatch(/^event: message\n/);
    expect(older.text).not.toContain('retry:');
  });

  test('a client whose stream broke before its answer resumes it with Last-Event-ID and gets the answer', async () => {
    const { sid } = await initialize('2025-11-25');
    const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    const aborter = new AbortController();
    const res = await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'web__slow', arguments: {} } }, h, aborter.signal);
    const reader = res.body!.getReader();
    let head = '';
    while (!head.includes('\n\n')) head += new TextDecoder().decode((await reader.read()).value);
    const lastEventId = /^id: (\S+)$/m.exec(head)![1]!;
    // The connection breaks before the answer (the tool takes a second).
    aborter.abort();
    await reader.cancel().catch(() => undefined);
    // Until the gateway has seen the connection go, the stream is still its (409), as a reconnecting client finds.
    const resumed = await eventually(async () => {
      const r = await fetch(`${gw.url}/mcp`, { method: 'GET', headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...h, 'last-event-id': lastEventId } });
      if (r.status !== 409) return r;
      await r.body?.cancel();
      return undefined;
    }, 5_000, 'the resumed stream');
    expect(resumed.status).toBe(200);
    const r2 = resumed.body!.getReader();
    let text = '';
    while (!text.includes('"id":7')) {
      const { value, done } = await r2.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await r2.cancel();
    expect(text).toMatch(/^id: \S+\ndata: \{"result":\{"content":\[\{"type":"text"/m);
    expect(text).toContain('"id":7');
  });
});
