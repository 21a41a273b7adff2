// Automatic prompt caching: a Chat Completions client (the OpenAI SDK) translated to an Anthropic Messages upstream, and
// to Claude on Bedrock Converse, gets breakpoints on the tools, the system prompt and the conversation so far, so that
// an agent's every step after the first reads its prefix from the cache and is billed at cache prices. The upstream
// keeps a cache by Anthropic's documented rule (prompt-cache-upstream.ts): it reads nothing unless the gateway marks
// the prefix, and nothing unless that prefix is repeated byte for byte.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { FakeUpstream } from './__fixtures__/fake-upstream.js';
import { type CacheUsage, PromptCacheUpstream } from './__fixtures__/prompt-cache-upstream.js';

const SYSTEM = `You review supplier contracts for the legal team. ${'Quote each clause you rely on by number, say what it obliges each party to do, and flag any term that departs from the standard template. '.repeat(40)}`;
// An agent's tool definitions are long (usage notes, examples): these pass Sonnet's minimum on their own.
const READ_NOTES = 'Use it before quoting any clause; the text comes back with clause numbers in brackets and schedules appended. '.repeat(32);
const TOOLS: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'read_contract', description: `Reads a contract by id. ${READ_NOTES}`, parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } } },
  { type: 'function', function: { name: 'lookup_clause', description: 'Returns the text of one clause', parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } } },
];
const CLAUSE = (n: number) => `Clause ${n}. ${'The supplier shall deliver the goods described in Schedule A within the agreed period. '.repeat(6)}`;
const EPHEMERAL = { type: 'ephemeral' };
const POINT = { cachePoint: { type: 'default' } };
const SONNET = { input: 3, cached: 0.3, write: 3.75, output: 15 }; // USD per million tokens, Claude Sonnet 4.5
const OUTPUT_TOKENS = 20;

let upstream: FakeUpstream;
let cache: PromptCacheUpstream;
let gw: TestGateway;
let key: string;
let admin: ReturnType<typeof adminClient>;

/** Step n of the agent's run: a clause lookup until the ninth, then the summary. */
function answerOf(step: number): { text: string; call?: { id: string; n: number } } {
  return step < 10 ? { text: `Looking up clause ${step}.`, call: { id: `toolu_${String(step).padStart(2, '0')}`, n: step } } : { text: 'Clauses 1 to 9 follow the template.' };
}

beforeAll(async () => {
  upstream = await FakeUpstream.start();
  upstream.respond((req, res) => {
    const usage = cache.account(req);
    const step = cache.reported.length;
    const { text, call } = answerOf(step);
    if (req.url.endsWith('/messages') && req.json().stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(messagesEvents(text, call, usage));
      return;
    }
    const reply = req.url.endsWith('/converse') ? converseReply(text, call, usage) : messagesReply(text, call, usage);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
  });
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: { type: 'anthropic', base_url: `${upstream.url}/v1`, api_key: 'sk-ant-test' },
        plain: { type: 'anthropic', base_url: `${upstream.url}/v1`, api_key: 'sk-ant-test', prompt_caching: 'off' },
        bedrock: { type: 'bedrock', base_url: upstream.url, region: 'us-east-1', access_key_id: 'AKIDEXAMPLE0TEST', secret_access_key: 'secret-example' },
      },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'contracts-bot')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.stop();
});
beforeEach(() => {
  cache = new PromptCacheUpstream();
});

