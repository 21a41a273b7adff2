// Replays the recorded fixtures (__fixtures__/README.md) through agentgw's /v1/messages:
// (a) native, to an Anthropic-format upstream: Claude Code's recorded request reaches it as sent (model aside) with its
//     anthropic-version / anthropic-beta headers; Anthropic's recorded answers come back byte for byte, billed from the
//     usage they report (cache reads and 5-minute / 1-hour cache writes apart); its errors come back in Anthropic's shape
//     with agentgw's code;
// (b) translated, to an OpenAI-format upstream: the same request becomes a sensible Chat Completions request and the
//     answer a valid Anthropic message, streamed and not.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type Reply, type ScriptedAnthropic, startScriptedAnthropic, textReply } from '../../../test-support/scripted-anthropic.js';
import { type ChatScriptReply, type ScriptedOpenAI, chatTextReply, startScriptedOpenAI } from '../../../test-support/scripted-openai.js';

const FIXTURES = new URL('./__fixtures__/', import.meta.url);
const fixtureText = (name: string): string => readFileSync(new URL(name, FIXTURES), 'utf8');
const fixtureJson = (name: string): any => JSON.parse(fixtureText(name));

const REQUEST = fixtureJson('claude-code-request.json');
const TOOL_RESULT_REQUEST = fixtureJson('claude-code-tool-result-request.json');
const RECORDED_HEADERS: Record<string, string> = fixtureJson('claude-code-headers.json').requests[1].headers;
const STREAM_THINKING = fixtureText('anthropic-stream-thinking-tool-use.sse');
const STREAM_SERVER_TOOL = fixtureText('anthropic-stream-server-tool.sse');
const MESSAGE_THINKING_TEXT = fixtureText('anthropic-message-thinking-tool-use.json');

/** USD per million tokens. */
const SONNET = { input: 3, output: 15, cached_input: 0.3, cache_write_input: 3.75, cache_write_1h_input: 6 };
const GPT4O = { input: 2.5, output: 10, cached_input: 1.25 };

/** What the thinking + tool_use fixtures bill: 12 uncached, 15,216 cache reads, 1,024 5-minute and 819 1-hour cache writes, 187 out. */
const THINKING_COST = (12 * SONNET.input + 15_216 * SONNET.cached_input + 1024 * SONNET.cache_write_input + 819 * SONNET.cache_write_1h_input + 187 * SONNET.output) / 1e6;
/**
 * The server-tool stream's final usage (message_delta): 10,461 in, 142 out, no cache (message_start said 2,679 / 3), and
 * one web search, which Anthropic bills at USD 10 per 1,000.
 */
const SERVER_TOOL_COST = (10_461 * SONNET.input + 142 * SONNET.output) / 1e6 + 1 * 0.01;

/** The headers Claude Code sent, with the agent's key and a trace of the test's own. */
function claudeCodeHeaders(key: string, traceId: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(RECORDED_HEADERS)) {
    if (['host', 'content-length', 'connection', 'accept-encoding', 'x-api-key', 'x-claude-code-session-id'].includes(k)) continue;
    out[k] = v;
  }
  out['x-api-key'] = key;
  out['x-claude-code-session-id'] = traceId;
  return out;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

let gw: TestGateway;
let anthropic: ScriptedAnthropic;
let openai: ScriptedOpenAI;
let admin: ReturnType<typeof adminClient>;
let key: string;
/** What the Anthropic upstream answers next (per test). */
let nextAnthropic: (body: any) => Reply = () => textReply('ok');
/** What the OpenAI upstream answers next (per test). */
let nextOpenAI: (body: any) => ChatScriptReply = () => chatTextReply('ok');
let traceCounter = 0;

beforeAll(async () => {
  anthropic = await startScriptedAnthropic((body) => nextAnthropic(body));
  openai = await startScriptedOpenAI((body) => nextOpenAI(body));
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-secret' },
        openai: { type: 'openai', base_url: openai.url, api_key: 'sk-openai-upstream-secret' },
      },
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5'], 'translated-*': ['openai/gpt-4o'] },
      prices: { 'anthropic/claude-sonnet-4-5': SONNET, 'openai/gpt-4o': GPT4O },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'replayer')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
  await openai?.close();
});

function newTraceId(): string {
  traceCounter += 1;
  return `replay-${traceCounter}-${Date.now()}`;
}

