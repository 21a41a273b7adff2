// Replays the recorded fixtures (__fixtures__/README.md, CODEX.md) through agentgw's /v1/responses, with raw fetch so that
// the bytes are seen:
// (a) native, to an `openai` upstream replaying OpenAI's reference streams and responses: every recorded Codex body
//     reaches it as Codex sent it (model aside, key order kept) and every upstream event comes back byte for byte but for
//     the response id, which is agentgw's everywhere; the trace is Codex's session-id and its step holds the fixture's usage;
// (b) translated, to an Anthropic-format upstream and to an OpenAI-compatible chat upstream: the same bodies become valid
//     requests of those APIs (tools converted, the custom apply_patch tool carried, reasoning items and item ids dropped,
//     function_call / function_call_output pairs as tool calls and their results) and the answer a valid Responses stream;
//     x-agentgw-dropped-tools names the built-in tools left out, consistently with what the upstream got.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type Reply, type ScriptedAnthropic, startScriptedAnthropic, textReply } from '../../../test-support/scripted-anthropic.js';
import { type ChatScriptReply, type ScriptedOpenAI, chatTextReply, startScriptedOpenAI } from '../../../test-support/scripted-openai.js';
import { type Event, parseEvents, wellFormedOutput } from './__fixtures__/responses-stream-checks.js';
import { REQUIRED_RESPONSE_FIELDS, expectOpenResponsesStream } from './__fixtures__/open-responses-schema.js';

const FIXTURES = new URL('./__fixtures__/', import.meta.url);
const fixtureText = (name: string): string => readFileSync(new URL(name, FIXTURES), 'utf8');
const fixtureJson = (name: string): any => JSON.parse(fixtureText(name));

type Headers = Record<string, string>;
const CODEX_HEADERS: Headers = fixtureJson('codex-headers.json')[0].headers;
const CODEX_LITE_HEADERS: Headers = fixtureJson('codex-lite-headers.json')[0].headers;

/** The recorded Codex bodies and the headers Codex sent with each. */
const CODEX_BODIES = [
  { file: 'codex-request.json', headers: CODEX_HEADERS },
  { file: 'codex-tool-output-request.json', headers: CODEX_HEADERS },
  { file: 'codex-reasoning-tool-output-request.json', headers: CODEX_HEADERS },
  { file: 'codex-lite-request.json', headers: CODEX_LITE_HEADERS },
  { file: 'codex-compaction-request.json', headers: CODEX_HEADERS },
  { file: 'codex-fallback-request.json', headers: CODEX_HEADERS },
] as const;

/** OpenAI's streams, and what their terminal event reports. */
const STREAMS = [
  { file: 'openapi-text-stream.sse', usage: { input: 37, cached: 0, output: 11, reasoning: 0 } },
  { file: 'function-call-stream.sse', usage: { input: 291, cached: 0, output: 23, reasoning: 0 } },
  { file: 'reasoning-summary-stream.sse', usage: { input: 8, cached: 0, output: 215, reasoning: 192 } },
] as const;

/** OpenAI's non-streamed responses, and their usage. */
const RESPONSES = [
  { file: 'openapi-function-call-response.json', usage: { input: 291, cached: 0, output: 23, reasoning: 0 } },
  { file: 'openapi-reasoning-response.json', usage: { input: 81, cached: 0, output: 1035, reasoning: 832 } },
  { file: 'reasoning-encrypted-response.json', usage: { input: 81, cached: 0, output: 1035, reasoning: 832 } },
] as const;

/** The model each recorded body asks for -> the upstream model agentgw routes it to. */
const NATIVE_MODELS: Record<string, string> = { 'gpt-5.5': 'gpt-5.5-upstream', 'gpt-6.1-sol': 'gpt-6.1-sol-upstream', 'gpt-5-codex': 'gpt-5-codex-upstream' };
/** USD per million tokens. */
const NATIVE_PRICE = { input: 1.25, output: 10, cached_input: 0.125 };

const RESPONSE_ID = /^resp_[0-9a-f]{48}$/;
const UPSTREAM_KEY = 'sk-openai-upstream-secret';

