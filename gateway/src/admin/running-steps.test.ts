// Steps in flight (CONTRACT: "A step in flight is listed with status: running from admission on"): a stream held by its
// upstream before its last event shows as running on GET /traces/{id}, on its own node and, with PostgreSQL and Redis, on
// another; once it ends it is the recorded step alone. A client that leaves mid-stream leaves no running step behind.
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { adminApi, eventually } from '../test-support/admin-api.js';
import { type HttpMcpFixture, startHttpMcpServer } from '../mcp/__fixtures__/http-mcp-server.js';
import { TEST_REDIS_URL, type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { type ScriptedOpenAI, chatTextReply, startScriptedOpenAI } from '../test-support/scripted-openai.js';
import type { MemoryRunningSteps } from '../data-plane/running-steps.js';

const MODEL = 'openai/gpt-4o-mini';

/** Upstream streams wait before their last event until the test lets the request with that text go. */
const gates = new Map<string, () => void>();
const release = (text: string) => {
  gates.get(text)?.();
  gates.delete(text);
};
let openai: ScriptedOpenAI;
beforeAll(async () => {
  openai = await startScriptedOpenAI(() => chatTextReply('Hello from a long stream.', { prompt_tokens: 11, completion_tokens: 7 }), {
    beforeLastChunk: (body) => new Promise<void>((resolve) => gates.set(String(body.messages.at(-1).content), resolve)),
  });
});
afterAll(async () => {
  for (const open of gates.values()) open();
  await openai?.close();
});

const providers = () => ({ openai: { type: 'openai', base_url: openai.url, api_key: 'sk-upstream' } });

/** Starts a streamed chat and reads its first bytes: the step is then past admission and waiting on its upstream. */
async function startStream(gw: TestGateway, key: string, trace: string, text: string, signal?: AbortSignal) {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-trace-id': trace },
    body: JSON.stringify({ model: MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: text }] }),
    signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toContain('chat.completion.chunk');
  return {
    requestId: res.headers.get('x-request-id')!,
    async rest(): Promise<string> {
      let out = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return out;
        out += new TextDecoder().decode(value);
      }
    },
  };
}

