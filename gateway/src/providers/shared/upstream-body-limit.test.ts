// limits.upstream_body_mb through the gateway: an upstream that answers 200 and then sends more than the limit (a body
// that never ends, or one stream event that never ends) costs the gateway no more than the limit. The client gets a 502
// upstream_bad_response naming the limit (in the stream once it has started), the upstream connection is dropped, the
// step is recorded, and nothing waits on the upstream.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { eventually, type TraceDetail } from '../../test-support/admin-api.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';

const LIMIT_MB = 0.01; // 10,485 bytes
const FLOOD = 'x'.repeat(32 * 1024);
const COMPLETION = { id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } };
const chatChunk = (content: string) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const MESSAGE_START = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } };

let upstream: Server;
let gw: TestGateway;
let key: string;
let admin: ReturnType<typeof adminClient>;
/** Upstream answers that ended because the gateway dropped the connection, by path prefix. */
const dropped: string[] = [];
const hits: string[] = [];

/** Writes `head`, then more than the limit, and never ends: only the gateway dropping the connection ends it. */
function flood(res: ServerResponse, kind: string, contentType: string, head: string): void {
  res.writeHead(200, { 'content-type': contentType });
  res.write(head);
  res.write(FLOOD);
  res.once('close', () => dropped.push(kind));
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const kind = (req.url ?? '').split('/')[1]!;
      hits.push(kind);
      const stream = JSON.parse(raw || '{}').stream === true;
      if (kind === 'good') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(COMPLETION));
      else if (kind === 'openai' && !stream) flood(res, kind, 'application/json', '{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"');
      else if (kind === 'openai') flood(res, kind, 'text/event-stream', `${chatChunk('Hello')}data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"`);
      else if (kind === 'anthropic') flood(res, kind, 'text/event-stream', `event: message_start\ndata: ${JSON.stringify(MESSAGE_START)}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`);
      else if (kind === 'bedrock') flood(res, kind, 'application/json', '{"output":{"message":{"role":"assistant","content":[{"text":"');
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gw = await startTestGateway({
    config: {
      limits: { upstream_body_mb: LIMIT_MB },
      providers: {
        good: { type: 'openai', base_url: `${base}/good/v1`, api_key: 'sk-test' },
        huge: { type: 'openai', base_url: `${base}/openai/v1`, api_key: 'sk-test' },
        anth: { type: 'anthropic', base_url: `${base}/anthropic/v1`, api_key: 'sk-ant-test' },
        bed: { type: 'bedrock', base_url: `${base}/bedrock`, api_key: 'bedrock-test-key', region: 'us-east-1' },
      },
      models: { 'huge-then-good': ['huge/m', 'good/m'] },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'bot')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await new Promise((r) => upstream?.close(r));
});

async function chat(model: string, trace: string, stream = false) {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-trace-id': trace },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function step(trace: string): Promise<TraceDetail['requests'][number]> {
  return eventually(async () => {
    const r = (await admin.call('GET', `/traces/${trace}`).catch(() => null)) as TraceDetail | null;
    return r?.requests[0];
  }, 5_000, `the step of ${trace}`);
}

function expectNamesTheLimit(message: string, provider: string): void {
  expect(message).toContain(`Provider "${provider}"`);
  expect(message).toContain('0.01 MB');
  expect(message).toContain('limits.upstream_body_mb');
}

describe('an upstream body past limits.upstream_body_mb', () => {
  test.each([
    ['an OpenAI-format answer', 'huge/m', 'huge', 'openai'],
    ['a Bedrock answer', 'bed/anthropic.claude-x', 'bed', 'bedrock'],
  ])('%s is a 502 upstream_bad_response naming the limit; the upstream connection is dropped', async (_name, model, provider, kind) => {
    const trace = `body-${kind}`;
    const r = await chat(model, trace);
    expect(r.status, r.text).toBe(502);
    const error = JSON.parse(r.text).error;
    expect(error).toMatchObject({ type: 'upstream_error', code: 'upstream_bad_response' });
    expectNamesTheLimit(error.message, provider);
    // SDKs would otherwise retry on their own, each retry billed by the upstream.
    expect(r.headers.get('x-should-retry')).toBe('false');
    await eventually(() => dropped.includes(kind), 5_000, `the ${kind} upstream connection to be dropped`);
    expect(await step(trace)).toMatchObject({ status: 'error', http_status: 502, error_code: 'upstream_bad_response' });
  });

  test('is not tried on the next target of an alias: the upstream was called, and another is likely to answer as much', async () => {
    hits.length = 0;
    const r = await chat('huge-then-good', 'body-alias');
    expect(r.status).toBe(502);
    expect(hits).toEqual(['openai']);
  });

  test.each([
    ['an OpenAI-format stream (passed through frame by frame)', 'huge/m', 'huge', 'openai', '"Hello"'],
    ['an Anthropic stream (translated)', 'anth/claude-x', 'anth', 'anthropic', '"role":"assistant"'],
  ])('one event of %s is an upstream_bad_response error event naming the limit, and the stream ends with it', async (_name, model, provider, kind, first) => {
    dropped.length = 0;
    const r = await chat(model, `stream-${kind}`, true);
    expect(r.status).toBe(200);
    const events = r.text.split('\n\n').filter(Boolean);
    expect(events[0]).toContain(first);
    expect(r.text).not.toContain(FLOOD.slice(0, 1024));
    // The error is the last event: no [DONE], which would say the answer is whole.
    const error = JSON.parse(events.at(-1)!.slice(6)).error;
    expect(error.code).toBe('upstream_bad_response');
    expectNamesTheLimit(error.message, provider);
    expect(r.text).not.toContain('[DONE]');
    await eventually(() => dropped.includes(kind), 5_000, `the ${kind} upstream connection to be dropped`);
    expect(await step(`stream-${kind}`)).toMatchObject({ status: 'error', error_code: 'upstream_bad_response' });
  });

  test('answers within the limit pass, and the gateway keeps serving', async () => {
    const r = await chat('good/m', 'body-good');
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(r.text).choices[0].message.content).toBe('fine');
  });
});

describe('limits.upstream_body_mb in the config', () => {
  test('must be a positive number of MB', async () => {
    const { loadConfig } = await import('../../config.js');
    expect(loadConfig({ env: {} }).limits.upstream_body_mb).toBe(32);
    expect(() => loadConfig({ env: {}, overrides: { limits: { upstream_body_mb: 0 } } })).toThrow(/config limits\.upstream_body_mb: /);
    expect(() => loadConfig({ env: {}, overrides: { limits: { upstream_body_mb: '32' } } })).toThrow(/config limits\.upstream_body_mb: /);
  });
});
