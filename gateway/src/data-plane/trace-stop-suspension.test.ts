// Stopping a trace and suspending an agent (CONTRACT "Stopping a trace, suspending an agent"), on every /v1 endpoint:
// every dialect of the shared table (streams too), embeddings, count_tokens, models and stored responses; the decision
// order around them; requests whose body was still arriving; and what the trace records.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { type TraceDetail, eventually } from '../test-support/admin-api.js';
import { type Answer, type Dialect, send } from '../test-support/dialects.js';
import { ANTHROPIC_MODEL, CHAT_ONLY_MODEL, type DialectGateway, OPENAI_MODEL, RESPONSES_MODEL, startDialectGateway } from '../test-support/dialect-gateway.js';
import { type FakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway } from '../test-support/gateway.js';
import { type ScriptedAnthropic } from '../test-support/scripted-anthropic.js';
import { type ScriptedResponses } from '../test-support/scripted-responses.js';


let gw: TestGateway;
let openai: FakeOpenAI;
let anthropic: ScriptedAnthropic;
let responsesUpstream: ScriptedResponses;
let admin: ReturnType<typeof adminClient>;
let table: Dialect[] = [];
let n = 0;

let harness: DialectGateway | undefined;

beforeAll(async () => {
  harness = await startDialectGateway();
  ({ gw, openai, anthropic, responsesUpstream, admin, table } = harness);
  await admin.tenant('acme');
  await admin.tenant('globex');
});
afterAll(async () => {
  await harness?.close();
});

const DIALECTS = [
  'chat completions',
  'messages native',
  'messages translated',
  'responses translated',
  'responses translated to anthropic',
  'responses native',
] as const;

function dialect(name: string): Dialect {
  const d = table.find((x) => x.name === name);
  if (!d) throw new Error(`no dialect ${name}`);
  return d;
}

async function newAgent(tenant = 'acme'): Promise<{ id: string; key: string }> {
  const a = await admin.agent(tenant, `bot-${++n}`);
  return { id: a.id as string, key: a.api_key as string };
}

const traceId = (label: string) => `stop-${label.replace(/\s+/g, '-')}-${++n}`;
const stopTrace = (trace: string, query = '') => admin.call('POST', `/traces/${encodeURIComponent(trace)}/stop${query}`, { reason: 'runaway loop' });
const suspend = (agentId: string, suspended: boolean) => admin.call('PATCH', `/agents/${agentId}`, { suspended });

function ask(d: Dialect, key: string, trace?: string, opts: { stream?: boolean; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers = { ...(trace !== undefined ? { 'x-agent-trace-id': trace } : {}), ...(opts.headers ?? {}) };
  return send(gw.url, d, d.body({ stream: opts.stream }), { key, headers });
}

/** A /v1 call outside the dialect table (embeddings, count_tokens, models, stored responses). */
async function call(method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const embed = (key: string, trace?: string) => call('POST', '/v1/embeddings', key, { model: OPENAI_MODEL, input: 'hello' }, trace ? { 'x-agent-trace-id': trace } : {});
const countTokens = (key: string, trace?: string) =>
  call('POST', '/v1/messages/count_tokens', key, { model: OPENAI_MODEL, messages: [{ role: 'user', content: 'hello' }] }, trace ? { 'x-agent-trace-id': trace } : {});

/** CONTRACT's 403 policy_blocked refusal in the error shape the path's clients read, with x-should-retry: false. */
function expectRefused(res: Answer, code: 'trace_stopped' | 'agent_suspended', shape: 'openai' | 'anthropic' = 'openai'): void {
  expect(res.status, res.text).toBe(403);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('x-should-retry')).toBe('false');
  expect(res.headers.get('x-request-id')).toBeTruthy();
  if (shape === 'anthropic') {
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'permission_error', code }, request_id: res.headers.get('x-request-id') });
  } else {
    expect(res.json).toEqual({ error: { type: 'policy_blocked', code, message: expect.any(String), param: null } });
  }
  expect(res.json.error.message).toMatch(/[.]$/);
}

async function traceOf(trace: string, tenant = 'acme'): Promise<TraceDetail> {
  return (await admin.call('GET', `/traces/${encodeURIComponent(trace)}?tenant_id=${tenant}`)) as TraceDetail;
}