function messagesReply(text: string, call: { id: string; n: number } | undefined, usage: CacheUsage) {
  const content: unknown[] = [{ type: 'text', text }];
  if (call) content.push({ type: 'tool_use', id: call.id, name: 'lookup_clause', input: { n: call.n } });
  return {
    id: `msg_${cache.reported.length}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content,
    stop_reason: call ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { ...usage, output_tokens: OUTPUT_TOKENS, service_tier: 'standard' },
  };
}

/** The same answer as Anthropic streams it: the prompt counts in message_start, repeated with the output in message_delta. */
function messagesEvents(text: string, call: { id: string; n: number } | undefined, usage: CacheUsage): string {
  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const message = { id: `msg_${cache.reported.length}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [], stop_reason: null, stop_sequence: null };
  const events = [
    event('message_start', { message: { ...message, usage: { ...usage, output_tokens: 1 } } }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
    event('content_block_stop', { index: 0 }),
  ];
  if (call) {
    events.push(
      event('content_block_start', { index: 1, content_block: { type: 'tool_use', id: call.id, name: 'lookup_clause', input: {} } }),
      event('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: JSON.stringify({ n: call.n }) } }),
      event('content_block_stop', { index: 1 }),
    );
  }
  events.push(
    event('message_delta', { delta: { stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { ...usage, output_tokens: OUTPUT_TOKENS } }),
    event('message_stop', {}),
  );
  return events.join('');
}

function converseReply(text: string, call: { id: string; n: number } | undefined, usage: CacheUsage) {
  const content: unknown[] = [{ text }];
  if (call) content.push({ toolUse: { toolUseId: call.id, name: 'lookup_clause', input: { n: call.n } } });
  const inputTokens = usage.input_tokens;
  return {
    metrics: { latencyMs: 100 },
    output: { message: { role: 'assistant', content } },
    stopReason: call ? 'tool_use' : 'end_turn',
    usage: {
      inputTokens,
      outputTokens: OUTPUT_TOKENS,
      totalTokens: inputTokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens + OUTPUT_TOKENS,
      cacheReadInputTokens: usage.cache_read_input_tokens,
      cacheWriteInputTokens: usage.cache_creation_input_tokens,
    },
  };
}

async function traceOf(id: string, requests: number): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const t = await admin.call('GET', `/traces/${encodeURIComponent(id)}`).catch(() => null);
    if (t && t.requests?.length === requests && t.requests.every((r: any) => r.status !== 'running')) return t;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`trace ${id} not recorded`);
}

/** One step streamed: the answer's text, tool call and usage put together from the chunks, as an agent does. */
async function streamedStep(client: OpenAI, body: OpenAI.ChatCompletionCreateParamsNonStreaming) {
  const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  let content = '';
  const calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const delta = chunk.choices[0]?.delta;
    if (delta?.content) content += delta.content;
    for (const d of delta?.tool_calls ?? []) {
      calls[d.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
      if (d.id) calls[d.index]!.id = d.id;
      if (d.function?.name) calls[d.index]!.function.name += d.function.name;
      if (d.function?.arguments) calls[d.index]!.function.arguments += d.function.arguments;
    }
  }
  return { message: { content, tool_calls: calls.length > 0 ? calls : undefined }, usage: usage! };
}

/** Runs the agent's 10 steps through the OpenAI SDK (every other one streamed when `streamEven`), returning the usage each answer carried. */
async function tenSteps(model: string, trace: string, streamEven = false): Promise<OpenAI.CompletionUsage[]> {
  const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl, maxRetries: 0, defaultHeaders: { 'x-agent-trace-id': trace } });
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: 'Contract C-17: look up clauses 1 to 9 one at a time, then tell me whether they follow the template.' },
  ];
  const usages: OpenAI.CompletionUsage[] = [];
  for (let step = 1; step <= 10; step++) {
    const body = { model, messages: [...messages], tools: TOOLS };
    let message: { content: string | null; tool_calls?: OpenAI.ChatCompletionMessageToolCall[] };
    if (streamEven && step % 2 === 0) {
      const streamed = await streamedStep(client, body);
      usages.push(streamed.usage);
      message = streamed.message;
    } else {
      const completion = await client.chat.completions.create(body);
      usages.push(completion.usage!);
      message = completion.choices[0]!.message;
    }
    messages.push({ role: 'assistant', content: message.content, tool_calls: message.tool_calls });
    const call = message.tool_calls?.[0];
    if (step < 10) {
      expect(call?.type === 'function' && call.function.name).toBe('lookup_clause');
      messages.push({ role: 'tool', tool_call_id: call!.id, content: CLAUSE(step) });
    } else {
      expect(message.content).toBe('Clauses 1 to 9 follow the template.');
    }
  }
  return usages;
}

/** Each step billed at cache prices: uncached input, cache reads and cache writes each at their own rate. */
async function expectCachePricedTrace(trace: string, usages: OpenAI.CompletionUsage[]) {
  const detail = await traceOf(trace, 10);
  detail.requests.forEach((r: any, i: number) => {
    const u = cache.reported[i]!;
    const prompt = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
    expect(r, `step ${i + 1}`).toMatchObject({ step: i + 1, http_status: 200, prompt_tokens: prompt, cached_tokens: u.cache_read_input_tokens, completion_tokens: OUTPUT_TOKENS });
    expect(usages[i]!.prompt_tokens).toBe(prompt);
    const priced = (u.input_tokens * SONNET.input + u.cache_read_input_tokens * SONNET.cached + u.cache_creation_input_tokens * SONNET.write + OUTPUT_TOKENS * SONNET.output) / 1e6;
    expect(r.cost, `step ${i + 1}`).toBeCloseTo(priced, 9);
    // From the second step on, the cache-priced cost is well below what the same prompt costs uncached.
    if (i > 0) expect(r.cost).toBeLessThan((prompt * SONNET.input + OUTPUT_TOKENS * SONNET.output) / 1e6 / 2);
  });
}

