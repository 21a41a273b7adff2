// A client of the 2026-07-28 revision in front of an upstream that serves it too: agentgw reaches the upstream over that
// revision (server/discover), so input_required rounds, the tools it lists only there and its Mcp-Param-* headers work
// through /mcp/<server> and /mcp, under the same policies: a round that asks for input costs nothing and the completed
// call its price once; the client's answers reach the upstream with PII redacted; headers are checked against the
// arguments and sent upstream built from what the checks read.
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { adminApi, eventually, traceWithSteps } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { ENVELOPE, REVISION, errorMeta, rpc, textOf } from '../test-support/mcp-2026.js';
import { type ConformanceUpstream, startConformanceUpstream } from './__fixtures__/conformance-upstream.js';

const ELICIT = 'test_input_required_result_elicitation';
const CAPS = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };

interface Through {
  upstream: ConformanceUpstream;
  gw: TestGateway;
  key: string;
  agentId: string;
}

/**
 * The conformance upstream as server `conf` of a test gateway (with `prices` when given), and an agent of tenant acme
 * under a policy allowing conf/* with the given rules: what each block below starts in its beforeAll and closes after.
 */
function throughGateway(opts: { policy: Record<string, unknown>; agent: string; prices?: Record<string, number> }): {
  get: () => Through;
  start: () => Promise<void>;
  close: () => Promise<void>;
} {
  let through: Through | undefined;
  let upstream: ConformanceUpstream | undefined;
  let gw: TestGateway | undefined;
  return {
    get: () => through!,
    async start() {
      upstream = await startConformanceUpstream();
      gw = await startTestGateway({ config: { mcp_servers: { conf: { url: upstream.url, timeout_ms: 10_000, ...(opts.prices ? { prices: opts.prices } : {}) } } } });
      const admin = adminClient(gw.adminUrl, gw.adminKey);
      await admin.call('POST', '/tenants', { id: 'acme', name: 'Acme' });
      await admin.policy('p-conf', { tenant_id: 'acme', allowed_tools: ['conf/*'], ...opts.policy });
      const agent = await admin.agent('acme', opts.agent, 'p-conf');
      through = { upstream, gw, key: agent.api_key, agentId: agent.id };
    },
    async close() {
      await gw?.close();
      await upstream?.close();
    },
  };
}

