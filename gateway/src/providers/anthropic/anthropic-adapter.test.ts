import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../../contract/errors.js';
import {
  abortAfterFrames,
  adapterOnFakeUpstream,
  collectFrames,
  ctx,
  FakeUpstream,
  firstFrameBeforeUpstreamEnds,
  fixtureReader,
  jsonReply,
  parseFrames,
  sseEventsOf,
  streamReply,
} from '../__fixtures__/fake-upstream.js';
import { createProvider } from '../index.js';
import { countTokens } from '../shared/count-tokens.js';
import type { OpenAIChatRequest, ProviderAdapter } from '../spec.js';
import { expectRefusedPlainAndStreamed, messagesWithoutContent, weatherCall } from '../__fixtures__/messages-without-content.js';

/** What the 1-hour fixtures bill: cache_creation_input_tokens 1873 = ephemeral_5m_input_tokens 349 + ephemeral_1h_input_tokens 1524. */
const CACHE_WRITE_1H_USAGE = {
  prompt_tokens: 3942,
  completion_tokens: 9,
  cached_prompt_tokens: 2048,
  cache_write_prompt_tokens: 1873,
  cache_write_1h_prompt_tokens: 1524,
  estimated: false,
};

const fixtures = fixtureReader(import.meta.url);
const API_KEY = 'sk-ant-api03-test-9f8e7d6c5b4a';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

const hello: OpenAIChatRequest = {
  model: 'anthropic/claude-sonnet-4-5',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello' },
  ],
};