/** Waits until the trace's usage rows are in the database (they are written in batches). */
function recorded(trace: string, count: number, tenant = 'acme'): Promise<TraceDetail> {
  return eventually(async () => {
    const res = await fetch(`${gw.adminUrl}/traces/${encodeURIComponent(trace)}?tenant_id=${tenant}`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
    if (res.status !== 200) return undefined;
    const t = (await res.json()) as TraceDetail;
    return t.request_count >= count ? t : undefined;
  }, 5000, `${count} steps of trace ${trace}`);
}

describe.each(DIALECTS)('a stopped trace on %s', (name) => {
  test('its next request is 403 trace_stopped, streamed or not, and reaches no upstream; other traces go on', async () => {
    const d = dialect(name);
    const agent = await newAgent();
    const trace = traceId(name);
    expect((await ask(d, agent.key, trace)).status).toBe(200);
    await recorded(trace, 1);
    await stopTrace(trace);

    const upstreamCalls = d.upstream.count();
    for (const stream of [false, true]) {
      expectRefused(await ask(d, agent.key, trace, { stream }), 'trace_stopped', d.errorShape);
    }
    expect(d.upstream.count()).toBe(upstreamCalls);

    // Final: the agent goes on in a new trace, or without one.
    expect((await ask(d, agent.key, traceId(name))).status).toBe(200);
    expect((await ask(d, agent.key)).status).toBe(200);
    // The same id in another tenant is another trace.
    const other = await newAgent('globex');
    expect((await ask(d, other.key, trace)).status).toBe(200);

    // The refusals are blocked steps of the stopped trace, with the endpoint the client spoke.
    const t = await recorded(trace, 3);
    expect(t.stopped).toEqual({ at: expect.any(String), reason: 'runaway loop' });
    expect(t.requests.slice(1).map((r) => [r.status, r.http_status, r.error_code, r.endpoint])).toEqual([
      ['blocked', 403, 'trace_stopped', d.endpoint],
      ['blocked', 403, 'trace_stopped', d.endpoint],
    ]);
  });
});

describe('a stopped trace on the other endpoints', () => {
  test('embeddings: 403 trace_stopped, recorded as an embeddings step; other traces go on', async () => {
    const agent = await newAgent();
    const trace = traceId('embeddings');
    expect((await embed(agent.key, trace)).status).toBe(200);
    await recorded(trace, 1);
    await stopTrace(trace);
    const before = openai.requests.length;
    expectRefused(await embed(agent.key, trace), 'trace_stopped');
    expect(openai.requests.length).toBe(before);
    expect((await embed(agent.key, traceId('embeddings'))).status).toBe(200);
    const t = await recorded(trace, 2);
    expect(t.requests[1]).toMatchObject({ status: 'blocked', error_code: 'trace_stopped', endpoint: 'embeddings' });
  });

  test('count_tokens, models and stored responses of the trace are refused too, and not recorded (no model calls)', async () => {
    const agent = await newAgent();
    const trace = traceId('other');
    const created = await ask(dialect('responses native'), agent.key, trace);
    expect(created.status).toBe(200);
    const responseId = created.json.id as string;
    expect((await countTokens(agent.key, trace)).status).toBe(200);
    await recorded(trace, 1);
    await stopTrace(trace);
    const h = { 'x-agent-trace-id': trace };
    expectRefused(await countTokens(agent.key, trace), 'trace_stopped', 'anthropic');
    expectRefused(await call('GET', '/v1/models', agent.key, undefined, h), 'trace_stopped');
    expectRefused(await call('GET', `/v1/responses/${responseId}`, agent.key, undefined, h), 'trace_stopped');
    expectRefused(await call('GET', `/v1/responses/${responseId}/input_items`, agent.key, undefined, h), 'trace_stopped');
    // Outside the trace, all of it works.
    expect((await countTokens(agent.key)).status).toBe(200);
    expect((await call('GET', '/v1/models', agent.key)).status).toBe(200);
    expect((await call('GET', `/v1/responses/${responseId}`, agent.key)).status).toBe(200);
    // Nothing of that was a step: give the writer time, then count.
    await new Promise((r) => setTimeout(r, 600));
    expect((await traceOf(trace)).request_count).toBe(1);
  });

  test("a client's own session id is the trace: Claude Code's x-claude-code-session-id", async () => {
    const d = dialect('messages native');
    const agent = await newAgent();
    const session = `sess-${++n}-4b6f0a52`;
    const headers = { 'x-claude-code-session-id': session };
    expect((await ask(d, agent.key, undefined, { headers })).status).toBe(200);
    await recorded(session, 1);
    await stopTrace(session);
    expectRefused(await ask(d, agent.key, undefined, { headers }), 'trace_stopped', 'anthropic');
    expectRefused(await call('POST', '/v1/messages/count_tokens', agent.key, { model: OPENAI_MODEL, messages: [{ role: 'user', content: 'hi' }] }, headers), 'trace_stopped', 'anthropic');
  });
});

describe('decision order', () => {
  test('header validation comes before the stopped trace; body validation after it', async () => {
    const agent = await newAgent();
    const trace = traceId('order');
    expect((await embed(agent.key, trace)).status).toBe(200);
    await recorded(trace, 1);
    await stopTrace(trace);
    // A bad X-Agent-Policy header is a 400 even on a stopped trace.
    const badHeader = await call('POST', '/v1/chat/completions', agent.key, { model: OPENAI_MODEL }, { 'x-agent-trace-id': trace, 'x-agent-policy': 'Not A Policy' });
    expect(badHeader.status).toBe(400);
    expect(badHeader.json.error.code).toBe('invalid_header');
    // A body that is not even JSON is not looked at.
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.key}`, 'content-type': 'application/json', 'x-agent-trace-id': trace },
      body: '{"model": ',
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).error.code).toBe('trace_stopped');
    expectRefused(await call('POST', '/v1/chat/completions', agent.key, { model: OPENAI_MODEL, messages: 'not a list' }, { 'x-agent-trace-id': trace }), 'trace_stopped');
  });

  test('a suspended agent is refused right after auth: before header and body validation, before a stopped trace', async () => {
    const agent = await newAgent();
    const trace = traceId('order-suspended');
    expect((await embed(agent.key, trace)).status).toBe(200);
    await recorded(trace, 1);
    await stopTrace(trace);
    await suspend(agent.id, true);
    expectRefused(await call('POST', '/v1/chat/completions', agent.key, { model: 1 }, { 'x-agent-trace-id': trace, 'x-agent-policy': 'Not A Policy' }), 'agent_suspended');
    expectRefused(await call('POST', '/v1/chat/completions', agent.key, { model: OPENAI_MODEL }, { 'x-agent-trace-id': 'x'.repeat(200) }), 'agent_suspended');
    // A key that is not the agent's is still a 401.
    const wrong = await call('POST', '/v1/chat/completions', `${agent.key.slice(0, -2)}zz`, { model: OPENAI_MODEL });
    expect(wrong.status).toBe(401);
  });
});

describe('a suspended agent', () => {
  test('is refused 403 agent_suspended on every endpoint; other agents are not; resumed, it works again', async () => {
    const agent = await newAgent();
    const bystander = await newAgent();
    const created = await ask(dialect('responses native'), agent.key);
    expect(created.status).toBe(200);
    const responseId = created.json.id as string;

    await suspend(agent.id, true);
    const upstreamCalls = { openai: openai.requests.length, anthropic: anthropic.messageRequests.length, responses: responsesUpstream.responseRequests.length };
    for (const name of DIALECTS) {
      const d = dialect(name);
      for (const stream of [false, true]) expectRefused(await ask(d, agent.key, traceId('susp'), { stream }), 'agent_suspended', d.errorShape);
      // The Anthropic SDKs send the key as x-api-key; it is refused the same way.
      if (d.errorShape === 'anthropic') expectRefused(await ask(d, agent.key), 'agent_suspended', 'anthropic');
    }
    expectRefused(await embed(agent.key), 'agent_suspended');
    expectRefused(await countTokens(agent.key), 'agent_suspended', 'anthropic');
    expectRefused(await call('GET', '/v1/models', agent.key), 'agent_suspended');
    expectRefused(await call('GET', `/v1/responses/${responseId}`, agent.key), 'agent_suspended');
    expectRefused(await call('DELETE', `/v1/responses/${responseId}`, agent.key), 'agent_suspended');
    expect({ openai: openai.requests.length, anthropic: anthropic.messageRequests.length, responses: responsesUpstream.responseRequests.length }).toEqual(upstreamCalls);

    // Another agent of the same tenant is served meanwhile.
    for (const name of DIALECTS) expect((await ask(dialect(name), bystander.key)).status).toBe(200);

    await suspend(agent.id, false);
    for (const name of DIALECTS) expect((await ask(dialect(name), agent.key)).status).toBe(200);
    expect((await embed(agent.key)).status).toBe(200);
    expect((await countTokens(agent.key)).status).toBe(200);
    expect((await call('GET', `/v1/responses/${responseId}`, agent.key)).status).toBe(200);
  });

  test('its refused model calls are blocked steps of its traces (as a stopped trace\'s are); other refusals are not recorded', async () => {
    const agent = await newAgent();
    const trace = traceId('susp-record');
    expect((await embed(agent.key, trace)).status).toBe(200);
    await recorded(trace, 1);
    await suspend(agent.id, true);
    expectRefused(await embed(agent.key, trace), 'agent_suspended');
    expectRefused(await ask(dialect('messages native'), agent.key, trace), 'agent_suspended', 'anthropic');
    // No model calls: answered, not recorded.
    expectRefused(await countTokens(agent.key, trace), 'agent_suspended', 'anthropic');
    expectRefused(await call('GET', '/v1/models', agent.key, undefined, { 'x-agent-trace-id': trace }), 'agent_suspended');
    await suspend(agent.id, false);
    expect((await embed(agent.key, trace)).status).toBe(200);
    const t = await recorded(trace, 4);
    expect(t.requests.map((r) => [r.status, r.http_status, r.error_code, r.endpoint])).toEqual([
      ['ok', 200, null, 'embeddings'],
      ['blocked', 403, 'agent_suspended', 'embeddings'],
      ['blocked', 403, 'agent_suspended', 'messages'],
      ['ok', 200, null, 'embeddings'],
    ]);
  });
});

/**
 * Sends a request's headers and the first half of its body, runs `meanwhile`, then the rest: the request was admitted by
 * the front before `meanwhile` and is checked again once its body is complete.
 */
function slowRequest(path: string, headers: Record<string, string>, body: unknown, meanwhile: () => Promise<unknown>): Promise<{ status: number; json: any }> {
  const text = JSON.stringify(body);
  const url = new URL(`${gw.url}${path}`);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: data ? JSON.parse(data) : undefined }));
      },
    );
    req.on('error', reject);
    const half = Math.floor(text.length / 2);
    req.write(text.slice(0, half));
    // Give the front time to pass the request's headers through its checks before the admin write.
    setTimeout(() => {
      meanwhile().then(
        () => req.end(text.slice(half)),
        (e: unknown) => {
          req.destroy();
          reject(e);
        },
      );
    }, 100);
  });
}

describe('a request whose body was still arriving', () => {
  test('when its trace was stopped meanwhile, is refused once its body is complete', async () => {
    const agent = await newAgent();
    const trace = traceId('in-flight');
    const d = dialect('chat completions');
    expect((await ask(d, agent.key, trace)).status).toBe(200);
    await recorded(trace, 1);
    const before = d.upstream.count();
    const res = await slowRequest('/v1/chat/completions', { authorization: `Bearer ${agent.key}`, 'x-agent-trace-id': trace }, d.body({}), () => stopTrace(trace));
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe('trace_stopped');
    expect(d.upstream.count()).toBe(before);
  });

  test('when its agent was suspended meanwhile, is refused once its body is complete', async () => {
    const agent = await newAgent();
    const d = dialect('messages native');
    const before = d.upstream.count();
    const res = await slowRequest('/v1/messages', { 'x-api-key': agent.key, 'anthropic-version': '2023-06-01' }, d.body({}), () => suspend(agent.id, true));
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'agent_suspended' } });
    expect(d.upstream.count()).toBe(before);
  });
});