async function chat(gw: TestGateway, key: string, trace: string): Promise<void> {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-trace-id': trace },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'first' }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

async function getTrace(gw: TestGateway, trace: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${gw.adminUrl}/traces/${encodeURIComponent(trace)}`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
  return { status: res.status, body: await res.json() };
}

const runningOf = (body: any) => (body.requests ?? []).filter((r: any) => r.status === 'running');

describe('one node (SQLite, memory)', () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startTestGateway({ config: { providers: providers() } });
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    key = (await admin.agent('acme', 'streamer')).api_key;
  });
  afterAll(async () => {
    for (const open of gates.values()) open();
    await gw?.close();
  });

  test('a held stream is a running step of its trace (a trace of only that step is found), then its recorded ok step', async () => {
    const trace = `run-${randomBytes(4).toString('hex')}`;
    const s = await startStream(gw, key, trace, 'only step');
    const held = await getTrace(gw, trace);
    expect(held.status).toBe(200);
    expect(held.body).toMatchObject({ trace_id: trace, tenant_id: 'acme', request_count: 1, error_count: 0, cost: 0 });
    expect(held.body.requests).toHaveLength(1);
    expect(held.body.requests[0]).toMatchObject({
      request_id: s.requestId,
      step: 1,
      endpoint: 'chat.completions',
      model: MODEL,
      requested_model: MODEL,
      provider: 'openai',
      stream: true,
      status: 'running',
      http_status: 0,
      error_code: null,
      prompt_tokens: 0,
      completion_tokens: 0,
      cost: 0,
      ttft_ms: null,
    });
    expect(held.body.requests[0].latency_ms).toBeGreaterThanOrEqual(0);
    release('only step');
    expect(await s.rest()).toContain('[DONE]');
    // At once, without waiting for the usage writer's batch: the step never drops out of its trace, and what the trace
    // answers the database holds too (it wrote the queued row first), so the trace list and usage agree with it.
    const done = (await getTrace(gw, trace)).body;
    expect((await gw.runtime.store.getTrace(trace))?.requests).toHaveLength(1);
    expect(done.requests).toHaveLength(1);
    expect(done.requests[0]).toMatchObject({ request_id: s.requestId, status: 'ok', http_status: 200, prompt_tokens: 11, completion_tokens: 7 });
    expect(done).toMatchObject({ request_count: 1, prompt_tokens: 11, completion_tokens: 7 });
  });

  test('a running step follows the recorded ones, is counted by GET /traces, and stays listed while the stream lasts', async () => {
    const trace = `run-${randomBytes(4).toString('hex')}`;
    await chat(gw, key, trace);
    // In the database, where the trace list reads.
    await eventually(async () => (await gw.runtime.store.getTrace(trace))?.requests.length === 1, 5000, 'the first step recorded');
    const s = await startStream(gw, key, trace, 'second step');
    const held = (await getTrace(gw, trace)).body;
    expect(held.request_count).toBe(2);
    expect(held.requests.map((r: any) => [r.step, r.status])).toEqual([
      [1, 'ok'],
      [2, 'running'],
    ]);
    expect(held.requests[1].request_id).toBe(s.requestId);
    const listed = await fetch(`${gw.adminUrl}/traces?tenant_id=acme&limit=500`, { headers: { authorization: `Bearer ${gw.adminKey}` } }).then((r) => r.json() as Promise<any>);
    expect(listed.data.find((t: any) => t.trace_id === trace).request_count).toBe(2);
    release('second step');
    await s.rest();
    const done = await eventually(async () => {
      const t = (await getTrace(gw, trace)).body;
      return runningOf(t).length === 0 && t;
    }, 5000, 'no running step');
    expect(done.requests.map((r: any) => r.status)).toEqual(['ok', 'ok']);
  });

  test('a runaway trace whose only step is still running can be stopped: its next call is refused', async () => {
    const trace = `run-${randomBytes(4).toString('hex')}`;
    const s = await startStream(gw, key, trace, 'runaway');
    const stop = await fetch(`${gw.adminUrl}/traces/${trace}/stop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'looping' }),
    });
    expect(stop.status).toBe(200);
    expect(await stop.json()).toMatchObject({ trace_id: trace, tenant_id: 'acme', stopped: { reason: 'looping' } });
    const next = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-trace-id': trace },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'again' }] }),
    });
    expect(next.status).toBe(403);
    expect(((await next.json()) as any).error.code).toBe('trace_stopped');
    release('runaway');
    await s.rest();
  });

  test('a client that leaves mid-stream leaves no running step: the step is recorded as the client closing', async () => {
    const trace = `run-${randomBytes(4).toString('hex')}`;
    const abort = new AbortController();
    const s = await startStream(gw, key, trace, 'abandoned', abort.signal);
    expect(runningOf((await getTrace(gw, trace)).body)).toHaveLength(1);
    abort.abort();
    const done = await eventually(async () => {
      const t = (await getTrace(gw, trace)).body;
      return t.requests?.length === 1 && t.requests[0].status !== 'running' && t;
    }, 5000, 'the abandoned step recorded');
    release('abandoned');
    expect(done.requests[0]).toMatchObject({ request_id: s.requestId, status: 'error', error_code: 'client_closed' });
    expect((gw.runtime.dataPlane.running as MemoryRunningSteps).size).toBe(0);
  });
});