async function send(body: unknown, traceId: string, agentKey = key): Promise<Answer> {
  const res = await fetch(`${gw.url}/v1/messages?beta=true`, { method: 'POST', headers: claudeCodeHeaders(agentKey, traceId), body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function stepsOf(traceId: string): Promise<any[]> {
  await gw.runtime.dataPlane.usage.flush();
  const trace = await admin.call('GET', `/traces/${encodeURIComponent(traceId)}`);
  return trace.requests;
}

/** `event:` names of an SSE body, in order. */
function eventNames(sse: string): string[] {
  return [...sse.matchAll(/^event: (.+)$/gm)].map((m) => m[1]!);
}

/** The data of each event of an SSE body, parsed. */
function events(sse: string): Array<{ event: string; data: any }> {
  return sse
    .split(/\n\n+/)
    .filter((frame) => frame.trim())
    .map((frame) => {
      const name = /^event: (.*)$/m.exec(frame)?.[1] ?? '';
      const data = frame
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      return { event: name, data: JSON.parse(data) };
    });
}

/**
 * Accumulates Anthropic stream events into the message, checking the grammar as it goes: message_start first,
 * content blocks opened, filled and closed in index order, message_delta then message_stop last.
 */
function accumulate(sse: string): any {
  const evs = events(sse).filter((e) => e.event !== 'ping');
  expect(evs[0]?.event).toBe('message_start');
  expect(evs.at(-1)?.event).toBe('message_stop');
  expect(evs.at(-2)?.event).toBe('message_delta');
  const message = structuredClone(evs[0]!.data.message);
  expect(message.content).toEqual([]);
  const json: string[] = [];
  let open = -1;
  for (const { event, data } of evs.slice(1, -2)) {
    expect(data.type).toBe(event);
    if (event === 'content_block_start') {
      expect(open).toBe(-1);
      expect(data.index).toBe(message.content.length);
      open = data.index;
      message.content.push(structuredClone(data.content_block));
      json[open] = '';
    } else if (event === 'content_block_delta') {
      expect(data.index).toBe(open);
      const block = message.content[open];
      const d = data.delta;
      if (d.type === 'text_delta') block.text += d.text;
      else if (d.type === 'input_json_delta') json[open] += d.partial_json;
      else if (d.type === 'thinking_delta') block.thinking += d.thinking;
      else if (d.type === 'signature_delta') block.signature = d.signature;
      else if (d.type === 'citations_delta') block.citations = [...(block.citations ?? []), d.citation];
      else throw new Error(`unexpected delta ${d.type}`);
    } else if (event === 'content_block_stop') {
      expect(data.index).toBe(open);
      const block = message.content[open];
      if ('input' in block && json[open]) block.input = JSON.parse(json[open]!);
      open = -1;
    } else {
      throw new Error(`unexpected event ${event}`);
    }
  }
  expect(open).toBe(-1);
  const delta = evs.at(-2)!.data;
  message.stop_reason = delta.delta.stop_reason;
  message.stop_sequence = delta.delta.stop_sequence;
  message.usage = { ...message.usage, ...delta.usage };
  return message;
}

describe('native replay: Claude Code request to an Anthropic-format upstream', () => {
  test('the recorded request reaches the upstream as sent except model, with anthropic-version and anthropic-beta', async () => {
    for (const recorded of [REQUEST, TOOL_RESULT_REQUEST]) {
      nextAnthropic = () => ({ sse: STREAM_THINKING });
      const traceId = newTraceId();
      const from = anthropic.messageRequests.length;
      const answer = await send(recorded, traceId);
      expect(answer.status, answer.text).toBe(200);
      const got = anthropic.messageRequests.slice(from);
      expect(got).toHaveLength(1);
      const sent = got[0]!;
      expect(sent.path).toBe('/v1/messages?beta=true');
      expect(sent.body).toEqual({ ...recorded, model: 'claude-sonnet-4-5' });
      expect(sent.headers['anthropic-version']).toBe(RECORDED_HEADERS['anthropic-version']);
      expect(sent.headers['anthropic-beta']).toBe(RECORDED_HEADERS['anthropic-beta']);
      expect(sent.headers['x-api-key']).toBe('sk-ant-upstream-secret');
      expect(JSON.stringify(sent.headers)).not.toContain(key);
      expect(answer.headers.get('x-agent-trace-id')).toBe(traceId);
    }
  });

  test('the thinking + tool_use stream comes back byte-identical, billed from message_delta with cache reads and writes', async () => {
    nextAnthropic = () => ({ sse: STREAM_THINKING });
    const traceId = newTraceId();
    const answer = await send(REQUEST, traceId);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(eventNames(answer.text)).toEqual(eventNames(STREAM_THINKING));
    expect(answer.text).toBe(STREAM_THINKING);
    // The stream accumulates to the recorded non-stream message.
    expect(accumulate(answer.text)).toEqual(JSON.parse(MESSAGE_THINKING_TEXT));
    const [step] = await stepsOf(traceId);
    expect(step).toMatchObject({ endpoint: 'messages', stream: true, status: 'ok', http_status: 200, provider: 'anthropic', model: 'anthropic/claude-sonnet-4-5' });
    expect(step.prompt_tokens).toBe(12 + 1843 + 15_216);
    expect(step.cached_tokens).toBe(15_216);
    expect(step.completion_tokens).toBe(187);
    expect(step.cost).toBeCloseTo(THINKING_COST, 9);
  });

  test('the server-tool (web search) stream comes back byte-identical, billed from message_delta with its search', async () => {
    nextAnthropic = () => ({ sse: STREAM_SERVER_TOOL });
    const traceId = newTraceId();
    const answer = await send(REQUEST, traceId);
    expect(answer.status, answer.text).toBe(200);
    expect(eventNames(answer.text)).toEqual(eventNames(STREAM_SERVER_TOOL));
    expect(answer.text).toBe(STREAM_SERVER_TOOL);
    const message = accumulate(answer.text);
    expect(message.content.map((b: any) => b.type)).toEqual(['text', 'server_tool_use', 'web_search_tool_result', 'text', 'text', 'text']);
    const [step] = await stepsOf(traceId);
    expect(step.prompt_tokens).toBe(10_461);
    expect(step.completion_tokens).toBe(142);
    expect(step.cost).toBeCloseTo(SERVER_TOOL_COST, 9);
  });

  test('the non-stream thinking + tool_use message comes back byte-identical, billed with cache reads and 5m / 1h writes', async () => {
    // Sent as the file's own bytes (pretty-printed), as application/json.
    nextAnthropic = () => ({ sse: MESSAGE_THINKING_TEXT, headers: { 'content-type': 'application/json' } });
    const traceId = newTraceId();
    const answer = await send({ ...REQUEST, stream: false }, traceId);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.text).toBe(MESSAGE_THINKING_TEXT);
    expect(anthropic.messageRequests.at(-1)!.body.stream).toBe(false);
    const [step] = await stepsOf(traceId);
    expect(step).toMatchObject({ endpoint: 'messages', stream: false, http_status: 200 });
    expect(step.prompt_tokens).toBe(12 + 1843 + 15_216);
    expect(step.cached_tokens).toBe(15_216);
    expect(step.completion_tokens).toBe(187);
    expect(step.cost).toBeCloseTo(THINKING_COST, 9);
  });

  /** Upstream error fixture -> the status, Anthropic type and agentgw code the client gets. */
  const ERROR_CASES = [
    { file: 'anthropic-error-invalid-request.json', upstreamStatus: 400, headers: {}, status: 400, type: 'invalid_request_error', code: 'validation_failed', says: 'max_tokens: Field required' },
    {
      file: 'anthropic-error-rate-limit.json',
      upstreamStatus: 429,
      headers: { 'retry-after': '17', 'anthropic-ratelimit-input-tokens-limit': '30000', 'anthropic-ratelimit-input-tokens-remaining': '0' },
      status: 429,
      type: 'rate_limit_error',
      code: 'upstream_rate_limited',
      says: 'rate limit',
    },
    { file: 'anthropic-error-overloaded.json', upstreamStatus: 529, headers: {}, status: 502, type: 'api_error', code: 'upstream_unavailable', says: 'Overloaded' },
  ] as const;

  for (const c of ERROR_CASES) {
    for (const stream of [true, false]) {
      test(`upstream ${c.upstreamStatus} (${c.file}, stream ${stream}): ${c.status} in Anthropic's shape with code ${c.code}`, async () => {
        nextAnthropic = () => ({ status: c.upstreamStatus, body: fixtureJson(c.file), headers: c.headers });
        const traceId = newTraceId();
        const from = anthropic.messageRequests.length;
        const answer = await send({ ...REQUEST, stream }, traceId);
        if (c.upstreamStatus === 429) console.info(`[replay] upstream 429 -> ${answer.status}, retry-after ${answer.headers.get('retry-after')}, x-should-retry ${answer.headers.get('x-should-retry')}`);
        // One call: no fallback target, and the gateway does not retry on its own.
        expect(anthropic.messageRequests.length - from).toBe(1);
        expect(answer.status, answer.text).toBe(c.status);
        expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
        const body = JSON.parse(answer.text);
        expect(body).toEqual({ type: 'error', error: { type: c.type, message: expect.any(String), code: c.code }, request_id: answer.headers.get('x-request-id') });
        expect(body.error.message).toContain(c.says);
        expect(answer.text).not.toContain('sk-ant-upstream-secret');
        if (c.upstreamStatus === 429) expect(answer.headers.get('retry-after'), `retry-after of a ${answer.status}`).toBe('17');
        const [step] = await stepsOf(traceId);
        expect(step).toMatchObject({ endpoint: 'messages', http_status: c.status, error_code: c.code, cost: 0 });
      });
    }
  }
});

describe('translated replay: Claude Code request to an OpenAI-format upstream', () => {
  const toolCallAnswer = (): ChatScriptReply => ({
    content: 'I will run it.',
    tool_calls: [{ id: 'call_replay_1', name: 'Bash', arguments: { command: 'echo hello-from-tool', description: 'Print hello' } }],
    usage: { prompt_tokens: 18_000, completion_tokens: 25, prompt_tokens_details: { cached_tokens: 16_000 } },
  });
  const translatedCost = ((18_000 - 16_000) * GPT4O.input + 16_000 * GPT4O.cached_input + 25 * GPT4O.output) / 1e6;

  function expectSensibleChatRequest(chat: any, recorded: any, stream: boolean): void {
    expect(chat.model).toBe('gpt-4o');
    expect(chat.messages[0].role).toBe('system');
    expect(JSON.stringify(chat.messages[0].content)).toContain('x-anthropic-billing-header');
    // Every system block of the request ends up in the system message (in order).
    for (const block of recorded.system) expect(JSON.stringify(chat.messages[0].content)).toContain(JSON.stringify(block.text).slice(1, -1).slice(0, 200));
    expect(chat.tools).toHaveLength(24);
    for (const [i, t] of chat.tools.entries()) {
      expect(t.type).toBe('function');
      expect(t.function.name).toBe(recorded.tools[i].name);
      expect(t.function.parameters).toEqual(recorded.tools[i].input_schema);
    }
    expect(chat.tool_choice === undefined || chat.tool_choice === 'auto').toBe(true);
    expect(chat.max_completion_tokens ?? chat.max_tokens).toEqual(expect.any(Number));
    expect(chat.stream === true).toBe(stream);
    if (stream) expect(chat.stream_options).toEqual({ include_usage: true });
    // The user's words made it.
    expect(JSON.stringify(chat.messages)).toContain('Run `echo hello-from-tool` with the Bash tool');
  }

  test('not streamed: a sensible chat request, a valid Anthropic message back, billed from the upstream usage', async () => {
    nextOpenAI = toolCallAnswer;
    const traceId = newTraceId();
    const from = openai.chatRequests.length;
    const answer = await send({ ...REQUEST, model: 'translated-model', stream: false }, traceId);
    expect(answer.status, answer.text).toBe(200);
    const sent = openai.chatRequests.slice(from);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe('/v1/chat/completions');
    expectSensibleChatRequest(sent[0]!.body, REQUEST, false);
    const message = JSON.parse(answer.text);
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'translated-model',
      content: [
        { type: 'text', text: 'I will run it.' },
        { type: 'tool_use', id: expect.any(String), name: 'Bash', input: { command: 'echo hello-from-tool', description: 'Print hello' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
    });
    expect(message.id).toMatch(/^msg_/);
    expect(message.usage.output_tokens).toBe(25);
    // Anthropic's input_tokens excludes cache reads; together they are the prompt.
    expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0) + (message.usage.cache_creation_input_tokens ?? 0)).toBe(18_000);
    const [step] = await stepsOf(traceId);
    expect(step).toMatchObject({ endpoint: 'messages', stream: false, http_status: 200, provider: 'openai', model: 'openai/gpt-4o', prompt_tokens: 18_000, cached_tokens: 16_000, completion_tokens: 25 });
    expect(step.cost).toBeCloseTo(translatedCost, 9);
  });

  test('streamed: a valid Anthropic event stream accumulating to the same message', async () => {
    nextOpenAI = toolCallAnswer;
    const traceId = newTraceId();
    const from = openai.chatRequests.length;
    const answer = await send({ ...REQUEST, model: 'translated-model' }, traceId);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const sent = openai.chatRequests.slice(from);
    expect(sent).toHaveLength(1);
    expectSensibleChatRequest(sent[0]!.body, REQUEST, true);
    const message = accumulate(answer.text);
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'text', text: 'I will run it.' },
        { type: 'tool_use', name: 'Bash', input: { command: 'echo hello-from-tool', description: 'Print hello' } },
      ],
      stop_reason: 'tool_use',
    });
    expect(message.usage.output_tokens).toBe(25);
    const [step] = await stepsOf(traceId);
    expect(step).toMatchObject({ endpoint: 'messages', stream: true, http_status: 200, prompt_tokens: 18_000, cached_tokens: 16_000, completion_tokens: 25 });
    expect(step.cost).toBeCloseTo(translatedCost, 9);
  });

  test('the recorded tool_result turn becomes an assistant tool call and its tool message', async () => {
    nextOpenAI = () => chatTextReply('It printed hello-from-tool.', { prompt_tokens: 19_000, completion_tokens: 8 });
    const traceId = newTraceId();
    const from = openai.chatRequests.length;
    const answer = await send({ ...TOOL_RESULT_REQUEST, model: 'translated-model' }, traceId);
    expect(answer.status, answer.text).toBe(200);
    const chat = openai.chatRequests.slice(from)[0]!.body;
    expectSensibleChatRequest(chat, TOOL_RESULT_REQUEST, true);
    const toolUse = TOOL_RESULT_REQUEST.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((b: any) => b.type === 'tool_use');
    const toolResult = TOOL_RESULT_REQUEST.messages.at(-1).content.find((b: any) => b.type === 'tool_result');
    const assistant = chat.messages.find((m: any) => m.role === 'assistant');
    expect(assistant.tool_calls).toEqual([{ id: toolUse.id, type: 'function', function: { name: toolUse.name, arguments: expect.any(String) } }]);
    expect(JSON.parse(assistant.tool_calls[0].function.arguments)).toEqual(toolUse.input);
    const tool = chat.messages.find((m: any) => m.role === 'tool');
    expect(tool.tool_call_id).toBe(toolUse.id);
    expect(JSON.stringify(tool.content)).toContain(JSON.stringify(toolResult.content).includes('hello-from-tool') ? 'hello-from-tool' : '');
    expect(accumulate(answer.text).content).toEqual([{ type: 'text', text: 'It printed hello-from-tool.' }]);
  });
});

