import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TraceRequest } from '../contract/index.js';
import { adminClient } from '../test-support/admin.js';
import type { TraceDetail } from '../test-support/admin-api.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

let gw: TestGateway;
let upstream: FakeOpenAI;
let admin: ReturnType<typeof adminClient>;
let n = 0;

beforeAll(async () => {
  upstream = await startFakeOpenAI();
  gw = await startTestGateway({
    config: {
      providers: {
        openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk' },
        claude: { type: 'anthropic', base_url: `${upstream.url}`, api_key: 'sk-ant' },
        mock: { type: 'mock' },
      },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

async function keyWith(policy: Record<string, unknown>) {
  const id = `v${++n}`;
  await admin.policy(id, { tenant_id: 'acme', ...policy });
  return (await admin.agent('acme', `bot-${id}`, id)).api_key as string;
}

async function post(key: string, body: unknown, headers: Record<string, string | string[]> = {}) {
  const res = await request(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as any };
}

const msg = (content: unknown) => [{ role: 'user', content }];

describe('request bodies that adapters cannot translate are 400, never 500', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a text part whose text is not a string', { messages: msg([{ type: 'text', text: ['x'] }]) }, 'messages.0.content'],
    ['a file part without a file', { messages: msg([{ type: 'file' }]) }, 'messages.0.content'],
    ['an image part without image_url', { messages: msg([{ type: 'image_url' }]) }, 'messages.0.content'],
    ['an unknown part type', { messages: msg([{ type: 'video', url: 'x' }]) }, 'messages.0.content'],
    ['a tool without a function', { messages: msg('x'), tools: [{ type: 'function' }] }, 'tools.0.function'],
    ['a tool_choice without a function', { messages: msg('x'), tool_choice: { type: 'function' } }, 'tool_choice'],
    ['a json_schema response_format without json_schema', { messages: msg('x'), response_format: { type: 'json_schema' } }, 'response_format.json_schema'],
    ['n of 0', { messages: msg('x'), n: 0 }, 'n'],
  ];
  for (const model of ['mock/mock-1', 'claude/claude-sonnet-4-5']) {
    test.each(cases)(`${model}: %s`, async (_name, body, param) => {
      const key = await keyWith({});
      const r = await post(key, { model, ...body });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
      expect(r.body.error.param).toBe(param);
    });
  }
});

describe('findings fixed in the request path', () => {
  test('PII in the end-user id, metadata and message names is blocked', async () => {
    const key = await keyWith({ rules: { pii: 'block' } });
    for (const body of [
      { user: 'jane.doe@example.com', messages: msg('hi') },
      { metadata: { customer: '123-45-6789' }, messages: msg('hi') },
      { messages: [{ role: 'user', name: 'jane.doe@example.com', content: 'hi' }] },
    ]) {
      const r = await post(key, { model: 'openai/gpt-4o-mini', ...body });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('pii_detected');
    }
  });

  test('the worst case counts every one of n choices', async () => {
    const key = await keyWith({ rules: { max_cost_per_request: 0.0001 } });
    const one = await post(key, { model: 'openai/gpt-4o-mini', max_tokens: 10, messages: msg('x') });
    expect(one.status).toBe(200);
    const many = await post(key, { model: 'openai/gpt-4o-mini', max_tokens: 10, n: 128, messages: msg('x') });
    expect(many.status).toBe(403);
    expect(many.body.error.code).toBe('cost_cap_exceeded');
  });

  test('two policies with the same retry window count a request once', async () => {
    await admin.call('PUT', '/policies/retry-global', { rules: { retry_block: { max_repeats: 3, window_seconds: 60 } } });
    const key = await keyWith({ rules: { retry_block: { max_repeats: 3, window_seconds: 60 } } });
    const headers = { 'x-agent-policy': 'retry-global', 'x-agent-trace-id': 'same-window' };
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(key, { model: 'openai/gpt-4o-mini', messages: msg('again') }, headers)).status);
    expect(statuses).toEqual([200, 200, 200, 403]);
  });

  test('retry_block sees through whitespace: runs of spaces, tabs and other blanks count as one space', async () => {
    const key = await keyWith({ rules: { retry_block: { max_repeats: 3, window_seconds: 60 } } });
    const headers = { 'x-agent-trace-id': 'blank-variants' };
    const statuses = [];
    for (const text of ['loop again', 'loop  again', 'loop\tagain', 'loop\u00a0again']) {
      statuses.push((await post(key, { model: 'openai/gpt-4o-mini', messages: msg(text) }, headers)).status);
    }
    expect(statuses).toEqual([200, 200, 200, 403]);
    // A different text is a different request.
    expect((await post(key, { model: 'openai/gpt-4o-mini', messages: msg('loop again!') }, headers)).status).toBe(200);
    // A backslash before a letter is text, not a blank: these two are different requests.
    const paths = [];
    for (const text of ['open C:\\new', 'open C:\\tew', 'open C:\\new', 'open C:\\tew']) {
      paths.push((await post(key, { model: 'openai/gpt-4o-mini', messages: msg(text) }, headers)).status);
    }
    expect(paths).toEqual([200, 200, 200, 200]);
  });

  test('a body nested thousands of levels deep is a 400 wherever the nesting sits, never a 500', async () => {
    const key = await keyWith({ rules: { retry_block: { max_repeats: 3, window_seconds: 60 } } });
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const bodies = [
      `{"model":"mock/mock-1","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"x":${deep}}}}]}`,
      `{"model":"mock/mock-1","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"x":${deep}}}}}`,
      `{"model":"mock/mock-1","messages":[{"role":"user","content":"hi","extra":${deep}}]}`,
    ];
    for (const raw of bodies) {
      const res = await request(`${gw.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: raw,
      });
      const body = (await res.body.json()) as any;
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(body.error.code).toBe('validation_failed');
      expect(Number(/(\d+) levels deep/.exec(body.error.message)?.[1])).toBeGreaterThan(20_000);
    }
  });

  test('unknown /v1 paths carry the request and trace ids; a repeated trace header is 400', async () => {
    const key = await keyWith({});
    const res = await request(`${gw.baseUrl}/nothing`, { headers: { authorization: `Bearer ${key}`, 'x-agent-trace-id': 't-404' } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect(res.headers['x-agent-trace-id']).toBe('t-404');
    expect(((await res.body.json()) as any).error.code).toBe('route_not_found');
    const dup = await post(key, { model: 'openai/gpt-4o-mini', messages: msg('x') }, { 'x-agent-trace-id': ['a', 'b'] });
    expect(dup.status).toBe(400);
    expect(dup.body.error.code).toBe('invalid_header');
    const comma = await post(key, { model: 'openai/gpt-4o-mini', messages: msg('x') }, { 'x-agent-trace-id': 'step 1, retry 2' });
    expect(comma.status).toBe(200);
  });

  test('a client that leaves before the answer is recorded as client_closed, not as a gateway error', async () => {
    const key = await keyWith({});
    upstream.options.delayMs = 2000;
    try {
      const ac = new AbortController();
      const pending = fetch(`${gw.baseUrl}/chat/completions`, {
        method: 'POST',
        signal: ac.signal,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-trace-id': 'left-early' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: msg('slow') }),
      }).catch(() => null);
      await new Promise((r) => setTimeout(r, 200));
      ac.abort();
      await pending;
      let rec: TraceRequest | undefined;
      for (let i = 0; i < 100 && !rec; i++) {
        await new Promise((r) => setTimeout(r, 20));
        await gw.runtime.dataPlane.usage.flush();
        const r = await fetch(`${gw.adminUrl}/traces/left-early`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
        if (r.status === 200) rec = ((await r.json()) as TraceDetail).requests[0];
      }
      expect(rec).toMatchObject({ status: 'error', error_code: 'client_closed', http_status: 499 });
    } finally {
      upstream.options.delayMs = undefined;
    }
  });
});

describe('a message without content', () => {
  test('is a 400 naming it on every provider, OpenAI-format ones included, before any upstream call', async () => {
    const key = await keyWith({});
    for (const model of ['openai/gpt-4o-mini', 'mock/echo', 'claude/claude-sonnet-4-5']) {
      const before = upstream.requests.length;
      for (const messages of [[{ role: 'user', content: null }], [{ role: 'user' }], [{ role: 'user', content: 'a' }, { role: 'tool', tool_call_id: 'c1', content: null }]]) {
        const r = await post(key, { model, messages });
        expect(r.status, `${model} ${JSON.stringify(messages)}`).toBe(400);
        expect(r.body.error.code).toBe('validation_failed');
        expect(r.body.error.param).toBe(`messages[${messages.length - 1}].content`);
      }
      expect(upstream.requests.length).toBe(before);
    }
  });
});