/** Codex's recorded headers with the agent's key and a session of the test's own (the trace id). */
function codexHeaders(recorded: Headers, key: string, session: string): Headers {
  const out: Headers = {};
  for (const [k, v] of Object.entries(recorded)) {
    if (['host', 'content-length', 'connection', 'accept-encoding', 'authorization'].includes(k)) continue;
    out[k] = v;
  }
  out.authorization = `Bearer ${key}`;
  out['session-id'] = session;
  out['thread-id'] = session;
  out['x-client-request-id'] = session;
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------
// A native upstream: a node:http server answering POST /v1/responses with a fixture file as it is.

interface UpstreamCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

interface Canned {
  status?: number;
  contentType: string;
  text: string;
}

interface ReplayUpstream {
  url: string;
  calls: UpstreamCall[];
  close(): Promise<void>;
}

async function startReplayUpstream(answer: (call: UpstreamCall) => Canned): Promise<ReplayUpstream> {
  const calls: UpstreamCall[] = [];
  const server: Server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const raw = Buffer.concat(parts).toString('utf8');
    let body: any = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = undefined;
    }
    const call: UpstreamCall = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, body };
    calls.push(call);
    if (!(req.method === 'POST' && call.path === '/v1/responses')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Unknown request URL: ${req.method} ${call.path}`, type: 'invalid_request_error', param: null, code: 'unknown_url' } }));
      return;
    }
    const canned = answer(call);
    res.writeHead(canned.status ?? 200, { 'content-type': canned.contentType, 'x-request-id': `req_replay_${calls.length}` });
    res.end(canned.text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sse = (text: string): Canned => ({ contentType: 'text/event-stream; charset=utf-8', text });
const json = (text: string): Canned => ({ contentType: 'application/json', text });

// ---------------------------------------------------------------------------------------------------------------------

let gw: TestGateway;
let native: ReplayUpstream;
let anthropic: ScriptedAnthropic;
let compat: ScriptedOpenAI;
let admin: ReturnType<typeof adminClient>;
let key: string;
let nextNative: (call: UpstreamCall) => Canned = () => sse(fixtureText('openapi-text-stream.sse'));
let nextAnthropic: (body: any) => Reply = () => textReply('ok');
let nextCompat: (body: any) => ChatScriptReply = () => chatTextReply('ok');

beforeAll(async () => {
  native = await startReplayUpstream((call) => nextNative(call));
  anthropic = await startScriptedAnthropic((body) => nextAnthropic(body));
  compat = await startScriptedOpenAI((body) => nextCompat(body));
  const prices: Record<string, unknown> = {
    'anthropic/claude-sonnet-4-5': { input: 3, output: 15, cached_input: 0.3, cache_write_input: 3.75 },
    'compat/qwen3-coder': { input: 0.5, output: 2, cached_input: 0.1 },
  };
  for (const upstreamModel of Object.values(NATIVE_MODELS)) prices[`native/${upstreamModel}`] = NATIVE_PRICE;
  gw = await startTestGateway({
    config: {
      providers: {
        native: { type: 'openai', base_url: native.url, api_key: UPSTREAM_KEY },
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-secret' },
        compat: { type: 'openai-compatible', base_url: compat.url, api_key: 'sk-compat-upstream-secret' },
      },
      models: {
        ...Object.fromEntries(Object.entries(NATIVE_MODELS).map(([asked, upstream]) => [asked, [`native/${upstream}`]])),
        'via-anthropic': ['anthropic/claude-sonnet-4-5'],
        'via-compat': ['compat/qwen3-coder'],
      },
      prices,
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'codex-replayer')).api_key;
});

afterAll(async () => {
  await gw?.close();
  await native?.close();
  await anthropic?.close();
  await compat?.close();
});

interface Answer {
  status: number;
  headers: globalThis.Headers;
  text: string;
  session: string;
}

async function send(body: unknown, recordedHeaders: Headers): Promise<Answer> {
  const session = randomUUID();
  const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: codexHeaders(recordedHeaders, key, session), body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text(), session };
}

async function stepsOf(traceId: string): Promise<any[]> {
  await gw.runtime.dataPlane.usage.flush();
  const trace = await admin.call('GET', `/traces/${encodeURIComponent(traceId)}`);
  return trace.requests;
}

/** The first response id a stream or a response body names. */
const firstResponseId = (text: string): string | undefined => /"id":\s*"(resp_[^"]+)"/.exec(text)?.[1];

/** The response id agentgw answered with: the id of response.created's response, the same in every event that has one. */
function ourIdOf(events: Event[]): string {
  const id = events[0]!.data.response?.id as string;
  expect(id).toMatch(RESPONSE_ID);
  for (const e of events) if (e.data.response) expect(e.data.response.id, e.event).toBe(id);
  return id;
}

function expectTraceStep(step: any, want: { stream: boolean; provider: string; model: string; responseId: string; usage?: { input: number; cached: number; output: number; reasoning: number }; price?: typeof NATIVE_PRICE }): void {
  expect(step).toMatchObject({ endpoint: 'responses', stream: want.stream, status: 'ok', http_status: 200, provider: want.provider, model: want.model, response_id: want.responseId });
  if (!want.usage) return;
  const u = want.usage;
  expect({ prompt: step.prompt_tokens, cached: step.cached_tokens, completion: step.completion_tokens, reasoning: step.reasoning_tokens }).toEqual({
    prompt: u.input,
    cached: u.cached,
    completion: u.output,
    reasoning: u.reasoning,
  });
  if (want.price) {
    const p = want.price;
    expect(step.cost).toBeCloseTo(((u.input - u.cached) * p.input + u.cached * p.cached_input + u.output * p.output) / 1e6, 9);
  }
}

/** The key order of a Responses body: top level, reasoning, text, each input item and each tool. */
function keyOrders(body: any): Record<string, string> {
  const out: Record<string, string> = { '.': Object.keys(body).join(',') };
  for (const k of ['reasoning', 'text']) if (body[k] && typeof body[k] === 'object') out[k] = Object.keys(body[k]).join(',');
  (body.input ?? []).forEach((item: any, i: number) => (out[`input.${i}`] = Object.keys(item).join(',')));
  (body.tools ?? []).forEach((tool: any, i: number) => (out[`tools.${i}`] = Object.keys(tool).join(',')));
  return out;
}

// =====================================================================================================================

describe('native replay: Codex to an openai upstream answering with OpenAI streams and responses', () => {
  /** What the upstream got: one POST /v1/responses with the upstream's key and not the agent's. */
  function upstreamCall(from: number): UpstreamCall {
    const got = native.calls.slice(from);
    expect(got).toHaveLength(1);
    const call = got[0]!;
    expect(call.method).toBe('POST');
    expect(call.path).toBe('/v1/responses');
    expect(call.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(JSON.stringify(call.headers)).not.toContain(key);
    return call;
  }

  for (const { file, headers } of CODEX_BODIES) {
    const recorded = fixtureJson(file);
    const upstreamModel = NATIVE_MODELS[recorded.model]!;

    test(`${file}: reaches the upstream as Codex sent it (model aside); every stream comes back byte for byte but for agentgw's response id`, async () => {
      expect(recorded.stream).toBe(true);
      for (const stream of STREAMS) {
        const fixture = fixtureText(stream.file);
        const upstreamId = firstResponseId(fixture)!;
        nextNative = () => sse(fixture);
        const from = native.calls.length;
        const answer = await send(recorded, headers);
        expect(answer.status, answer.text).toBe(200);
        expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
        expect(answer.headers.get('x-agent-trace-id')).toBe(answer.session);
        expect(answer.headers.get('x-agentgw-dropped-tools')).toBeNull();

        const call = upstreamCall(from);
        expect(call.body).toEqual({ ...recorded, model: upstreamModel });

        // Byte for byte, but for the id: agentgw's replaces the upstream's everywhere.
        const events = parseEvents(answer.text);
        const ourId = ourIdOf(events);
        expect(ourId).not.toBe(upstreamId);
        expect(answer.text).not.toContain(upstreamId);
        expectAsSentWithRequiredFields(answer.text, fixture.replaceAll(upstreamId, ourId));
        expect(events.at(-1)!.event).toBe('response.completed');
        // OpenAI's reference text stream has no sequence_number and elides its middle deltas (README.md): only the
        // other two can pass the checks, and do as the upstream sent them.
        if (stream.file !== 'openapi-text-stream.sse') wellFormedOutput(events);

        const steps = await stepsOf(answer.session);
        expect(steps).toHaveLength(1);
        expectTraceStep(steps[0], { stream: true, provider: 'native', model: `native/${upstreamModel}`, responseId: ourId, usage: stream.usage, price: NATIVE_PRICE });
      }
    });

    test(`${file}: the upstream body keeps Codex's key order (JSON text equal with model swapped), streamed and not`, async () => {
      nextNative = () => sse(fixtureText('function-call-stream.sse'));
      let from = native.calls.length;
      const answer = await send(recorded, headers);
      expect(answer.status, answer.text).toBe(200);
      const streamed = upstreamCall(from).raw;
      expect(keyOrders(JSON.parse(streamed))).toEqual(keyOrders(recorded));
      expect(streamed).toBe(JSON.stringify({ ...recorded, model: upstreamModel }));

      nextNative = () => json(fixtureText('openapi-function-call-response.json'));
      from = native.calls.length;
      const plain = await send({ ...recorded, stream: false }, headers);
      expect(plain.status, plain.text).toBe(200);
      const { stream: _stream, ...rest } = recorded;
      const plainRaw = upstreamCall(from).raw;
      expect(keyOrders(JSON.parse(plainRaw))).toEqual(keyOrders(rest));
      expect(plainRaw).toBe(JSON.stringify({ ...rest, model: upstreamModel }));
    });
  }

  test('the lite body goes with Codex\'s x-openai-internal-codex-responses-lite header; what the upstream got of Codex\'s headers', async () => {
    nextNative = () => sse(fixtureText('reasoning-summary-stream.sse'));
    const from = native.calls.length;
    const answer = await send(fixtureJson('codex-lite-request.json'), CODEX_LITE_HEADERS);
    expect(answer.status, answer.text).toBe(200);
    const call = upstreamCall(from);
    // Informational: agentgw is not asked to forward Codex's own headers.
    const forwarded = Object.keys(CODEX_LITE_HEADERS).filter((h) => h !== 'authorization' && h !== 'host' && h !== 'content-length' && call.headers[h] !== undefined);
    console.info(`[responses replay] Codex headers the native upstream received: ${forwarded.join(', ') || 'none'}`);
  });

  test('a stream reporting cached tokens: the trace step has them, the bytes are still the upstream\'s', async () => {
    const fixture = fixtureText('reasoning-summary-stream.sse').replace('"input_tokens_details":{"cached_tokens":0}', '"input_tokens_details":{"cached_tokens":6}');
    expect(fixture).toContain('"cached_tokens":6');
    nextNative = () => sse(fixture);
    const answer = await send(fixtureJson('codex-request.json'), CODEX_HEADERS);
    expect(answer.status, answer.text).toBe(200);
    const events = parseEvents(answer.text);
    const ourId = ourIdOf(events);
    expectAsSentWithRequiredFields(answer.text, fixture.replaceAll(firstResponseId(fixture)!, ourId));
    wellFormedOutput(events);
    const [step] = await stepsOf(answer.session);
    expectTraceStep(step, { stream: true, provider: 'native', model: 'native/gpt-5.5-upstream', responseId: ourId, usage: { input: 8, cached: 6, output: 215, reasoning: 192 }, price: NATIVE_PRICE });
  });

  for (const response of RESPONSES) {
    test(`stream: false, ${response.file}: the body reaches the upstream without stream; the response comes back as sent but for agentgw's id`, async () => {
      const fixture = fixtureText(response.file);
      const upstreamValue = JSON.parse(fixture);
      nextNative = () => json(fixture);
      for (const file of ['codex-request.json', 'codex-reasoning-tool-output-request.json'] as const) {
        const recorded = { ...fixtureJson(file), stream: false };
        const from = native.calls.length;
        const answer = await send(recorded, CODEX_HEADERS);
        expect(answer.status, answer.text).toBe(200);
        expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
        expect(answer.headers.get('x-agent-trace-id')).toBe(answer.session);

        const call = upstreamCall(from);
        const { stream: _stream, ...rest } = recorded;
        expect(call.body).toEqual({ ...rest, model: 'gpt-5.5-upstream' });

        const value = JSON.parse(answer.text);
        expect(value.id).toMatch(RESPONSE_ID);
        expect(value.id).not.toBe(upstreamValue.id);
        expect(answer.text).not.toContain(upstreamValue.id);
        // Every field as the upstream sent it, in its order; only the id is agentgw's. OpenAI's reference example lacks
        // fields the Open Responses specification requires: they follow, and nothing else.
        const sent = JSON.stringify({ ...upstreamValue, id: value.id });
        expect(answer.text.startsWith(sent.slice(0, -1))).toBe(true);
        expectOnlyRequiredFieldsAdded(value, JSON.parse(sent));
        // Every required field is there now (what the upstream nested in them, such as its usage, is as it sent it).
        for (const k of REQUIRED_RESPONSE_FIELDS) expect(value, k).toHaveProperty(k);

        const steps = await stepsOf(answer.session);
        expect(steps).toHaveLength(1);
        expectTraceStep(steps[0], { stream: false, provider: 'native', model: 'native/gpt-5.5-upstream', responseId: value.id, usage: response.usage, price: NATIVE_PRICE });
      }
    });
  }

  test('Codex\'s store: false is not kept (GET is 404); the same body with store: true is readable under agentgw\'s id', async () => {
    const fixture = fixtureText('function-call-stream.sse');
    nextNative = () => sse(fixture);
    const recorded = fixtureJson('codex-request.json');
    const get = (id: string) => fetch(`${gw.url}/v1/responses/${id}`, { headers: { authorization: `Bearer ${key}` } });

    const notKept = await send(recorded, CODEX_HEADERS);
    expect(notKept.status, notKept.text).toBe(200);
    const notKeptId = ourIdOf(parseEvents(notKept.text));
    const missing = await get(notKeptId);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.code).toBe('response_not_found');

    // Read as it streams: the moment response.completed arrives, the response is already stored (the terminal event is sent last).
    const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: codexHeaders(CODEX_HEADERS, key, randomUUID()), body: JSON.stringify({ ...recorded, store: true }) });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let stored: Response | null = null;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (!stored && text.includes('event: response.completed\n') && text.endsWith('\n\n')) stored = await get(ourIdOf(parseEvents(text)));
    }
    const events = parseEvents(text);
    expectAsSentWithRequiredFields(text, fixture.replaceAll(firstResponseId(fixture)!, ourIdOf(events)));
    expect(stored, 'response.completed arrived').not.toBeNull();
    expect(stored!.status).toBe(200);
    expect(await stored!.json()).toEqual(events.at(-1)!.data.response);
  });
});

