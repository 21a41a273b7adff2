// Requests of the 2026-07-28 revision (no session) beside sessions' requests on the same upstream connection: what an
// upstream asks while it runs a stateless call (sampling, elicitation) never reaches another agent's client, and that
// client's answer never reaches the upstream for it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type ConformanceUpstream, startConformanceUpstream } from './__fixtures__/conformance-upstream.js';

const REVISION = '2026-07-28';
const text = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');

/** One tools/call of the revision, without a session; the result's text. */
async function statelessCall(url: string, key: string, name: string, args: Record<string, unknown>): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': REVISION,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: args, _meta: { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } } },
    }),
  });
  const body = await res.text();
  const lines = (res.headers.get('content-type') ?? '').startsWith('text/event-stream') ? body.split('\n').filter((l) => l.startsWith('data:') && l.length > 5).map((l) => l.slice(5)) : [body];
  const answer = lines.map((l) => JSON.parse(l) as { id?: number; result?: CallToolResult }).find((m) => m.id === 1 && m.result);
  return answer ? text(answer.result) : `no result (${res.status}): ${body.slice(0, 200)}`;
}

describe('2026-07-28 calls beside sessions on one upstream connection', () => {
  let upstream: ConformanceUpstream;
  let gw: TestGateway;
  const keys: Record<string, string> = {};
  const clients: Client[] = [];

  beforeAll(async () => {
    upstream = await startConformanceUpstream();
    gw = await startTestGateway({ config: { mcp_servers: { conf: { url: upstream.url, timeout_ms: 10_000 } } } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    await call('PUT', '/policies/p-acme', { tenant_id: 'acme' });
    keys.acme = (await call('POST', '/agents', { name: 'acme-agent', tenant_id: 'acme', policy_id: 'p-acme' })).api_key;
    await call('POST', '/tenants', { id: 'globex', name: 'Globex' });
    await call('PUT', '/policies/p-globex', { tenant_id: 'globex' });
    keys.globex = (await call('POST', '/agents', { name: 'globex-agent', tenant_id: 'globex', policy_id: 'p-globex' })).api_key;
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.close();
    await upstream?.close();
  });

  test("sampling an upstream asks during another tenant's stateless call never reaches a session's client", async () => {
    // Acme's session client samples; its own call holds its sampling answer until Globex's stateless call has ended, so
    // Acme's call is the one call in flight with a client while Globex's runs.
    const seen: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const acme = new Client({ name: 'acme', version: '1.0.0' }, { capabilities: { sampling: {} } });
    acme.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const first = req.params.messages[0]?.content;
      const prompt = first && !Array.isArray(first) && first.type === 'text' ? first.text : '';
      seen.push(prompt);
      if (prompt === 'acme-own') await released;
      return { role: 'assistant', model: 'acme-model', content: { type: 'text', text: `acme answers ${prompt}` } };
    });
    await acme.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/conf`), { requestInit: { headers: { authorization: `Bearer ${keys.acme}` } } }));
    clients.push(acme);
    const acmeCall = acme.callTool({ name: 'sample_on_stream', arguments: { prompt: 'acme-own' } });
    await expect.poll(() => seen.includes('acme-own')).toBe(true);

    const globex = await statelessCall(`${gw.url}/mcp/conf`, keys.globex!, 'sample_on_stream', { prompt: 'globex-secret' });
    release();
    expect(text(await acmeCall)).toBe('sampled: acme answers acme-own');

    expect(seen).not.toContain('globex-secret');
    expect(globex).not.toContain('acme answers');
    expect(upstream.received).not.toContain('acme answers globex-secret');
    // The upstream hears that this client cannot be asked, and the call still answers.
    expect(globex).toMatch(/^Sampling not supported or error: /);
  }, 30_000);
});
