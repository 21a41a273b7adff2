// Upstream streams cut short or corrupted at random points, on every dialect and every way it is served (native and
// translated), read with each dialect's own SDK: the SDK sees an error, never a complete answer; the trace step is an
// upstream_bad_response error billed for what was metered.
import Anthropic from '@anthropic-ai/sdk';
import fc from 'fast-check';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import type { TraceDetail } from '../test-support/admin-api.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { type Corruption, type Delivery, type Wire, type WireStream, corrupt, cutAt, wholeStream } from '../test-support/upstream-wire-streams.js';

type Dialect = 'chat' | 'messages' | 'responses';

interface Route {
  dialect: Dialect;
  model: string;
  wire: Wire;
  served: 'native' | 'translated';
}

const ROUTES: Route[] = [
  { dialect: 'chat', model: 'oai/gpt-x', wire: 'openai-chat', served: 'native' },
  { dialect: 'chat', model: 'ant/claude-x', wire: 'anthropic', served: 'translated' },
  { dialect: 'chat', model: 'gem/gemini-x', wire: 'gemini', served: 'translated' },
  { dialect: 'chat', model: 'bed/amazon.nova-x', wire: 'bedrock-converse', served: 'translated' },
  { dialect: 'messages', model: 'ant/claude-x', wire: 'anthropic', served: 'native' },
  { dialect: 'messages', model: 'bed/anthropic.claude-x', wire: 'bedrock-claude', served: 'native' },
  { dialect: 'messages', model: 'oai/gpt-x', wire: 'openai-chat', served: 'translated' },
  { dialect: 'messages', model: 'gem/gemini-x', wire: 'gemini', served: 'translated' },
  { dialect: 'messages', model: 'bed/amazon.nova-x', wire: 'bedrock-converse', served: 'translated' },
  { dialect: 'responses', model: 'oai/gpt-x', wire: 'responses', served: 'native' },
  { dialect: 'responses', model: 'compat/gpt-x', wire: 'openai-chat', served: 'translated' },
  { dialect: 'responses', model: 'ant/claude-x', wire: 'anthropic', served: 'translated' },
  { dialect: 'responses', model: 'gem/gemini-x', wire: 'gemini', served: 'translated' },
  { dialect: 'responses', model: 'bed/amazon.nova-x', wire: 'bedrock-converse', served: 'translated' },
];

const PRICE = { input: 3, output: 15 };
const RUNS = Number(process.env.BROKEN_STREAM_RUNS ?? 10);

/** The wire format an upstream request asks for, by its path. */
function wireOf(path: string): Wire {
  if (path.startsWith('/oai/') && path.endsWith('/chat/completions')) return 'openai-chat';
  if (path.startsWith('/oai/') && path.endsWith('/responses')) return 'responses';
  if (path.startsWith('/ant/')) return 'anthropic';
  if (path.startsWith('/gem/')) return 'gemini';
  if (path.includes('/converse-stream')) return 'bedrock-converse';
  if (path.includes('/invoke-with-response-stream')) return 'bedrock-claude';
  throw new Error(`unexpected upstream path ${path}`);
}

let upstream: Server;
let gw: TestGateway;
let admin: ReturnType<typeof adminClient>;
let agent: { id: string; api_key: string };
/** How the next upstream answer is broken, given the whole stream the request would get. */
let breakIt: (stream: WireStream) => Delivery = (s) => ({ bytes: Buffer.concat(s.frames), ending: 'end' });
let lastWire: Wire | null = null;
let traceSeq = 0;
const billed: number[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}');
      const wire = wireOf(req.url ?? '');
      lastWire = wire;
      const whole = wholeStream(wire, body);
      const { bytes, ending } = breakIt(whole);
      res.writeHead(200, { 'content-type': whole.contentType });
      res.flushHeaders();
      if (ending === 'end') res.end(bytes);
      else res.write(bytes, () => res.socket?.destroy());
    });
  });
  // A cut stream may leave a write failing on its socket: one quiet error listener per connection (not per request).
  upstream.on('connection', (socket) => socket.on('error', () => undefined));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const u = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gw = await startTestGateway({
    config: {
      providers: {
        oai: { type: 'openai', base_url: `${u}/oai/v1`, api_key: 'sk-upstream' },
        compat: { type: 'openai-compatible', base_url: `${u}/oai/v1`, api_key: 'sk-upstream' },
        ant: { type: 'anthropic', base_url: `${u}/ant/v1`, api_key: 'sk-ant-upstream' },
        gem: { type: 'gemini', base_url: `${u}/gem/v1beta`, api_key: 'gemini-upstream-key' },
        bed: { type: 'bedrock', base_url: `${u}/bed`, api_key: 'bedrock-api-key-0123456789', region: 'us-east-1' },
      },
      prices: Object.fromEntries([...new Set(ROUTES.map((r) => r.model))].map((m) => [m, PRICE])),
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  agent = await admin.agent('acme', 'streamer');
});

afterAll(async () => {
  await gw?.close();
  await new Promise((r) => upstream?.close(r));
});

/** What the client's SDK made of the stream. */
interface Seen {
  /** What the SDK threw (or, for Responses, the error its stream helper rejected with). */
  error: unknown;
  /** The SDK handed the caller a complete answer (a finished message, a completed response, a stream that ended well). */
  complete: boolean;
}

async function readWithSdk(route: Route, trace: string): Promise<Seen> {
  const headers = { 'x-agent-trace-id': trace };
  if (route.dialect === 'chat') {
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: agent.api_key, maxRetries: 0, defaultHeaders: headers });
    try {
      const stream = await client.chat.completions.create({ model: route.model, messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
      for await (const _chunk of stream) {
        // read to the end
      }
      return { error: null, complete: true };
    } catch (error) {
      return { error, complete: false };
    }
  }
  if (route.dialect === 'messages') {
    const client = new Anthropic({ baseURL: gw.url, apiKey: agent.api_key, maxRetries: 0, defaultHeaders: headers });
    let stopped = false;
    try {
      const stream = await client.messages.create({ model: route.model, max_tokens: 256, messages: [{ role: 'user', content: 'hi' }], stream: true });
      for await (const event of stream) if (event.type === 'message_stop') stopped = true;
      return { error: null, complete: true };
    } catch (error) {
      return { error, complete: stopped };
    }
  }
  const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: agent.api_key, maxRetries: 0, defaultHeaders: headers });
  const types: string[] = [];
  const stream = client.responses.stream({ model: route.model, input: 'hi' });
  stream.on('event', (e) => types.push(e.type));
  try {
    const final = await stream.finalResponse();
    return { error: null, complete: final.status === 'completed' || types.includes('response.completed') };
  } catch (error) {
    return { error, complete: types.includes('response.completed') || types.includes('response.incomplete') };
  }
}