// =====================================================================================================================
// Translated: checks of the upstream request against its API.

/** The built-in tool types of a Responses request, each once. */
function builtInTools(body: any): string[] {
  const types = (body.tools ?? []).map((t: any) => t.type as string).filter((t: string) => !['function', 'custom', 'namespace'].includes(t));
  return [...new Set<string>(types)];
}

/** The client tools of a Responses request as chat / Anthropic tool names (namespaced ones as `<namespace>__<name>`). */
function clientToolNames(tools: any[] | undefined): string[] {
  const names: string[] = [];
  for (const t of tools ?? []) {
    if (t.type === 'function' || t.type === 'custom') names.push(t.name);
    else if (t.type === 'namespace') for (const inner of t.tools) names.push(`${t.name}__${inner.name}`);
  }
  return names;
}

/** Ids and fields of the recorded input that must not reach a translated upstream. */
function leakedOf(recorded: any, raw: string): string[] {
  const leaks: string[] = [];
  for (const item of recorded.input) if (typeof item.id === 'string' && raw.includes(item.id)) leaks.push(`${item.type} id ${item.id}`);
  for (const needle of ['encrypted_content', 'gAAAAB', '"phase"', 'client_metadata', 'prompt_cache_key', 'external_web_access', '"tool_search"', '"logprobs"', '"annotations"']) {
    if (raw.includes(needle)) leaks.push(needle);
  }
  return leaks;
}