describe('anthropic adapter', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('anthropic', { type: 'anthropic', base_url: `${url}/v1`, api_key: API_KEY }),
    (u, a) => ((upstream = u), (adapter = a)),
  );

  it('translates a plain request and the message back', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    const result = await adapter.chat(ctx('claude-sonnet-4-5'), { ...hello, temperature: 0.5, stop: 'END', max_completion_tokens: 300 });

    const req = upstream.last;
    expect(req.url).toBe('/v1/messages');
    expect(req.headers['x-api-key']).toBe(API_KEY);
    expect(req.headers['anthropic-version']).toBe('2023-06-01');
    expect(req.headers.authorization).toBeUndefined();
    expect(req.json()).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 300,
      system: 'You are terse.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }],
      temperature: 0.5,
      stop_sequences: ['END'],
    });

    expect(result.body).toMatchObject({
      id: 'chatcmpl-msg_01XFDUDYJgAACzvnptvVoYEL',
      object: 'chat.completion',
      model: 'claude-sonnet-4-5-20250929',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2060, completion_tokens: 12, total_tokens: 2072, prompt_tokens_details: { cached_tokens: 2048 } },
    });
    // Cache reads are part of the prompt, as OpenAI counts them.
    expect(result.usage).toEqual({ prompt_tokens: 2060, completion_tokens: 12, cached_prompt_tokens: 2048, cache_write_prompt_tokens: 0, cache_write_1h_prompt_tokens: 0, estimated: false });
  });

  it('reports prompt cache writes for billing, and keeps them out of the OpenAI usage object', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message-cache-write.json')));
    const result = await adapter.chat(ctx('claude-sonnet-4-5'), hello);
    // input_tokens 21 + cache_creation_input_tokens 1873 + cache_read_input_tokens 2048
    expect(result.usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, cached_prompt_tokens: 2048, cache_write_prompt_tokens: 1873, cache_write_1h_prompt_tokens: 0, estimated: false });
    expect(result.body.usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
  });

  it('reports 1-hour prompt cache writes apart, for billing only', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message-cache-write-1h.json')));
    const result = await adapter.chat(ctx('claude-sonnet-4-5'), hello);
    // cache_creation_input_tokens 1873 = ephemeral_5m_input_tokens 349 + ephemeral_1h_input_tokens 1524
    expect(result.usage).toEqual(CACHE_WRITE_1H_USAGE);
    expect(result.body.usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
  });

  it('sends the default max_tokens when the client gives none', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    await adapter.chat(ctx('claude-sonnet-4-5'), hello);
    expect(upstream.last.json().max_tokens).toBe(4096);
  });

  it('translates a tool conversation: tools, tool_choice, tool_use, parallel tool_results, images, json_schema', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    const schema = { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'], additionalProperties: false };
    await adapter.chat(ctx('claude-sonnet-4-5'), {
      model: 'anthropic/claude-sonnet-4-5',
      messages: [
        { role: 'developer', content: 'Use tools.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in Paris and the time?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/map.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18°C, sunny' },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '14:05' }] },
        { role: 'user', content: 'Summarise.' },
      ],
      tools: [weatherTool, { type: 'function', function: { name: 'get_time' } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'summary', schema } },
      user: 'agent-42',
    });

    expect(upstream.last.json()).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: 'Use tools.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in Paris and the time?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/map.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C, sunny' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: '14:05' },
            { type: 'text', text: 'Summarise.' },
          ],
        },
      ],
      tools: [
        { name: 'get_weather', description: 'Current weather of a city', input_schema: weatherTool.function.parameters },
        { name: 'get_time', input_schema: { type: 'object', properties: {} } },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      metadata: { user_id: 'agent-42' },
      output_config: { format: { type: 'json_schema', schema } },
    });
  });

  it('maps a named tool_choice and "none"', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    await adapter.chat(ctx('claude-sonnet-4-5'), { ...hello, tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    expect(upstream.last.json().tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    await adapter.chat(ctx('claude-sonnet-4-5'), { ...hello, tools: [weatherTool], tool_choice: 'none' });
    expect(upstream.last.json().tool_choice).toEqual({ type: 'none' });
  });

  it('returns tool_use blocks as OpenAI tool_calls', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message-tool-use.json')));
    const result = await adapter.chat(ctx('claude-sonnet-4-5'), { ...hello, tools: [weatherTool] });
    expect(result.body.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        content: "I'll check the weather in Paris.",
        tool_calls: [{ id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
      },
    });
    expect(result.usage).toEqual({ prompt_tokens: 384, completion_tokens: 58, cached_prompt_tokens: 0, cache_write_prompt_tokens: 0, estimated: false });
  });

  it('turns the SSE events into chat.completion.chunks, usage from message_start and message_delta', async () => {
    upstream.respond(streamReply(sseEventsOf(fixtures.text('message-stream.sse'))));
    const stream = await adapter.chatStream(ctx('claude-sonnet-4-5', { includeUsage: true }), hello);
    const chunks = parseFrames(await collectFrames(stream));

    expect(upstream.last.json().stream).toBe(true);
    expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason ?? null])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Hello' }, null],
      [{ content: ' there!' }, null],
      [{}, 'stop'],
      [undefined, null],
    ]);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id: 'chatcmpl-msg_01Wn7RGAMCP5wKmmXs8yT5f6', object: 'chat.completion.chunk', model: 'claude-sonnet-4-5-20250929' });
    }
    expect(chunks[4]).toMatchObject({ choices: [], usage: { prompt_tokens: 1049, completion_tokens: 6, total_tokens: 1055, prompt_tokens_details: { cached_tokens: 1024 } } });
    expect(stream.usage()).toEqual({ prompt_tokens: 1049, completion_tokens: 6, cached_prompt_tokens: 1024, cache_write_prompt_tokens: 0, cache_write_1h_prompt_tokens: 0, estimated: false });
    expect(stream.finishReason()).toBe('stop');
  });

  it.each([
    ['message_delta repeating the prompt counts (newer API versions)', (events: string[]) => events],
    [
      'message_start alone carrying the prompt counts',
      (events: string[]) => events.map((e) => (e.startsWith('event: message_delta') ? e.replace(/"usage":\{[^}]*\}/, '"usage":{"output_tokens":9}') : e)),
    ],
  ])('reports streamed prompt cache writes for billing: %s', async (_name, variant) => {
    const events = variant(sseEventsOf(fixtures.text('message-stream-cache-write.sse')));
    upstream.respond(streamReply(events));
    const stream = await adapter.chatStream(ctx('claude-sonnet-4-5', { includeUsage: true }), hello);
    const chunks = parseFrames(await collectFrames(stream));
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
    expect(stream.usage()).toEqual({ prompt_tokens: 3942, completion_tokens: 9, cached_prompt_tokens: 2048, cache_write_prompt_tokens: 1873, cache_write_1h_prompt_tokens: 0, estimated: false });
  });

  it.each([
    ['message_delta repeating the prompt counts without their split', (events: string[]) => events],
    [
      'message_start alone carrying the prompt counts',
      (events: string[]) => events.map((e) => (e.startsWith('event: message_delta') ? e.replace(/"usage":\{[^}]*\}/, '"usage":{"output_tokens":9}') : e)),
    ],
    [
      'message_delta repeating the split too',
      (events: string[]) =>
        events.map((e) =>
          e.startsWith('event: message_delta')
            ? e.replace('"output_tokens":9', '"cache_creation":{"ephemeral_5m_input_tokens":349,"ephemeral_1h_input_tokens":1524},"output_tokens":9')
            : e,
        ),
    ],
  ])('reports streamed 1-hour prompt cache writes apart: %s', async (_name, variant) => {
    const events = variant(sseEventsOf(fixtures.text('message-stream-cache-write-1h.sse')));
    upstream.respond(streamReply(events));
    const stream = await adapter.chatStream(ctx('claude-sonnet-4-5', { includeUsage: true }), hello);
    const chunks = parseFrames(await collectFrames(stream));
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
    expect(stream.usage()).toEqual(CACHE_WRITE_1H_USAGE);
  });

  it('sends no usage chunk unless asked, and still bills', async () => {
    upstream.respond(streamReply(sseEventsOf(fixtures.text('message-stream.sse'))));
    const stream = await adapter.chatStream(ctx('claude-sonnet-4-5'), hello);
    const chunks = parseFrames(await collectFrames(stream));
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(stream.usage()).toMatchObject({ prompt_tokens: 1049, completion_tokens: 6, estimated: false });
  });

  it('streams tool_use as delta.tool_calls with index, id, name and incremental arguments', async () => {
    upstream.respond(streamReply(sseEventsOf(fixtures.text('message-stream-tool-use.sse'))));
    const stream = await adapter.chatStream(ctx('claude-sonnet-4-5'), { ...hello, tools: [weatherTool] });
    const chunks = parseFrames(await collectFrames(stream));
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '' } });
    const args = (i: number) => calls.filter((c: any) => c.index === i).map((c: any) => c.function.arguments).join('');
    expect(args(0)).toBe('{"location": "Paris"}');
    // A tool called without arguments still yields a JSON object string.
    expect(calls.find((c: any) => c.index === 1 && c.id)).toMatchObject({ id: 'toolu_01Ldu4TxXzsYxQdrdNGy9fB3', function: { name: 'get_time' } });
    expect(args(1)).toBe('{}');
    expect(chunks.map((c) => c.choices[0]?.delta.content).filter(Boolean).join('')).toBe('Let me check.');
    expect(stream.finishReason()).toBe('tool_calls');
    expect(stream.usage()).toEqual({ prompt_tokens: 472, completion_tokens: 89, estimated: false });
  });

  it('delivers the first chunk before the upstream finishes', async () => {
    const events = sseEventsOf(fixtures.text('message-stream.sse'));
    const run = await firstFrameBeforeUpstreamEnds(upstream, events[0], events.slice(1), () => adapter.chatStream(ctx('claude-sonnet-4-5'), hello));
    expect(parseFrames([run.first])[0].choices[0].delta.role).toBe('assistant');
    expect(run.upstreamEndedBeforeFirst).toBe(false);
    expect(run.rest).toHaveLength(3);
    expect(run.upstreamFinished).toBe(true);
  });

  it('aborting mid-stream closes the upstream request; usage keeps the reported prompt and estimates the output', async () => {
    const events = sseEventsOf(fixtures.text('message-stream.sse'));
    const run = await abortAfterFrames(upstream, events.slice(0, 5).join(''), 3, (signal) => adapter.chatStream(ctx('claude-sonnet-4-5', { signal }), hello));
    expect(parseFrames(run.received).map((c) => c.choices[0].delta.content).join('')).toBe('Hello there!');
    expect(run.endedAfterAbort).toBe(true);
    expect(run.upstreamFinished).toBe(false);
  });

  it('usage after an abort: reported prompt, output counted from the streamed text', async () => {
    const events = sseEventsOf(fixtures.text('message-stream.sse'));
    let stream!: Awaited<ReturnType<ProviderAdapter['chatStream']>>;
    await abortAfterFrames(upstream, events.slice(0, 5).join(''), 3, async (signal) => (stream = await adapter.chatStream(ctx('claude-sonnet-4-5', { signal }), hello)));
    expect(stream.usage()).toEqual({ prompt_tokens: 1049, completion_tokens: countTokens('Hello there!'), cached_prompt_tokens: 1024, cache_write_prompt_tokens: 0, cache_write_1h_prompt_tokens: 0, estimated: true });
  });

  it('an error event mid-stream fails the iteration as retryable', async () => {
    const events = sseEventsOf(fixtures.text('message-stream.sse'));
    upstream.respond(streamReply([events[0], 'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n']));
    const stream = await adapter.chatStream(ctx('claude-sonnet-4-5'), hello);
    const err = (await collectFrames(stream).catch((e: unknown) => e)) as AgentgwError;
    expect(err).toBeInstanceOf(AgentgwError);
    expect(err.code).toBe('upstream_unavailable');
    expect(err.message).toContain('overloaded_error');
  });

  it('a stream cut before message_stop is an error, not a silent end', async () => {
    const events = sseEventsOf(fixtures.text('message-stream.sse'));
    upstream.respond(streamReply(events.slice(0, 4)));
    const stream = await adapter.chatStream(ctx('claude-sonnet-4-5'), hello);
    await expect(collectFrames(stream)).rejects.toMatchObject({ code: 'upstream_bad_response', message: 'Provider "anthropic" ended the stream before message_stop; the answer is incomplete.' });
  });

  it.each([
    [429, 'error-429.json', 'upstream_rate_limited', true, 'rate limit'],
    [500, 'error-500.json', 'upstream_unavailable', true, 'Internal server error'],
    [529, 'error-529.json', 'upstream_unavailable', true, 'Overloaded'],
    [400, 'error-400.json', 'validation_failed', false, 'max_tokens: 100000 > 64000'],
    [404, 'error-404.json', 'unknown_model', false, 'claude-sonnet-9'],
    [401, 'error-401.json', 'upstream_bad_response', false, "rejected the gateway's credentials"],
  ])('maps HTTP %i to %s', async (status, fixture, code, retryable, sentence) => {
    upstream.respond(jsonReply(status, fixtures.text(fixture)));
    const err = (await adapter.chat(ctx('claude-sonnet-4-5'), hello).catch((e: unknown) => e)) as AgentgwError;
    expect(err).toBeInstanceOf(AgentgwError);
    expect(err.code).toBe(code);
    expect(err.isRetryable).toBe(retryable);
    expect(err.message).toContain('"anthropic"');
    expect(err.message).toContain(String(status));
    expect(err.message).toContain(sentence);
    expect(err.message).not.toContain(API_KEY);
  });

  it('has no embeddings', async () => {
    expect(adapter.supportsEmbeddings).toBe(false);
    await expect(adapter.embeddings(ctx('claude-sonnet-4-5'), { model: 'anthropic/x', input: 'hi' })).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('rejects what Anthropic cannot do before calling it', async () => {
    await expect(adapter.chat(ctx('claude-sonnet-4-5'), { ...hello, n: 2 })).rejects.toMatchObject({ code: 'validation_failed', param: 'n' });
    await expect(
      adapter.chat(ctx('claude-sonnet-4-5'), {
        ...hello,
        messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{not json' } }] }],
      }),
    ).rejects.toMatchObject({ code: 'validation_failed', param: 'messages[0].tool_calls[0].function.arguments' });
    await expect(
      adapter.chat(ctx('claude-sonnet-4-5'), { ...hello, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA==', format: 'wav' } }] }] }),
    ).rejects.toMatchObject({ code: 'validation_failed', param: 'messages[0].content[0]' });
    expect(upstream.requests).toHaveLength(0);
  });
});

// Prompt caching, LiteLLM's convention: cache_control on a content part, a message or a tool marks a breakpoint.
describe('anthropic adapter: prompt-cache breakpoints', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('anthropic', { type: 'anthropic', base_url: `${url}/v1`, api_key: API_KEY }),
    (u, a) => ((upstream = u), (adapter = a)),
  );
  /** The request types know no cache_control: the gateway's schema passes it through as an extra key. */
  const cachedRequest = (body: object) => body as OpenAIChatRequest;
  const EPHEMERAL = { type: 'ephemeral' };
  const LONG_DOC = 'The contract, in full: '.padEnd(4000, 'clause ');

  it('puts a content part breakpoint on its block, and sends only type and ttl', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    await adapter.chat(
      ctx('claude-sonnet-4-5'),
      cachedRequest({
        model: 'anthropic/claude-sonnet-4-5',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: LONG_DOC, cache_control: { type: 'ephemeral', scope: 'global', extra: 1 } },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' }, cache_control: { type: 'ephemeral', ttl: '5m' } },
              { type: 'text', text: 'When does it renew?' },
            ],
          },
        ],
      }),
    );
    expect(upstream.last.json().messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: LONG_DOC, cache_control: EPHEMERAL },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' }, cache_control: { type: 'ephemeral', ttl: '5m' } },
          { type: 'text', text: 'When does it renew?' },
        ],
      },
    ]);
  });

  it('puts a message breakpoint on the last block of that message: string content, tool_use, tool_result', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    await adapter.chat(
      ctx('claude-sonnet-4-5'),
      cachedRequest({
        model: 'anthropic/claude-sonnet-4-5',
        messages: [
          { role: 'user', content: LONG_DOC, cache_control: EPHEMERAL },
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
            cache_control: EPHEMERAL,
          },
          { role: 'tool', tool_call_id: 'toolu_1', content: '18°C', cache_control: EPHEMERAL },
          { role: 'user', content: [{ type: 'text', text: 'And ' }, { type: 'text', text: 'tomorrow?' }], cache_control: EPHEMERAL },
        ],
      }),
    );
    expect(upstream.last.json().messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: LONG_DOC, cache_control: EPHEMERAL }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' }, cache_control: EPHEMERAL },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C', cache_control: EPHEMERAL },
          { type: 'text', text: 'And ' },
          { type: 'text', text: 'tomorrow?', cache_control: EPHEMERAL },
        ],
      },
    ]);
  });

  it('puts a tool message part breakpoint on the tool_result block, and splits marked assistant text parts', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    await adapter.chat(
      ctx('claude-sonnet-4-5'),
      cachedRequest({
        model: 'anthropic/claude-sonnet-4-5',
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: [{ type: 'text', text: LONG_DOC, cache_control: EPHEMERAL }, { type: 'text', text: 'Checking.' }],
            tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'toolu_1', content: [{ type: 'text', text: '18' }, { type: 'text', text: '°C', cache_control: EPHEMERAL }] },
        ],
      }),
    );
    expect(upstream.last.json().messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: LONG_DOC, cache_control: EPHEMERAL },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C', cache_control: EPHEMERAL }] },
    ]);
  });

  it('sends a system prompt with a breakpoint as text blocks', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    await adapter.chat(
      ctx('claude-sonnet-4-5'),
      cachedRequest({
        model: 'anthropic/claude-sonnet-4-5',
        messages: [
          { role: 'system', content: LONG_DOC, cache_control: EPHEMERAL },
          { role: 'developer', content: [{ type: 'text', text: 'Be terse. ' }, { type: 'text', text: 'Cite clauses.', cache_control: { type: 'ephemeral', ttl: '5m' } }] },
          { role: 'system', content: [{ type: 'text', text: 'Today is Monday.' }] },
          { role: 'user', content: 'When does it renew?' },
        ],
      }),
    );
    const sent = upstream.last.json();
    expect(sent.system).toEqual([
      { type: 'text', text: LONG_DOC, cache_control: EPHEMERAL },
      { type: 'text', text: 'Be terse. ' },
      { type: 'text', text: 'Cite clauses.', cache_control: { type: 'ephemeral', ttl: '5m' } },
      { type: 'text', text: 'Today is Monday.' },
    ]);
    expect(sent.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'When does it renew?' }] }]);
  });

  it('puts a tool breakpoint on that tool definition', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    await adapter.chat(
      ctx('claude-sonnet-4-5'),
      cachedRequest({ ...hello, tools: [{ type: 'function', function: { name: 'get_time' } }, { ...weatherTool, cache_control: EPHEMERAL }] }),
    );
    expect(upstream.last.json().tools).toEqual([
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
      { name: 'get_weather', description: 'Current weather of a city', input_schema: weatherTool.function.parameters, cache_control: EPHEMERAL },
    ]);
  });

  it('forwards a 1-hour ttl, streamed too', async () => {
    const oneHour = { type: 'ephemeral', ttl: '1h' };
    const body = cachedRequest({
      model: 'anthropic/claude-sonnet-4-5',
      messages: [
        { role: 'system', content: LONG_DOC, cache_control: oneHour },
        { role: 'user', content: 'When does it renew?' },
      ],
      tools: [{ ...weatherTool, cache_control: oneHour }],
    });
    upstream.respond(jsonReply(200, fixtures.json('message-cache-write-1h.json')));
    const result = await adapter.chat(ctx('claude-sonnet-4-5'), body);
    expect(upstream.last.json().system).toEqual([{ type: 'text', text: LONG_DOC, cache_control: oneHour }]);
    expect(upstream.last.json().tools[0].cache_control).toEqual(oneHour);
    expect(result.usage).toEqual(CACHE_WRITE_1H_USAGE);

    upstream.respond(streamReply([...fixtures.text('message-stream-cache-write-1h.sse')]));
    await collectFrames(await adapter.chatStream(ctx('claude-sonnet-4-5'), { ...body, stream: true }));
    expect(upstream.last.json()).toMatchObject({ stream: true, system: [{ type: 'text', text: LONG_DOC, cache_control: oneHour }], tools: [{ cache_control: oneHour }] });
  });

  it('sends a request whose cache_control values are all null as one without any', async () => {
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    await adapter.chat(ctx('claude-sonnet-4-5'), { ...hello, tools: [weatherTool] });
    const plain = upstream.last.body.toString('utf8');
    await adapter.chat(
      ctx('claude-sonnet-4-5'),
      cachedRequest({
        ...hello,
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'You are terse.', cache_control: null }], cache_control: null },
          { role: 'user', content: 'Say hello', cache_control: null },
        ],
        tools: [{ ...weatherTool, cache_control: null }],
      }),
    );
    expect(upstream.last.body.toString('utf8')).toBe(plain);
    expect(plain).not.toContain('cache_control');
  });

  it('answers 400 past 4 breakpoints, before calling Anthropic', async () => {
    const body = cachedRequest({
      model: 'anthropic/claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'Rules.', cache_control: EPHEMERAL },
        { role: 'user', content: [{ type: 'text', text: 'One', cache_control: EPHEMERAL }] },
        { role: 'assistant', content: 'Two', cache_control: EPHEMERAL },
        { role: 'user', content: 'Three', cache_control: EPHEMERAL },
      ],
      tools: [{ ...weatherTool, cache_control: EPHEMERAL }],
    });
    const err = await adapter.chat(ctx('claude-sonnet-4-5'), body).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentgwError);
    // Counted in Anthropic's order (tools, system, messages): the fifth is the last message's.
    expect(err).toMatchObject({ code: 'validation_failed', status: 400, param: 'messages[3].cache_control' });
    expect((err as Error).message).toContain('at most 4 cache_control breakpoints per request, and this request has 5');
    expect((err as Error).message).toContain('tools[0].cache_control, messages[0].cache_control, messages[1].content[0].cache_control');
    expect((err as Error).message).toContain('remove 1 of them');
    await expect(adapter.chatStream(ctx('claude-sonnet-4-5'), { ...body, stream: true })).rejects.toMatchObject({ code: 'validation_failed' });

    // A part's and its message's marker on one block are one breakpoint: four in all here.
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    await adapter.chat(
      ctx('claude-sonnet-4-5'),
      cachedRequest({
        ...body,
        messages: [...body.messages.slice(0, 3), { role: 'user', content: [{ type: 'text', text: 'Three', cache_control: EPHEMERAL }], cache_control: EPHEMERAL }],
        tools: [weatherTool],
      }),
    );
    expect(upstream.requests).toHaveLength(1);
    expect(JSON.stringify(upstream.last.json()).match(/cache_control/g)).toHaveLength(4);
  });

  it('answers 400 to an invalid cache_control, naming where it is', async () => {
    const cases: Array<[object, string, string]> = [
      [{ ...hello, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'persistent' } }] }] }, 'messages[0].content[0].cache_control', 'its type is "persistent"'],
      [{ ...hello, messages: [{ role: 'user', content: 'Hi', cache_control: { type: 'ephemeral', ttl: '24h' } }] }, 'messages[0].cache_control', 'its ttl is "24h"'],
      [{ ...hello, messages: [{ role: 'user', content: 'Hi', cache_control: { ttl: '1h' } }] }, 'messages[0].cache_control', 'its type is missing'],
      [{ ...hello, tools: [{ ...weatherTool, cache_control: 'ephemeral' }] }, 'tools[0].cache_control', 'must be {"type": "ephemeral"}, optionally with "ttl": "5m" or "1h"'],
      [{ ...hello, messages: [{ role: 'system', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral', ttl: 3600 } }] }] }, 'messages[0].content[0].cache_control', 'its ttl is a number'],
      // A breakpoint on nothing Anthropic receives.
      [{ ...hello, messages: [{ role: 'user', content: [{ type: 'text', text: '', cache_control: EPHEMERAL }] }] }, 'messages[0].content[0].cache_control', 'does not receive'],
      [{ ...hello, messages: [{ role: 'assistant', content: '', cache_control: EPHEMERAL }] }, 'messages[0].cache_control', 'does not receive'],
    ];
    for (const [body, param, sentence] of cases) {
      const err = await adapter.chat(ctx('claude-sonnet-4-5'), cachedRequest(body)).catch((e: unknown) => e);
      expect(err, param).toMatchObject({ code: 'validation_failed', status: 400, param });
      expect((err as Error).message).toContain(param);
      expect((err as Error).message).toContain(sentence);
    }
    expect(upstream.requests).toHaveLength(0);
  });
});