describe('a 2026-07-28 client through agentgw to a 2026-07-28 upstream', () => {
  const setup = throughGateway({ policy: { rules: { pii: 'redact' } }, agent: 'modern', prices: { [ELICIT]: 0.02 } });
  let upstream: ConformanceUpstream;
  let gw: TestGateway;
  let key = '';
  let agentId = '';

  beforeAll(async () => {
    await setup.start();
    ({ upstream, gw, key, agentId } = setup.get());
  }, 60_000);
  afterAll(() => setup.close());

  test('an input_required round reaches the client, its answer goes upstream with PII redacted, and the call is charged once', async () => {
    const trace = `modern-${Date.now()}`;
    const h = { 'x-agent-trace-id': trace };
    // The tool is one the upstream lists only over 2026-07-28.
    const list = await rpc(`${gw.url}/mcp/conf`, key, 'tools/list', {}, h);
    expect((list.response?.result?.tools as Array<{ name: string }>).map((t) => t.name)).toContain(ELICIT);

    const first = await rpc(`${gw.url}/mcp/conf`, key, 'tools/call', { name: ELICIT, arguments: {}, _meta: CAPS }, h);
    expect(first.response?.result).toMatchObject({ resultType: 'input_required', inputRequests: { user_name: { method: 'elicitation/create' } } });

    const answer = { action: 'accept', content: { name: 'ann.lee@example.org' } };
    const second = await rpc(`${gw.url}/mcp/conf`, key, 'tools/call', { name: ELICIT, arguments: {}, inputResponses: { user_name: answer }, _meta: CAPS }, h);
    expect(second.response?.result?.resultType).toBe('complete');
    expect(textOf(second.response?.result)).toBe('Hello, [REDACTED:EMAIL]!');
    // What the upstream read: the redacted answer, never the address.
    expect(upstream.received).toContain('name: [REDACTED:EMAIL]');
    expect(upstream.received.join('\n')).not.toContain('ann.lee@example.org');

    const detail = await traceWithSteps(gw, trace, 2);
    expect(detail.requests.map((s) => [s.tool, s.status, s.cost])).toEqual([
      [`conf/${ELICIT}`, 'ok', 0],
      [`conf/${ELICIT}`, 'ok', 0.02],
    ]);
    const agent = (await adminClient(gw.adminUrl, gw.adminKey).call('GET', `/agents/${agentId}`)) as { spend: { day: number } };
    expect(agent.spend.day).toBeCloseTo(0.02, 10);
  });

  test('through /mcp the same rounds work under the federated name', async () => {
    const first = await rpc(`${gw.url}/mcp`, key, 'tools/call', { name: `conf__${ELICIT}`, arguments: {}, _meta: CAPS });
    expect(first.response?.result?.resultType).toBe('input_required');
    const second = await rpc(`${gw.url}/mcp`, key, 'tools/call', { name: `conf__${ELICIT}`, arguments: {}, inputResponses: { user_name: { action: 'accept', content: { name: 'Ann' } } }, _meta: CAPS });
    expect(textOf(second.response?.result)).toBe('Hello, Ann!');
  });

  test('Mcp-Param-* headers: refused 400 / -32020 when they disagree with the arguments; sent upstream as the checks left the arguments', async () => {
    const url = `${gw.url}/mcp/conf`;
    const before = upstream.received.length;
    const missing = await rpc(url, key, 'tools/call', { name: 'test_x_mcp_header', arguments: { region: 'eu-west' } });
    expect(missing.status).toBe(400);
    expect(missing.response?.error?.code).toBe(-32020);
    expect(missing.response?.error?.message).toMatch(/Mcp-Param-Region header is absent/);
    const wrong = await rpc(url, key, 'tools/call', { name: 'test_x_mcp_header', arguments: { region: 'eu-west' } }, { 'mcp-param-region': 'us-east' });
    expect([wrong.status, wrong.response?.error?.code]).toEqual([400, -32020]);
    const badBase64 = await rpc(url, key, 'tools/call', { name: 'test_x_mcp_header', arguments: { region: 'Hello' } }, { 'mcp-param-region': '=?base64?SGVsbG8?=' });
    expect([badBase64.status, badBase64.response?.error?.code]).toEqual([400, -32020]);
    expect(upstream.received.length).toBe(before);

    const ok = await rpc(url, key, 'tools/call', { name: 'test_x_mcp_header', arguments: { region: 'Zürich' } }, { 'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=` });
    expect(textOf(ok.response?.result)).toBe('region=Zürich');
    expect(upstream.received.at(-1)).toBe(`region: Zürich; Mcp-Param-Region: =?base64?${Buffer.from('Zürich').toString('base64')}?=`);

    // The client's header agreed with its arguments; the upstream gets the redacted value in both.
    const pii = await rpc(url, key, 'tools/call', { name: 'test_x_mcp_header', arguments: { region: 'ann.lee@example.org' } }, { 'mcp-param-region': 'ann.lee@example.org' });
    expect(pii.response?.result?.isError).toBeFalsy();
    expect(upstream.received.at(-1)).toBe('region: [REDACTED:EMAIL]; Mcp-Param-Region: [REDACTED:EMAIL]');
  });

  test("the upstream's tool list changes reach the client's subscriptions/listen stream", async () => {
    const abort = new AbortController();
    const res = await fetch(`${gw.url}/mcp/conf`, {
      method: 'POST',
      signal: abort.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream', 'mcp-protocol-version': REVISION, 'mcp-method': 'subscriptions/listen' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: ENVELOPE } }),
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = '';
    // The stream is read for at most 10 s, then ended whatever came (the test fails on what did not).
    const deadline = setTimeout(() => abort.abort(), 10_000);
    const until = async (text: string) => {
      while (!seen.includes(text)) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
        if (done) throw new Error(`the listen stream ended before ${text}: ${seen}`);
        seen += value;
      }
    };
    await until('notifications/subscriptions/acknowledged');
    // The upstream publishes a change of its tools to its own listen streams, agentgw's among them (opened when the
    // client's was, if not before: the change is made again until it is heard, at most 25 times).
    let heard = false;
    const changes = (async () => {
      for (let i = 0; i < 25 && !heard; i++) {
        await rpc(`${gw.url}/mcp/conf`, key, 'tools/call', { name: 'test_trigger_tool_change', arguments: {} });
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    try {
      await until('notifications/tools/list_changed');
    } finally {
      heard = true;
      clearTimeout(deadline);
      abort.abort();
      await changes;
    }
  });

  test("an unknown resource is the upstream's -32602 naming the URI the agent asked (SEP-2164)", async () => {
    const r = await rpc(`${gw.url}/mcp`, key, 'resources/read', { uri: 'agentgw://conf/test://nowhere' });
    expect(r.response?.error?.code).toBe(-32602);
    expect(r.response?.error?.data).toMatchObject({ uri: 'agentgw://conf/test://nowhere' });
  });
});

describe('the rounds of one call are one call: counted, repeated and approved once', () => {
  const MULTI = 'test_input_required_result_multi_round';
  const setup = throughGateway({
    policy: {
      rules: { retry_block: { max_repeats: 2, window_seconds: 60 }, max_tool_calls_per_trace: 1 },
      tool_rules: [{ tools: [`conf/${MULTI}`], action: 'approve' }],
    },
    agent: 'rounds',
  });
  let gw: TestGateway;
  let key = '';

  beforeAll(async () => {
    await setup.start();
    ({ gw, key } = setup.get());
  }, 60_000);
  afterAll(() => setup.close());

  test('a three-round call passes retry_block (2 repeats) and a cap of 1 call per trace, and a person approves its first round only', async () => {
    const trace = `rounds-${Date.now()}`;
    const h = { 'x-agent-trace-id': trace };
    const url = `${gw.url}/mcp/conf`;
    const api = adminApi(gw.adminUrl, gw.adminKey);
    const first = rpc(url, key, 'tools/call', { name: MULTI, arguments: {}, _meta: CAPS }, h);
    const approval = await eventually(async () => (await api('GET', `/approvals?trace_id=${trace}&status=pending`)).body?.data?.[0] as { id: string } | undefined);
    expect((await api('POST', `/approvals/${approval.id}/approve`, { body: {} })).status).toBe(200);
    const r1 = (await first).response?.result as { resultType: string; inputRequests: Record<string, unknown>; requestState: string };
    expect(r1.resultType).toBe('input_required');

    // The same call with the state: no approval asked again, not a repeat, not a second call of the trace.
    const r2 = (await rpc(url, key, 'tools/call', { name: MULTI, arguments: {}, inputResponses: { step1: { action: 'accept', content: { name: 'Ann' } } }, requestState: r1.requestState, _meta: CAPS }, h)).response?.result as typeof r1;
    expect(r2.resultType).toBe('input_required');
    // The state is bound to the arguments: the same state with others is refused.
    const other = await rpc(url, key, 'tools/call', { name: MULTI, arguments: { extra: 1 }, inputResponses: { step2: { action: 'accept', content: { color: 'red' } } }, requestState: r2.requestState, _meta: CAPS }, h);
    expect(other.response?.error?.code).toBe(-32602);
    const r3 = await rpc(url, key, 'tools/call', { name: MULTI, arguments: {}, inputResponses: { step2: { action: 'accept', content: { color: 'red' } } }, requestState: r2.requestState, _meta: CAPS }, h);
    expect(r3.response?.result?.resultType).toBe('complete');
    expect(textOf(r3.response?.result)).toMatch(/Ann.*red|red.*Ann/);
    expect(((await api('GET', `/approvals?trace_id=${trace}`)).body?.data as unknown[]).length).toBe(1);

    // A new call of the same tool in the trace is a second call: the cap refuses it.
    const again = await rpc(url, key, 'tools/call', { name: MULTI, arguments: {}, _meta: CAPS }, h);
    expect(errorMeta(again.response?.result)?.code).toBe('tool_calls_exceeded');
  });
});

describe('the MCP SDK v2 client (@modelcontextprotocol/client) on 2026-07-28 through agentgw', () => {
  const setup = throughGateway({ policy: {}, agent: 'sdk-v2' });
  let upstream: ConformanceUpstream;
  let gw: TestGateway;
  let key = '';

  beforeAll(async () => {
    await setup.start();
    ({ upstream, gw, key } = setup.get());
  }, 60_000);
  afterAll(() => setup.close());

  test('its elicitation, sampling and roots handlers answer the upstream\'s input requests, and its calls complete', async () => {
    const asked: string[] = [];
    const client = new ClientV2({ name: 'sdk-v2-test', version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {}, roots: {} }, versionNegotiation: { mode: { pin: REVISION } } });
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(`elicit: ${(req.params as { message?: string }).message}`);
      return { action: 'accept', content: { name: 'Ann' } };
    });
    client.setRequestHandler('sampling/createMessage', async () => {
      asked.push('sample');
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'Paris' }, stopReason: 'endTurn' };
    });
    client.setRequestHandler('roots/list', async () => {
      asked.push('roots');
      return { roots: [{ uri: 'file:///work', name: 'work' }] };
    });
    await client.connect(new StreamableHTTPClientTransportV2(new URL(`${gw.url}/mcp/conf`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['test_input_required_result_elicitation', 'test_x_mcp_header']));
      const hello = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
      expect(textOf(hello as Record<string, unknown>)).toBe('Hello, Ann!');
      const sampled = await client.callTool({ name: 'test_input_required_result_sampling', arguments: {} });
      expect(textOf(sampled as Record<string, unknown>)).toBe('Sampling response: Paris');
      const roots = await client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} });
      expect(textOf(roots as Record<string, unknown>)).toBe('Client exposed 1 root(s): file:///work');
      // The SDK sends the tool's Mcp-Param-* header itself; agentgw checks it and sends its own upstream.
      const region = await client.callTool({ name: 'test_x_mcp_header', arguments: { region: 'eu-west' } });
      expect(textOf(region as Record<string, unknown>)).toBe('region=eu-west');
      expect(upstream.received.at(-1)).toBe('region: eu-west; Mcp-Param-Region: eu-west');
      expect(asked).toEqual(['elicit: What is your name?', 'sample', 'roots']);
    } finally {
      await client.close();
    }
  });
});