/** The text of the recorded input's first developer message (Codex's system prompt). */
const developerText = (recorded: any): string =>
  recorded.input.find((i: any) => i.role === 'developer' && i.type === 'message').content.map((p: any) => p.text).join('');

/** The call ids of the recorded function_call / function_call_output pairs. */
function recordedCalls(recorded: any): Array<{ callId: string; name: string; arguments: string; output: string }> {
  const outputs = new Map<string, string>(recorded.input.filter((i: any) => i.type === 'function_call_output').map((i: any) => [i.call_id, i.output]));
  return recorded.input
    .filter((i: any) => i.type === 'function_call')
    .map((i: any) => ({ callId: i.call_id, name: i.name, arguments: i.arguments, output: outputs.get(i.call_id)! }));
}

/** A valid Anthropic Messages request carrying what the Codex body says. */
function expectValidAnthropicRequest(sent: { body: any; raw: string; path: string }, recorded: any, expectedToolNames: string[]): void {
  const b = sent.body;
  expect(sent.path.split('?')[0]).toBe('/v1/messages');
  expect(b.model).toBe('claude-sonnet-4-5');
  expect(Number.isInteger(b.max_tokens) && b.max_tokens > 0, `max_tokens ${b.max_tokens}`).toBe(true);
  expect(b.stream).toBe(true);
  // Codex's system prompt (its first developer message) is the system.
  const system = typeof b.system === 'string' ? b.system : (b.system ?? []).map((s: any) => {
    expect(s.type).toBe('text');
    return s.text;
  }).join('\n');
  expect(system).toContain(developerText(recorded).slice(0, 500));
  // Messages: user / assistant only, starting and ending with the user, content blocks Anthropic takes, no empty text.
  expect(Array.isArray(b.messages) && b.messages.length > 0).toBe(true);
  expect(b.messages[0].role).toBe('user');
  expect(b.messages.at(-1).role).toBe('user');
  const toolUses = new Map<string, any>();
  b.messages.forEach((m: any, i: number) => {
    expect(['user', 'assistant'], `messages.${i}.role`).toContain(m.role);
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    expect(blocks.length, `messages.${i} has content`).toBeGreaterThan(0);
    for (const block of blocks) {
      expect(['text', 'image', 'document', 'tool_use', 'tool_result'], `messages.${i} block ${block.type}`).toContain(block.type);
      if (block.type === 'text') expect(block.text, `messages.${i}: empty text block`).not.toBe('');
      if (block.type === 'tool_use') {
        expect(m.role).toBe('assistant');
        expect(block.id).toMatch(/^[a-zA-Z0-9_-]+$/);
        toolUses.set(block.id, block);
        // Anthropic wants the results in the next (user) message, first.
        const next = b.messages[i + 1];
        expect(next?.role, `tool_use ${block.id} is answered`).toBe('user');
        const results = (next.content as any[]).filter((c) => c.type === 'tool_result').map((c) => c.tool_use_id);
        expect(results).toContain(block.id);
        const firstOther = (next.content as any[]).findIndex((c) => c.type !== 'tool_result');
        if (firstOther !== -1) expect((next.content as any[]).slice(firstOther).some((c) => c.type === 'tool_result'), 'tool_result blocks come first').toBe(false);
      }
      if (block.type === 'tool_result') {
        expect(m.role).toBe('user');
        expect(toolUses.has(block.tool_use_id), `tool_result ${block.tool_use_id} answers a tool_use`).toBe(true);
      }
    }
  });
  // The recorded function_call / function_call_output pairs: tool_use / tool_result with Codex's call ids.
  for (const c of recordedCalls(recorded)) {
    const use = toolUses.get(c.callId);
    expect(use, `tool_use ${c.callId}`).toBeDefined();
    expect(use.name).toBe(c.name);
    expect(use.input).toEqual(JSON.parse(c.arguments));
    const result = b.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((x: any) => x.type === 'tool_result' && x.tool_use_id === c.callId);
    expect(JSON.stringify(result.content)).toContain('Process exited with code 0');
  }
  // Tools: the client tools, as Anthropic tools; the custom apply_patch tool as a tool of one string `input`.
  const tools: any[] = b.tools ?? [];
  const clientTools = tools.filter((t) => t.input_schema !== undefined);
  for (const t of clientTools) {
    expect(t.name).toMatch(/^[a-zA-Z0-9_-]{1,128}$/);
    expect(t.input_schema.type).toBe('object');
  }
  // Without tools, the tools its earlier calls called are declared (Anthropic wants them), and none may be called.
  const declared = expectedToolNames.length > 0 ? expectedToolNames : [...new Set(recordedCalls(recorded).map((c) => c.name))];
  expect(clientTools.map((t) => t.name).sort()).toEqual([...declared].sort());
  if (expectedToolNames.length === 0 && declared.length > 0) expect(b.tool_choice).toEqual({ type: 'none' });
  for (const t of tools.filter((x) => x.input_schema === undefined)) expect(t.type, `server tool ${JSON.stringify(t)}`).toMatch(/^web_search_/);
  if (expectedToolNames.includes('apply_patch')) {
    const patch = clientTools.find((t) => t.name === 'apply_patch');
    expect(patch.input_schema.properties.input.type).toBe('string');
    expect(patch.input_schema.required).toEqual(['input']);
    expect(JSON.stringify(patch)).toContain('begin_patch');
  }
  if (tools.length === 0) {
    expect(b.tools === undefined || b.tools.length === 0).toBe(true);
    expect(b.tool_choice, 'no tool_choice without tools').toBeUndefined();
  } else if (b.tool_choice !== undefined) {
    expect(b.tool_choice.type).toBe(expectedToolNames.length === 0 ? 'none' : 'auto');
  }
  expect(leakedOf(recorded, sent.raw)).toEqual([]);
}