// The gateway's schema takes a null or absent content on any message (OpenAI allows one on an assistant message with
// tool_calls); OpenAI answers 400 to the others, and so does the adapter, before calling Anthropic, naming the field.
describe('anthropic adapter: messages without content', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('anthropic', { type: 'anthropic', base_url: `${url}/v1`, api_key: API_KEY }),
    (u, a) => ((upstream = u), (adapter = a)),
  );
  /** The request types require content where the gateway's schema does not. */
  const request = (messages: object[], stream = false) => ({ model: 'anthropic/claude-sonnet-4-5', messages, ...(stream ? { stream } : {}) }) as unknown as OpenAIChatRequest;
  const call = weatherCall;
  const refused = messagesWithoutContent('toolu_1');

  it.each(refused)('answers 400 to %s, plain and streamed, before calling Anthropic', async (_, messages, param, sentence) => {
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    await expectRefusedPlainAndStreamed(adapter, 'claude-sonnet-4-5', messages, param, sentence);
    expect(upstream.requests).toHaveLength(0);
  });

  it('translates an assistant message with tool_calls and a null or absent content, plain and streamed', async () => {
    const messages = [
      { role: 'user', content: 'Weather in Paris, then Lyon?' },
      { role: 'assistant', content: null, tool_calls: [call('toolu_1', 'Paris')] },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
      { role: 'assistant', tool_calls: [call('toolu_2', 'Lyon')] },
      { role: 'tool', tool_call_id: 'toolu_2', content: '21°C' },
    ];
    const sent = [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris, then Lyon?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { location: 'Lyon' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: '21°C' }] },
    ];
    upstream.respond(jsonReply(200, fixtures.json('message.json')));
    await adapter.chat(ctx('claude-sonnet-4-5'), request(messages));
    expect(upstream.last.json().messages).toEqual(sent);

    upstream.respond(streamReply(sseEventsOf(fixtures.text('message-stream.sse'))));
    await collectFrames(await adapter.chatStream(ctx('claude-sonnet-4-5'), request(messages, true)));
    expect(upstream.last.json()).toMatchObject({ stream: true, messages: sent });
    expect(upstream.requests).toHaveLength(2);
  });
});