describe('two nodes (PostgreSQL, Redis counters)', () => {
  let one: TestGateway;
  let two: TestGateway;
  let key: string;
  const prefix = `agentgw-test:running-${randomBytes(6).toString('hex')}:`;
  const redis = new Redis(TEST_REDIS_URL);
  /** Entries of the trace's hash still running (an ended one stays a while, with how it ended, until its row is written). */
  const runningInRedis = async (trace: string) =>
    Object.values(await redis.hgetall(`${prefix}running:${trace}`)).filter((v) => (JSON.parse(v) as { ended?: unknown }).ended === undefined).length;
  beforeAll(async () => {
    const config = { providers: providers(), counters: { kind: 'redis', url: TEST_REDIS_URL, prefix } };
    one = await startTestGateway({ storage: 'postgres', config });
    two = await startTestGateway({ storage: 'postgres', config, pgSchema: one.storage.kind === 'postgres' ? one.storage.schema : undefined, adminKey: one.adminKey });
    const admin = adminClient(one.adminUrl, one.adminKey);
    await admin.tenant('acme');
    key = (await admin.agent('acme', 'roamer')).api_key;
  });
  afterAll(async () => {
    for (const open of gates.values()) open();
    await two?.close();
    await one?.close();
    redis.disconnect();
  });

  test('a stream held on node two is running on node one, then ok on both; its Redis entry is gone', async () => {
    const trace = `run-${randomBytes(4).toString('hex')}`;
    const s = await startStream(two, key, trace, 'on node two');
    const seen = await eventually(async () => {
      const t = await getTrace(one, trace);
      return t.status === 200 && t.body;
    }, 5000, 'node one to list the running step');
    expect(seen.requests).toHaveLength(1);
    expect(seen.requests[0]).toMatchObject({ request_id: s.requestId, status: 'running', http_status: 0, stream: true, model: MODEL, provider: 'openai' });
    expect(runningOf((await getTrace(two, trace)).body)).toHaveLength(1);
    release('on node two');
    await s.rest();
    for (const gw of [one, two]) {
      const done = await eventually(async () => {
        const t = (await getTrace(gw, trace)).body;
        return t.requests?.[0]?.status === 'ok' && t;
      }, 5000, 'the step recorded');
      expect(done.requests).toHaveLength(1);
    }
    expect(await runningInRedis(trace)).toBe(0);
    // The ended step's entry goes at node two's next refresh past its time (every 10 s; called here at once), so the hash
    // of a trace that runs for hours does not grow with its steps.
    (two.runtime.dataPlane.running as unknown as { prune(now: number): void }).prune(Date.now() + 60_000);
    await eventually(async () => (await redis.hlen(`${prefix}running:${trace}`)) === 0, 5000, 'the ended entry deleted');
  });

  test('a client that leaves a stream on node two leaves no running step on node one', async () => {
    const trace = `run-${randomBytes(4).toString('hex')}`;
    const abort = new AbortController();
    await startStream(two, key, trace, 'left on two', abort.signal);
    await eventually(async () => runningOf((await getTrace(one, trace)).body).length === 1, 5000, 'the running step on node one');
    abort.abort();
    const done = await eventually(async () => {
      const t = (await getTrace(one, trace)).body;
      return t.requests?.length === 1 && t.requests[0].status !== 'running' && t;
    }, 5000, 'the abandoned step recorded');
    release('left on two');
    expect(done.requests[0]).toMatchObject({ status: 'error', error_code: 'client_closed' });
    expect(await runningInRedis(trace)).toBe(0);
  });
});

describe('an MCP tool call held for approval', () => {
  let upstream: HttpMcpFixture;
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    upstream = await startHttpMcpServer();
    gw = await startTestGateway({ config: { mcp_servers: { web: { url: upstream.url, timeout_ms: 5_000 } }, approvals: { keep_alive_s: 0.2 } } });
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    await admin.policy('hold-email', { tenant_id: 'acme', tool_rules: [{ tools: ['web/send_*'], action: 'approve' }] });
    key = (await admin.agent('acme', 'mailer', 'hold-email')).api_key;
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  test('is a running mcp step of its trace while a person decides, then the denied step', async () => {
    const trace = `run-mcp-${randomBytes(4).toString('hex')}`;
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}`, 'x-agent-trace-id': trace } } });
    const client = new Client({ name: 'running-steps-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const pending = client.callTool({ name: 'web__send_email', arguments: { to: 'eve@evil.test', body: 'hi' } }) as Promise<CallToolResult>;
      const api = adminApi(gw.adminUrl, gw.adminKey);
      const approval = await eventually(async () => (await api('GET', `/approvals?trace_id=${trace}&status=pending`)).body?.data?.[0] as { id: string } | undefined);
      const held = (await getTrace(gw, trace)).body;
      expect(held.requests).toHaveLength(1);
      expect(held.requests[0]).toMatchObject({ endpoint: 'mcp', tool: 'web/send_email', status: 'running', http_status: 0, cost: 0 });
      expect((await api('POST', `/approvals/${approval.id}/deny`, { body: { comment: 'not to eve' } })).status).toBe(200);
      expect((await pending).isError).toBe(true);
      const done = (await getTrace(gw, trace)).body;
      expect(done.requests).toHaveLength(1);
      expect(done.requests[0]).toMatchObject({ endpoint: 'mcp', tool: 'web/send_email', status: 'blocked', error_code: 'tool_denied' });
      expect(upstream.calls.get('send_email') ?? 0).toBe(0);
    } finally {
      await client.close();
    }
  });
});