/** A valid Chat Completions request carrying what the Codex body says. */
function expectValidChatRequest(sent: { body: any; raw: string; path: string }, recorded: any, expectedToolNames: string[]): void {
  const b = sent.body;
  expect(sent.path).toBe('/v1/chat/completions');
  expect(b.model).toBe('qwen3-coder');
  expect(b.stream).toBe(true);
  expect(b.stream_options).toEqual({ include_usage: true });
  expect(b.messages[0].role).toBe('system');
  expect(JSON.stringify(b.messages[0].content)).toContain(JSON.stringify(developerText(recorded).slice(0, 500)).slice(1, -1));
  const answered = new Set<string>();
  let open: Set<string> | null = null;
  b.messages.forEach((m: any, i: number) => {
    expect(['system', 'user', 'assistant', 'tool'], `messages.${i}.role`).toContain(m.role);
    if (m.role === 'tool') {
      expect(open, `messages.${i}: a tool message follows an assistant message with tool_calls`).not.toBeNull();
      expect(open!.has(m.tool_call_id), `messages.${i}.tool_call_id ${m.tool_call_id}`).toBe(true);
      answered.add(m.tool_call_id);
      expect(typeof m.content === 'string' || Array.isArray(m.content)).toBe(true);
      return;
    }
    if (open) for (const id of open) expect(answered.has(id), `tool call ${id} is answered before messages.${i}`).toBe(true);
    open = null;
    if (m.role === 'assistant') {
      expect(m.content != null || (m.tool_calls?.length ?? 0) > 0, `messages.${i}: assistant with content or tool calls`).toBe(true);
      if (m.tool_calls?.length) {
        open = new Set(m.tool_calls.map((c: any) => c.id));
        for (const c of m.tool_calls) {
          expect(c.type).toBe('function');
          expect(typeof c.function.name).toBe('string');
          JSON.parse(c.function.arguments);
        }
      }
    } else {
      expect(m.content, `messages.${i}: content`).toBeTruthy();
    }
  });
  expect(b.messages.at(-1).role === 'user' || b.messages.at(-1).role === 'tool').toBe(true);
  for (const c of recordedCalls(recorded)) {
    const assistant = b.messages.find((m: any) => m.tool_calls?.some((t: any) => t.id === c.callId));
    expect(assistant, `tool call ${c.callId}`).toBeDefined();
    const tc = assistant.tool_calls.find((t: any) => t.id === c.callId);
    expect(tc.function.name).toBe(c.name);
    expect(JSON.parse(tc.function.arguments)).toEqual(JSON.parse(c.arguments));
    const tool = b.messages.find((m: any) => m.role === 'tool' && m.tool_call_id === c.callId);
    expect(JSON.stringify(tool.content)).toContain('Process exited with code 0');
  }
  const tools: any[] = b.tools ?? [];
  for (const t of tools) {
    expect(t.type).toBe('function');
    expect(t.function.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(t.function.parameters.type).toBe('object');
  }
  expect(tools.map((t) => t.function.name).sort()).toEqual([...expectedToolNames].sort());
  if (expectedToolNames.includes('apply_patch')) {
    const patch = tools.find((t) => t.function.name === 'apply_patch');
    expect(patch.function.parameters.properties.input.type).toBe('string');
    expect(patch.function.parameters.required).toEqual(['input']);
    expect(JSON.stringify(patch)).toContain('begin_patch');
  }
  if (tools.length === 0) {
    expect(b.tool_choice, 'no tool_choice without tools').toBeUndefined();
    expect(b.parallel_tool_calls, 'no parallel_tool_calls without tools').toBeUndefined();
  } else {
    expect(b.tool_choice === undefined || b.tool_choice === 'auto').toBe(true);
  }
  expect(leakedOf(recorded, sent.raw)).toEqual([]);
}

/**
 * x-agentgw-dropped-tools names the built-in tools left out: all but web search always (Codex's tool_search); web search
 * either left out and named, or run by the target (then in the upstream request, and not named).
 */
function expectDroppedToolsHeader(answer: Answer, recorded: any, upstreamSearches: boolean): void {
  const builtIn = builtInTools(recorded);
  const header = answer.headers.get('x-agentgw-dropped-tools');
  const dropped = header ? header.split(',').map((s) => s.trim()) : [];
  for (const t of builtIn.filter((x) => x !== 'web_search')) expect(dropped, `x-agentgw-dropped-tools: ${header}`).toContain(t);
  for (const t of dropped) expect(builtIn).toContain(t);
  if (builtIn.length === 0) expect(header).toBeNull();
  if (builtIn.includes('web_search')) expect(upstreamSearches, `web_search ${dropped.includes('web_search') ? 'named dropped' : 'not named dropped'} but the upstream ${upstreamSearches ? 'searches' : 'does not search'}`).toBe(!dropped.includes('web_search'));
  else expect(upstreamSearches).toBe(false);
}

/** A response object that is `sent` with, at most, fields the Open Responses schema requires added. */
function expectOnlyRequiredFieldsAdded(got: Record<string, unknown>, sent: Record<string, unknown>): void {
  expect(Object.fromEntries(Object.keys(sent).map((k) => [k, got[k]]))).toEqual(sent);
  for (const k of Object.keys(got)) if (!(k in sent)) expect(REQUIRED_RESPONSE_FIELDS, `added ${k}`).toContain(k);
}

/**
 * A native stream as the upstream sent it (agentgw's id aside): every event byte for byte, but the response snapshots
 * that lack fields the Open Responses schema requires, which have them added and nothing else changed.
 */
function expectAsSentWithRequiredFields(answer: string, sent: string): void {
  const got = answer.split('\n\n');
  const want = sent.split('\n\n');
  expect(got.length).toBe(want.length);
  const dataOf = (frame: string) => JSON.parse(frame.split('\n').find((l) => l.startsWith('data: '))!.slice('data: '.length));
  got.forEach((frame, i) => {
    const response = frame.includes('"response":{') ? dataOf(frame).response : undefined;
    if (response) for (const k of REQUIRED_RESPONSE_FIELDS) expect(response, `event ${i}: ${k}`).toHaveProperty(k);
    if (frame === want[i]) return;
    const { response: gotResponse, ...gotEvent } = dataOf(frame);
    const { response: wantResponse, ...wantEvent } = dataOf(want[i]);
    expect(gotEvent).toEqual(wantEvent);
    expect(frame.split('\n')[0]).toBe(want[i].split('\n')[0]);
    expectOnlyRequiredFieldsAdded(gotResponse, wantResponse);
  });
}

/** A valid Responses stream from agentgw: its items. */
function wellFormedStream(answer: Answer, model: string): { events: Event[]; items: any[]; id: string } {
  expect(answer.status, answer.text).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(answer.headers.get('x-agent-trace-id')).toBe(answer.session);
  const events = parseEvents(answer.text);
  const items = wellFormedOutput(events);
  // Every event and response snapshot agentgw wrote, against the Open Responses schema (custom tool calls are extensions).
  expectOpenResponsesStream(events.map((e) => e.data));
  const id = ourIdOf(events);
  const last = events.at(-1)!;
  expect(last.event).toBe('response.completed');
  expect(last.data.response).toMatchObject({ object: 'response', status: 'completed', model });
  return { events, items, id };
}

/** Recorded bodies for the translated paths (lite has its tools in an additional_tools item: tested apart). */
const TRANSLATED_BODIES = CODEX_BODIES.map((b) => b.file);

const EXEC_ARGS = { cmd: 'echo hi > note.txt && cat note.txt' };
const PATCH_INPUT = '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n';

/** One custom_tool_call item (OpenAI's custom tool call has no status; one, if sent, says completed). */
function expectCustomToolCall(items: any[], callId: string): void {
  expect(items).toHaveLength(1);
  const { status, ...item } = items[0];
  expect(item).toEqual({ type: 'custom_tool_call', id: expect.any(String), call_id: callId, name: 'apply_patch', input: PATCH_INPUT });
  if (status !== undefined) expect(status).toBe('completed');
}

describe('translated replay: Codex to an Anthropic-format upstream', () => {
  const USAGE = { input_tokens: 1000, cache_read_input_tokens: 800, cache_creation_input_tokens: 0, output_tokens: 20 };
  /** A call of exec_command when the request offers it (and lets it be called), else text. */
  const script = (body: any): Reply =>
    (body.tools ?? []).some((t: any) => t.name === 'exec_command') && body.tool_choice?.type !== 'none'
      ? { content: [{ type: 'text', text: 'Running it.' }, { type: 'tool_use', id: 'toolu_01ReplayExec', name: 'exec_command', input: EXEC_ARGS }], stop_reason: 'tool_use', usage: USAGE }
      : textReply('Summary: note.txt holds hi.', USAGE);

  for (const file of TRANSLATED_BODIES) {
    const entry = CODEX_BODIES.find((b) => b.file === file)!;
    test(`${file}: a valid Anthropic request, a well-formed Responses stream, dropped tools named consistently`, async () => {
      const recorded = fixtureJson(file);
      nextAnthropic = script;
      const from = anthropic.messageRequests.length;
      const answer = await send({ ...recorded, model: 'via-anthropic' }, entry.headers);
      const sent = anthropic.messageRequests.slice(from);
      expect(sent, answer.text).toHaveLength(1);
      const { items, id } = wellFormedStream(answer, 'via-anthropic');
      const body = sent[0]!.body;
      const tools = file === 'codex-lite-request.json' ? clientToolNames(recorded.input[0].tools) : clientToolNames(recorded.tools);
      if (file !== 'codex-lite-request.json') expectValidAnthropicRequest(sent[0]!, recorded, tools);
      expectDroppedToolsHeader(answer, recorded, (body.tools ?? []).some((t: any) => /^web_search/.test(t.type ?? '')));
      if (file === 'codex-request.json') console.info(`[responses replay] anthropic: x-agentgw-dropped-tools ${answer.headers.get('x-agentgw-dropped-tools')}`);

      if (tools.includes('exec_command')) {
        expect(items.map((i) => i.type)).toEqual(['message', 'function_call']);
        expect(items[0].content[0].text).toBe('Running it.');
        expect(items[1]).toMatchObject({ type: 'function_call', call_id: 'toolu_01ReplayExec', name: 'exec_command', status: 'completed' });
        expect(JSON.parse(items[1].arguments)).toEqual(EXEC_ARGS);
      } else {
        expect(items.map((i) => i.type)).toEqual(['message']);
      }
      const [step] = await stepsOf(answer.session);
      expectTraceStep(step, { stream: true, provider: 'anthropic', model: 'anthropic/claude-sonnet-4-5', responseId: id, usage: { input: 1800, cached: 800, output: 20, reasoning: 0 } });
    });
  }

  test('codex-compaction-request.json (tools: [] and a function_call pair): the upstream request defines tools for its tool_use / tool_result blocks', async () => {
    // Anthropic refuses tool_use / tool_result blocks in a request without tools ("Requests which include `tool_use` or
    // `tool_result` blocks must define tools."); Codex's compaction request has both.
    const recorded = fixtureJson('codex-compaction-request.json');
    expect(recorded.tools).toEqual([]);
    expect(recordedCalls(recorded)).toHaveLength(1);
    nextAnthropic = () => textReply('Summary: note.txt holds hi.');
    const from = anthropic.messageRequests.length;
    const answer = await send({ ...recorded, model: 'via-anthropic' }, CODEX_HEADERS);
    expect(answer.status, answer.text).toBe(200);
    const body = anthropic.messageRequests.slice(from)[0]!.body;
    const blocks = body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
    const toolBlocks = blocks.filter((b: any) => b.type === 'tool_use' || b.type === 'tool_result');
    if (toolBlocks.length > 0) expect(body.tools ?? [], `${toolBlocks.length} tool_use / tool_result blocks and no tools`).not.toEqual([]);
    // The call and its output are in the request either way.
    expect(JSON.stringify(body.messages)).toContain('echo hi > note.txt');
    expect(JSON.stringify(body.messages)).toContain('Process exited with code 0');
  });

  test('codex-lite-request.json: the tools of its additional_tools item reach the upstream as tools', async () => {
    const recorded = fixtureJson('codex-lite-request.json');
    nextAnthropic = () => textReply('ok');
    const from = anthropic.messageRequests.length;
    const answer = await send({ ...recorded, model: 'via-anthropic' }, CODEX_LITE_HEADERS);
    expect(answer.status, answer.text).toBe(200);
    const sent = anthropic.messageRequests.slice(from)[0]!;
    expectValidAnthropicRequest(sent, { ...recorded, input: recorded.input.slice(1) }, clientToolNames(recorded.input[0].tools));
  });

  test('a call of the custom apply_patch tool comes back as a custom_tool_call with the patch as its input', async () => {
    nextAnthropic = () => ({ content: [{ type: 'tool_use', id: 'toolu_01ReplayPatch', name: 'apply_patch', input: { input: PATCH_INPUT } }], stop_reason: 'tool_use', usage: USAGE });
    const answer = await send({ ...fixtureJson('codex-request.json'), model: 'via-anthropic' }, CODEX_HEADERS);
    const { items } = wellFormedStream(answer, 'via-anthropic');
    expectCustomToolCall(items, 'toolu_01ReplayPatch');
  });

  test('stream: false: a response object with the function_call', async () => {
    nextAnthropic = script;
    const from = anthropic.messageRequests.length;
    const answer = await send({ ...fixtureJson('codex-tool-output-request.json'), model: 'via-anthropic', stream: false }, CODEX_HEADERS);
    expect(answer.status, answer.text).toBe(200);
    expect(anthropic.messageRequests.slice(from)[0]!.body.stream).not.toBe(true);
    const value = JSON.parse(answer.text);
    expect(value).toMatchObject({ object: 'response', status: 'completed', model: 'via-anthropic', store: false });
    expect(value.id).toMatch(RESPONSE_ID);
    expect(value.output.map((i: any) => i.type)).toEqual(['message', 'function_call']);
    expect(value.output[1]).toMatchObject({ call_id: 'toolu_01ReplayExec', name: 'exec_command' });
    const [step] = await stepsOf(answer.session);
    expectTraceStep(step, { stream: false, provider: 'anthropic', model: 'anthropic/claude-sonnet-4-5', responseId: value.id, usage: { input: 1800, cached: 800, output: 20, reasoning: 0 } });
  });
});

describe('translated replay: Codex to an OpenAI-compatible chat upstream', () => {
  const USAGE = { prompt_tokens: 1500, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 1000 } };
  const script = (body: any): ChatScriptReply =>
    (body.tools ?? []).some((t: any) => t.function?.name === 'exec_command')
      ? { content: 'Running it.', tool_calls: [{ id: 'call_replay_exec', name: 'exec_command', arguments: EXEC_ARGS }], usage: USAGE }
      : chatTextReply('Summary: note.txt holds hi.', USAGE);

  for (const file of TRANSLATED_BODIES) {
    const entry = CODEX_BODIES.find((b) => b.file === file)!;
    test(`${file}: a valid chat request, a well-formed Responses stream, dropped tools named consistently`, async () => {
      const recorded = fixtureJson(file);
      nextCompat = script;
      const from = compat.chatRequests.length;
      const answer = await send({ ...recorded, model: 'via-compat' }, entry.headers);
      const sent = compat.chatRequests.slice(from);
      expect(sent, answer.text).toHaveLength(1);
      const { items, id } = wellFormedStream(answer, 'via-compat');
      const body = sent[0]!.body;
      const tools = file === 'codex-lite-request.json' ? clientToolNames(recorded.input[0].tools) : clientToolNames(recorded.tools);
      if (file !== 'codex-lite-request.json') expectValidChatRequest(sent[0]!, recorded, tools);
      expectDroppedToolsHeader(answer, recorded, body.web_search_options != null);
      if (file === 'codex-request.json') console.info(`[responses replay] openai-compatible: x-agentgw-dropped-tools ${answer.headers.get('x-agentgw-dropped-tools')}`);

      if (tools.includes('exec_command')) {
        expect(items.map((i) => i.type)).toEqual(['message', 'function_call']);
        expect(items[1]).toMatchObject({ type: 'function_call', call_id: 'call_replay_exec', name: 'exec_command', status: 'completed' });
        expect(JSON.parse(items[1].arguments)).toEqual(EXEC_ARGS);
      } else {
        expect(items.map((i) => i.type)).toEqual(['message']);
      }
      const [step] = await stepsOf(answer.session);
      expectTraceStep(step, { stream: true, provider: 'compat', model: 'compat/qwen3-coder', responseId: id, usage: { input: 1500, cached: 1000, output: 30, reasoning: 0 } });
    });
  }

  test('codex-lite-request.json: the tools of its additional_tools item reach the upstream as tools', async () => {
    const recorded = fixtureJson('codex-lite-request.json');
    nextCompat = () => chatTextReply('ok');
    const from = compat.chatRequests.length;
    const answer = await send({ ...recorded, model: 'via-compat' }, CODEX_LITE_HEADERS);
    expect(answer.status, answer.text).toBe(200);
    const sent = compat.chatRequests.slice(from)[0]!;
    expectValidChatRequest(sent, { ...recorded, input: recorded.input.slice(1) }, clientToolNames(recorded.input[0].tools));
  });

  test('a call of the custom apply_patch tool comes back as a custom_tool_call with the patch as its input', async () => {
    nextCompat = () => ({ tool_calls: [{ id: 'call_replay_patch', name: 'apply_patch', arguments: { input: PATCH_INPUT } }], usage: USAGE });
    const answer = await send({ ...fixtureJson('codex-request.json'), model: 'via-compat' }, CODEX_HEADERS);
    const { items } = wellFormedStream(answer, 'via-compat');
    expectCustomToolCall(items, 'call_replay_patch');
  });

  test('stream: false: a response object with the function_call', async () => {
    nextCompat = script;
    const answer = await send({ ...fixtureJson('codex-reasoning-tool-output-request.json'), model: 'via-compat', stream: false }, CODEX_HEADERS);
    expect(answer.status, answer.text).toBe(200);
    const value = JSON.parse(answer.text);
    expect(value).toMatchObject({ object: 'response', status: 'completed', model: 'via-compat' });
    expect(value.id).toMatch(RESPONSE_ID);
    expect(value.output.map((i: any) => i.type)).toEqual(['message', 'function_call']);
    expect(value.output[1]).toMatchObject({ call_id: 'call_replay_exec', name: 'exec_command' });
    const [step] = await stepsOf(answer.session);
    expectTraceStep(step, { stream: false, provider: 'compat', model: 'compat/qwen3-coder', responseId: value.id, usage: { input: 1500, cached: 1000, output: 30, reasoning: 0 } });
  });
});