async function stepOf(trace: string): Promise<TraceDetail['requests'][number]> {
  for (let i = 0; i < 100; i++) {
    await gw.runtime.dataPlane.usage.flush();
    const detail = (await admin.call('GET', `/traces/${encodeURIComponent(trace)}`, undefined, undefined).catch(() => null)) as TraceDetail | null;
    if (detail && detail.requests.length > 0 && (detail.requests[0]!.status as string) !== 'running') return detail.requests[0]!;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`trace ${trace} was never recorded`);
}

/** Sends one request through `route` with the upstream answer broken by `how`; returns what went wrong, if anything. */
async function problemsOf(route: Route, how: (stream: WireStream) => Delivery): Promise<string[]> {
  breakIt = how;
  lastWire = null;
  const trace = `broken-${++traceSeq}`;
  const seen = await readWithSdk(route, trace);
  const problems: string[] = [];
  if (lastWire !== route.wire) problems.push(`the upstream was asked for ${lastWire}, not ${route.wire}`);
  if (seen.error === null) problems.push('the SDK saw no error');
  if (seen.complete) problems.push('the SDK saw a complete answer');
  const step = await stepOf(trace);
  if (step.status !== 'error') problems.push(`the step is ${step.status}`);
  if (step.error_code !== 'upstream_bad_response') problems.push(`the step's error is ${step.error_code}`);
  if (step.http_status !== 502) problems.push(`the step's status is ${step.http_status}`);
  const priced = (step.prompt_tokens * PRICE.input + step.completion_tokens * PRICE.output) / 1_000_000;
  if (!(step.prompt_tokens > 0) || Math.abs(step.cost - priced) > 1e-9) problems.push(`the step is billed ${step.cost} for ${step.prompt_tokens}+${step.completion_tokens} tokens`);
  billed.push(step.cost);
  return problems;
}

const name = (r: Route) => `${r.dialect} <- ${r.wire} (${r.served})`;

describe('the whole stream', () => {
  test.each(ROUTES.map((r) => [name(r), r] as const))('%s: a complete answer, recorded ok (the harness itself is sound)', async (_name, route) => {
    breakIt = (s) => ({ bytes: Buffer.concat(s.frames), ending: 'end' });
    const trace = `whole-${++traceSeq}`;
    const seen = await readWithSdk(route, trace);
    expect(seen).toEqual({ error: null, complete: true });
    expect(lastWire).toBe(route.wire);
    const step = await stepOf(trace);
    expect(step).toMatchObject({ status: 'ok', error_code: null, http_status: 200 });
    billed.push(step.cost);
  });
});

describe('a stream cut short', () => {
  test.each(ROUTES.map((r) => [name(r), r] as const))('%s: an error for the SDK, upstream_bad_response in the trace', async (_name, route) => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.constantFrom<Delivery['ending']>('end', 'drop'), async (where, ending) => {
        const problems = await problemsOf(route, (s) => cutAt(s, where % s.completeAt, ending));
        expect(problems).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('a stream with a frame that does not parse', () => {
  test.each(ROUTES.map((r) => [name(r), r] as const))('%s: an error for the SDK, upstream_bad_response in the trace', async (_name, route) => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.constantFrom<Corruption>('truncated-json', 'control-char', 'split-frame', 'not-json'),
        fc.nat(),
        async (which, how, at) => {
          const problems = await problemsOf(route, (s) => corrupt(s, which % (s.terminal + 1), how, at));
          expect(problems).toEqual([]);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('billing', () => {
  test('the agent is charged what the steps were billed', async () => {
    const total = billed.reduce((a, b) => a + b, 0);
    let day = -1;
    for (let i = 0; i < 100 && Math.abs(day - total) > 1e-9; i++) {
      day = ((await admin.call('GET', `/agents/${agent.id}`)) as { spend: { day: number } }).spend.day;
      if (Math.abs(day - total) > 1e-9) await new Promise((r) => setTimeout(r, 20));
    }
    expect(day).toBeCloseTo(total, 9);
  });
});