describe('a 10-step agent through the OpenAI SDK, translated to Claude', () => {
  test('Anthropic, every other step streamed: breakpoints on the last tool, the system prompt and the newest user turn; cache reads from the second step on, billed at cache prices', async () => {
    const usages = await tenSteps('anthropic/claude-sonnet-4-5', 'auto-cache-anthropic', true);
    const sent = upstream.requests.slice(-10).map((r) => r.json());
    expect(sent.map((body) => body.stream === true)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((step) => step % 2 === 0));
    for (const body of sent) {
      expect(body.tools.map((t: any) => t.cache_control)).toEqual([undefined, EPHEMERAL]);
      expect(body.system).toEqual([{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }]);
      // One breakpoint in the messages: on the last block of the newest user turn (the latest tool result).
      const marked = body.messages.flatMap((m: any, i: number) => m.content.flatMap((b: any, j: number) => (b.cache_control ? [[i, j]] : [])));
      expect(marked).toEqual([[body.messages.length - 1, body.messages.at(-1).content.length - 1]]);
      expect(body.messages.at(-1).role).toBe('user');
    }
    expect(sent[9].messages.at(-1).content.at(-1)).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_09', cache_control: EPHEMERAL });

    expect(cache.reported[0]!.cache_read_input_tokens).toBe(0);
    expect(cache.reported[0]!.cache_creation_input_tokens).toBeGreaterThan(1024);
    for (let i = 1; i < 10; i++) {
      // The whole previous prompt is read back; only the new step is written.
      expect(cache.reported[i]!.cache_read_input_tokens, `step ${i + 1}`).toBe(cache.reported[i - 1]!.cache_read_input_tokens + cache.reported[i - 1]!.cache_creation_input_tokens);
      expect(usages[i]!.prompt_tokens_details?.cached_tokens, `step ${i + 1}`).toBe(cache.reported[i]!.cache_read_input_tokens);
    }
    await expectCachePricedTrace('auto-cache-anthropic', usages);
  });

  test('Claude on Bedrock: cachePoints after the last tool, the system prompt and the newest user turn; cache reads from the second step on, billed at cache prices', async () => {
    const usages = await tenSteps('bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'auto-cache-bedrock');
    const sent = upstream.requests.slice(-10).map((r) => r.json());
    for (const body of sent) {
      expect(body.toolConfig.tools.at(-1)).toEqual(POINT);
      expect(body.toolConfig.tools.filter((t: any) => t.cachePoint)).toHaveLength(1);
      expect(body.system).toEqual([{ text: SYSTEM }, POINT]);
      const points = body.messages.flatMap((m: any, i: number) => m.content.flatMap((b: any, j: number) => (b.cachePoint ? [[i, j]] : [])));
      expect(points).toEqual([[body.messages.length - 1, body.messages.at(-1).content.length - 1]]);
    }
    for (let i = 1; i < 10; i++) {
      expect(cache.reported[i]!.cache_read_input_tokens, `step ${i + 1}`).toBeGreaterThan(0);
      expect(usages[i]!.prompt_tokens_details?.cached_tokens, `step ${i + 1}`).toBe(cache.reported[i]!.cache_read_input_tokens);
    }
    await expectCachePricedTrace('auto-cache-bedrock', usages);
  });

  test('prompt_caching: off sends the request as the client wrote it, and nothing is read from the cache', async () => {
    const usages = await tenSteps('plain/claude-sonnet-4-5', 'auto-cache-off');
    for (const r of upstream.requests.slice(-10)) expect(r.body.toString()).not.toContain('cache_control');
    expect(cache.reported.every((u) => u.cache_read_input_tokens === 0 && u.cache_creation_input_tokens === 0)).toBe(true);
    expect(usages.every((u) => (u.prompt_tokens_details?.cached_tokens ?? 0) === 0)).toBe(true);
  });
});

describe('where the breakpoints go, and when there are none', () => {
  async function chat(body: Record<string, unknown>) {
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await res.text();
    return upstream.last.json();
  }

  test('a breakpoint of the client\'s own: only that one is sent', async () => {
    const sent = await chat({
      model: 'anthropic/claude-sonnet-4-5',
      tools: TOOLS,
      messages: [{ role: 'system', content: SYSTEM, cache_control: EPHEMERAL }, { role: 'user', content: 'Read C-17.' }],
    });
    expect(sent.system).toEqual([{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }]);
    expect(JSON.stringify(sent.tools)).not.toContain('cache_control');
    expect(JSON.stringify(sent.messages)).not.toContain('cache_control');
  });

  test('a prompt shorter than the model\'s minimum gets no breakpoint; Haiku\'s minimum is twice Sonnet\'s', async () => {
    const short = { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] };
    expect(JSON.stringify(await chat({ model: 'anthropic/claude-sonnet-4-5', ...short }))).not.toContain('cache_control');
    // About 4 KB: past Sonnet's 1024 tokens (at 3 bytes a token), short of Haiku's 2048.
    const middling = { messages: [{ role: 'system', content: SYSTEM.slice(0, 4000) }, { role: 'user', content: 'Hi' }] };
    const sonnet = await chat({ model: 'anthropic/claude-sonnet-4-5', ...middling });
    expect(sonnet.system).toEqual([{ type: 'text', text: SYSTEM.slice(0, 4000), cache_control: EPHEMERAL }]);
    expect(sonnet.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: EPHEMERAL }] }]);
    const haiku = await chat({ model: 'anthropic/claude-haiku-4-5', ...middling });
    expect(JSON.stringify(haiku)).not.toContain('cache_control');
    // The tools alone too short, tools and system together long enough: the breakpoints start at the system prompt.
    const both = await chat({ model: 'anthropic/claude-sonnet-4-5', tools: TOOLS.slice(1), ...middling });
    expect(JSON.stringify(both.tools)).not.toContain('cache_control');
    expect(both.system[0].cache_control).toEqual(EPHEMERAL);
  });

  test('with web search on, the tool breakpoint stays on the last of the client\'s tools', async () => {
    const sent = await chat({ model: 'anthropic/claude-sonnet-4-5', tools: TOOLS, web_search_options: {}, messages: [{ role: 'user', content: 'Read C-17.' }] });
    expect(sent.tools.map((t: any) => [t.name, t.cache_control])).toEqual([['read_contract', undefined], ['lookup_clause', EPHEMERAL], ['web_search', undefined]]);
  });

  test('a Responses client (as Codex sends it) translated to Anthropic gets the breakpoints too', async () => {
    const res = await fetch(`${gw.baseUrl}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', instructions: SYSTEM, input: 'Read C-17.', store: false }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await res.text();
    const sent = upstream.last.json();
    expect(sent.system).toEqual([{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }]);
    expect(sent.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Read C-17.', cache_control: EPHEMERAL }] }]);
  });

  test('Bedrock models other than Claude get no cachePoint', async () => {
    const sent = await chat({ model: 'bedrock/meta.llama3-70b-instruct-v1:0', messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Hi' }] });
    expect(JSON.stringify(sent)).not.toContain('cachePoint');
  });

  test('a native Messages body (as Claude Code sends it) goes as written', async () => {
    const body = { model: 'anthropic/claude-sonnet-4-5', max_tokens: 256, system: SYSTEM, messages: [{ role: 'user', content: 'Read C-17.' }] };
    const res = await fetch(`${gw.baseUrl}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await res.text();
    const sent = upstream.last.json();
    expect(sent.system).toBe(SYSTEM);
    expect(sent.messages).toEqual(body.messages);
  });
});

describe('providers.<name>.prompt_caching', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-prompt-caching-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('auto and off are taken; anything else is refused at start with a sentence naming the field', () => {
    const write = (value: string) => {
      const path = join(dir, `${value}.yaml`);
      writeFileSync(path, ['providers:', '  claude:', '    type: anthropic', '    api_key: sk-ant-test', `    prompt_caching: ${value}`, ''].join('\n'));
      return path;
    };
    expect((loadConfig({ path: write('off'), env: {} }).providers.claude as { prompt_caching?: string }).prompt_caching).toBe('off');
    expect((loadConfig({ path: write('auto'), env: {} }).providers.claude as { prompt_caching?: string }).prompt_caching).toBe('auto');
    const path = write('on');
    let error: unknown;
    try {
      loadConfig({ path, env: {} });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('providers.claude.prompt_caching: must be "auto" or "off"');
  });
});
