// Sampling and elicitation that an upstream asks for while it runs a call reach the client that made the call, through
// /mcp/<server> and /mcp, whether the server sends them on the call's own stream or on its standalone stream; the
// client's answer goes back with the agent's PII rules applied (the upstream reads it). The SDK's Client against the
// gateway, in front of the conformance upstream (an SDK server).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type ConformanceUpstream, startConformanceUpstream } from './__fixtures__/conformance-upstream.js';

const text = (r: unknown) => (r as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('server-to-client requests relayed through agentgw', () => {
  let upstream: ConformanceUpstream;
  let gw: TestGateway;
  const keys: Record<string, string> = {};
  const clients: Client[] = [];

  async function connect(url: string, key: string, answer?: (prompt: string) => string, elicit = false): Promise<Client> {
    const capabilities = { ...(answer ? { sampling: {} } : {}), ...(elicit ? { elicitation: {} } : {}) };
    const client = new Client({ name: 'relay-test', version: '1.0.0' }, { capabilities });
    if (answer) {
      client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
        const first = req.params.messages[0]?.content;
        const prompt = first && !Array.isArray(first) && first.type === 'text' ? first.text : '';
        return { role: 'assistant', model: 'client-model', content: { type: 'text', text: answer(prompt) } };
      });
    }
    if (elicit) client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { response: 'yes please' } }));
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    upstream = await startConformanceUpstream();
    gw = await startTestGateway({ config: { mcp_servers: { conf: { url: upstream.url, timeout_ms: 20_000 } } } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    await call('PUT', '/policies/p-plain', { tenant_id: 'acme' });
    await call('PUT', '/policies/p-redact', { tenant_id: 'acme', rules: { pii: 'redact' } });
    keys.plain = (await call('POST', '/agents', { name: 'plain', tenant_id: 'acme', policy_id: 'p-plain' })).api_key;
    keys.redact = (await call('POST', '/agents', { name: 'redactor', tenant_id: 'acme', policy_id: 'p-redact' })).api_key;
    await call('POST', '/tenants', { id: 'globex', name: 'Globex' });
    await call('PUT', '/policies/p-globex', { tenant_id: 'globex' });
    keys.globex = (await call('POST', '/agents', { name: 'other', tenant_id: 'globex', policy_id: 'p-globex' })).api_key;
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.close();
    await upstream?.close();
  });

  test('sampling asked on the standalone stream reaches the calling client, through /mcp/<server> and /mcp', async () => {
    const single = await connect(`${gw.url}/mcp/conf`, keys.plain!, (p) => `single says ${p}`);
    expect(text(await single.callTool({ name: 'test_sampling', arguments: { prompt: 'hi' } }))).toBe('LLM response: single says hi');
    const federated = await connect(`${gw.url}/mcp`, keys.plain!, (p) => `federated says ${p}`);
    expect(text(await federated.callTool({ name: 'conf__test_sampling', arguments: { prompt: 'yo' } }))).toBe('LLM response: federated says yo');
  });

  test('sampling asked on the call stream goes to the client of that call, with several calls at once', async () => {
    const a = await connect(`${gw.url}/mcp/conf`, keys.plain!, (p) => `A:${p}`);
    const b = await connect(`${gw.url}/mcp/conf`, keys.plain!, (p) => `B:${p}`);
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? b : a).callTool({ name: 'sample_on_stream', arguments: { prompt: `p${i}` } }).then(text)),
    );
    expect(runs).toEqual(Array.from({ length: 6 }, (_, i) => `sampled: ${i % 2 ? 'B' : 'A'}:p${i}`));
  });

  test('elicitation reaches the client and its answer the upstream', async () => {
    const c = await connect(`${gw.url}/mcp/conf`, keys.plain!, undefined, true);
    expect(text(await c.callTool({ name: 'test_elicitation', arguments: { message: 'Proceed?' } }))).toBe('User response: action=accept, content={"response":"yes please"}');
  });

  test('a client without the capability: the upstream hears the refusal, and the call still answers', async () => {
    const c = await connect(`${gw.url}/mcp/conf`, keys.plain!);
    const r = text(await c.callTool({ name: 'sample_on_stream', arguments: { prompt: 'x' } }));
    expect(r).toMatch(/^Sampling not supported or error: .*sampling/i);
  });

  test('a connection opened again inside one call (the upstream lost its session) routes later standalone requests to their own call', async () => {
    const a = await connect(`${gw.url}/mcp/conf`, keys.plain!, (p) => `A:${p}`);
    const b = await connect(`${gw.url}/mcp/conf`, keys.globex!, (p) => `B:${p}`);
    await upstream.expireSessions();
    // A's call meets the 404: the new upstream session, and its standalone stream, are opened while A's call runs.
    expect(text(await a.callTool({ name: 'test_simple_text', arguments: {} }))).toContain('simple text');
    // Another tenant's call: its sampling goes to its own client, not to A's call that has ended.
    expect(text(await b.callTool({ name: 'test_sampling', arguments: { prompt: 'hi' } }))).toBe('LLM response: B:hi');
    expect(text(await a.callTool({ name: 'test_sampling', arguments: { prompt: 'yo' } }))).toBe('LLM response: A:yo');
  });

  test("the client's answer reaches the upstream with the agent's PII rules applied", async () => {
    const c = await connect(`${gw.url}/mcp/conf`, keys.redact!, () => 'write to ann.lee@example.org today');
    const before = upstream.received.length;
    await c.callTool({ name: 'sample_on_stream', arguments: { prompt: 'who?' } });
    const got = upstream.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]).not.toContain('ann.lee@example.org');
    expect(got[0]).toMatch(/^write to .+ today$/);
  });
});