describe('policies on the recorded request', () => {
  test('a spent daily budget: 429 rate_limit_error / daily_budget_exceeded, x-should-retry false, retry-after and the reset time', async () => {
    await admin.policy('replay-no-budget', { tenant_id: 'acme', daily_budget: 0 });
    const broke = (await admin.agent('acme', 'replay-broke', 'replay-no-budget')).api_key;
    const from = anthropic.messageRequests.length;
    const answer = await send(REQUEST, newTraceId(), broke);
    expect(answer.status, answer.text).toBe(429);
    expect(JSON.parse(answer.text)).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: expect.any(String), code: 'daily_budget_exceeded' },
      request_id: answer.headers.get('x-request-id'),
    });
    expect(answer.headers.get('x-should-retry')).toBe('false');
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(answer.headers.get('x-agentgw-budget-reset')).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00Z$/);
    expect(anthropic.messageRequests.length).toBe(from);
  });

  test('rules.clamp_output: the native upstream gets the lowered max_tokens the x-agentgw-clamped-max-tokens header names', async () => {
    // Worst case of the recorded request: ~77.5k prompt tokens x $6 (1-hour cache writes) + 64,000 x $15 = ~$1.43.
    await admin.policy('replay-clamp', { tenant_id: 'acme', daily_budget: 1, rules: { clamp_output: true } });
    const clamped = (await admin.agent('acme', 'replay-clamped', 'replay-clamp')).api_key;
    nextAnthropic = () => ({ sse: STREAM_THINKING });
    const answer = await send(REQUEST, newTraceId(), clamped);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toBe(STREAM_THINKING);
    const header = Number(answer.headers.get('x-agentgw-clamped-max-tokens'));
    expect(header).toBeGreaterThanOrEqual(256);
    expect(header).toBeLessThan(64_000);
    const sent = anthropic.messageRequests.at(-1)!.body;
    expect(sent.max_tokens).toBe(header);
    // Nothing else changed.
    expect(sent).toEqual({ ...REQUEST, model: 'claude-sonnet-4-5', max_tokens: header });
  });

  test("translated: the output limit sent to gpt-4o is within the model's own maximum (16,384 tokens)", async () => {
    // Claude Code asks max_tokens 64000; OpenAI answers 400 to gpt-4o with more than 16,384 completion tokens
    // ("max_tokens is too large: 64000. This model supports at most 16384 completion tokens"), and agentgw knows the
    // limit (its price table's max_output_tokens, used for the reservation), so the request must not carry more.
    nextOpenAI = () => chatTextReply('ok');
    const answer = await send({ ...REQUEST, model: 'translated-model', stream: false }, newTraceId());
    expect(answer.status, answer.text).toBe(200);
    const chat = openai.chatRequests.at(-1)!.body;
    expect(chat.max_completion_tokens ?? chat.max_tokens).toBeLessThanOrEqual(16_384);
  });
});
