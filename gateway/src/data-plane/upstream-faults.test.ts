import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import type { TraceDetail } from '../test-support/admin-api.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

// An OpenAI-format upstream per path prefix: /good answers, /bad answers 200 with a body that is no completion,
// /limited answers 429 with Retry-After, /garbled streams a first chunk and then a frame that is not JSON.
const COMPLETION = { id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } };
const chunk = (content: string) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

let upstream: Server;
let gw: TestGateway;
let key: string;
let admin: ReturnType<typeof adminClient>;
const hits: string[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const kind = (req.url ?? '').split('/')[1]!;
      hits.push(kind);
      if (kind === 'good') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(COMPLETION));
      } else if (kind === 'bad') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('<html>upstream proxy error</html>');
      } else if (kind === 'limited') {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '17' }).end('{"error":{"message":"Rate limit reached","type":"requests"}}');
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`${chunk('Hello')}data: {"id":"c1","object":"chat.completion.chunk","choi\n\n${chunk(' never sent')}data: [DONE]\n\n`);
      }
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const provider = (kind: string) => ({ type: 'openai', base_url: `${base}/${kind}/v1`, api_key: 'sk-test' });
  gw = await startTestGateway({
    config: {
      providers: { good: provider('good'), bad: provider('bad'), limited: provider('limited'), limited2: provider('limited'), garbled: provider('garbled') },
      models: { 'falls-over': ['bad/m', 'good/m'], 'all-limited': ['limited/m', 'limited2/m'], 'limited-then-good': ['limited/m', 'good/m'] },
      prices: { 'good/m': { input: 1, output: 2 }, 'garbled/m': { input: 1, output: 2 } },
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
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function steps(trace: string): Promise<TraceDetail['requests']> {
  for (let i = 0; i < 50; i++) {
    const r = await admin.call('GET', `/traces/${trace}`, undefined, undefined).catch(() => null);
    if (r) return (r as TraceDetail).requests;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`trace ${trace} was never recorded`);
}

describe('upstream faults', () => {
  test('a malformed frame mid-stream becomes an upstream_bad_response error event; the step is an error, billed for what was streamed', async () => {
    const r = await chat('garbled/m', 'garbled-1', true);
    expect(r.status).toBe(200);
    const events = r.text.split('\n\n').filter(Boolean);
    expect(events[0]).toContain('"Hello"');
    // The broken frame never reaches the client: what follows it is the error, the last event (no [DONE]: the answer is not whole).
    expect(r.text).not.toContain('"choi\n');
    expect(r.text).not.toContain('never sent');
    const error = JSON.parse(events.at(-1)!.slice(6)) as { error: { code: string } };
    expect(error.error.code).toBe('upstream_bad_response');
    expect(r.text).not.toContain('[DONE]');
    const [step] = await steps('garbled-1');
    expect(step).toMatchObject({ status: 'error', http_status: 502, error_code: 'upstream_bad_response', model: 'garbled/m' });
    expect(step!.completion_tokens).toBeGreaterThan(0);
    expect(step!.cost).toBeGreaterThan(0);
  });

  test('a malformed 200 from the first target of an alias falls over to the next; the step records the target, not the alias', async () => {
    hits.length = 0;
    const r = await chat('falls-over', 'falls-1');
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(r.text).choices[0].message.content).toBe('fine');
    expect(hits).toEqual(['bad', 'good']);
    const [step] = await steps('falls-1');
    expect(step).toMatchObject({ status: 'ok', model: 'good/m', provider: 'good' });
  });

  test('every target answering 429 is a 429 upstream_rate_limited with the upstream Retry-After; one answering falls over', async () => {
    const r = await chat('all-limited', 'limited-1');
    expect(r.status).toBe(429);
    expect(JSON.parse(r.text).error).toMatchObject({ type: 'rate_limited', code: 'upstream_rate_limited' });
    expect(r.headers.get('retry-after')).toBe('17');
    expect(r.headers.get('x-should-retry')).toBeNull();
    const [step] = await steps('limited-1');
    expect(step).toMatchObject({ status: 'error', error_code: 'upstream_rate_limited', model: 'limited2/m' });
    expect((await chat('limited-then-good', 'limited-2')).status).toBe(200);
  });
});
