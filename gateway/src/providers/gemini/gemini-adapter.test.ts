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
import { countTokens, estimateEmbeddingTokens, estimatePromptTokens } from '../shared/count-tokens.js';
import type { ChatStream, OpenAIChatRequest, ProviderAdapter } from '../spec.js';
import { expectRefusedPlainAndStreamed, messagesWithoutContent, weatherCall } from '../__fixtures__/messages-without-content.js';

const fixtures = fixtureReader(import.meta.url);
const API_KEY = 'AIzaSyTest0123456789abcdefghijklmnopq';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false },
  },
};

const hello: OpenAIChatRequest = {
  model: 'gemini/gemini-2.5-flash',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello' },
  ],
};

describe('gemini adapter', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('gemini', { type: 'gemini', base_url: `${url}/v1beta`, api_key: API_KEY }),
    (u, a) => ((upstream = u), (adapter = a)),
  );

  it('translates a plain request to generateContent and the answer back', async () => {
    upstream.respond(jsonReply(200, fixtures.json('generate-content.json')));
    const result = await adapter.chat(ctx('gemini-2.5-flash'), { ...hello, temperature: 0.3, top_p: 0.9, max_tokens: 200, stop: ['END'], seed: 7 });

    const req = upstream.last;
    expect(req.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(req.headers['x-goog-api-key']).toBe(API_KEY);
    expect(req.headers.authorization).toBeUndefined();
    expect(req.json()).toEqual({
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }],
      generationConfig: { temperature: 0.3, topP: 0.9, maxOutputTokens: 200, stopSequences: ['END'], seed: 7 },
    });

    expect(result.body).toMatchObject({
      id: 'chatcmpl-Xb1maOqHJ4qUz7IPiJ2YiAc',
      object: 'chat.completion',
      model: 'gemini-2.5-flash',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1030, completion_tokens: 32, total_tokens: 1062, prompt_tokens_details: { cached_tokens: 1024 }, completion_tokens_details: { reasoning_tokens: 23 } },
    });
    // Thinking tokens are billed as output.
    expect(result.usage).toEqual({ prompt_tokens: 1030, completion_tokens: 32, cached_prompt_tokens: 1024, estimated: false });
  });

  it('translates tools, tool calls, tool results, images and json_schema', async () => {
    upstream.respond(jsonReply(200, fixtures.json('generate-content.json')));
    const schema = { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] };
    await adapter.chat(ctx('gemini-2.5-flash'), {
      model: 'gemini/gemini-2.5-flash',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here?' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          ],
        },
        { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":18}' },
        { role: 'user', content: 'Summarise.' },
      ],
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      response_format: { type: 'json_schema', json_schema: { name: 'summary', schema } },
    });
    expect(upstream.last.json()).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Weather here?' }, { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } }] },
        {
          role: 'model',
          parts: [{ text: 'Checking.' }, { functionCall: { name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: 'skip_thought_signature_validator' }],
        },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 18 } } }, { text: 'Summarise.' }] },
      ],
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema },
      tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Current weather of a city', parametersJsonSchema: weatherTool.function.parameters }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    });
  });

  it('a tool result whose call is unknown is the client’s mistake', async () => {
    await expect(
      adapter.chat(ctx('gemini-2.5-flash'), { ...hello, messages: [{ role: 'tool', tool_call_id: 'call_x', content: 'ok' }] }),
    ).rejects.toMatchObject({ code: 'validation_failed', param: 'messages[0].tool_call_id' });
  });

  it('returns function calls as tool_calls with ids', async () => {
    upstream.respond(jsonReply(200, fixtures.json('generate-content-function-call.json')));
    const result = await adapter.chat(ctx('gemini-2.5-flash'), { ...hello, tools: [weatherTool] });
    expect(result.body.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        content: null,
        tool_calls: [
          { id: 'call_req_test_1_0_0', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
          { id: 'call_req_test_1_0_1', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
    });
    expect(result.usage).toEqual({ prompt_tokens: 61, completion_tokens: 22, estimated: false });
  });

  it('streams with alt=sse and turns each event into chunks', async () => {
    upstream.respond(streamReply(sseEventsOf(fixtures.text('stream-generate-content.sse'))));
    const stream = await adapter.chatStream(ctx('gemini-2.5-flash', { includeUsage: true }), hello);
    const chunks = parseFrames(await collectFrames(stream));
    expect(upstream.last.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason ?? null])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Hello' }, null],
      [{ content: ' there, how can' }, null],
      [{ content: ' I help?' }, null],
      [{}, 'stop'],
      [undefined, null],
    ]);
    expect(chunks[0]).toMatchObject({ id: 'chatcmpl-7L1maNi9L5O3z7IPl8KTqAg', model: 'gemini-2.5-flash', object: 'chat.completion.chunk' });
    expect(chunks[5].usage).toEqual({ prompt_tokens: 5, completion_tokens: 35, total_tokens: 40 });
    expect(stream.usage()).toEqual({ prompt_tokens: 5, completion_tokens: 35, reasoning_tokens: 27, estimated: false });
  });

  it('streams function calls as whole tool_calls deltas', async () => {
    upstream.respond(streamReply(sseEventsOf(fixtures.text('stream-function-call.sse'))));
    const stream = await adapter.chatStream(ctx('gemini-2.5-flash'), { ...hello, tools: [weatherTool] });
    const chunks = parseFrames(await collectFrames(stream));
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    // The call's thoughtSignature rides along as Google's OpenAI-compatible API carries it.
    expect(calls).toEqual([
      {
        index: 0,
        id: 'call_req_test_1_0_0',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
        extra_content: { google: { thought_signature: 'CiQB0e2Kb5sF7wq4pZ0Yt0dD3nO2h0bB0r7lR3nYx1g7hM0a5wQ' } },
      },
    ]);
    expect(stream.finishReason()).toBe('tool_calls');
  });

  it('delivers the first chunk before the upstream finishes', async () => {
    const events = sseEventsOf(fixtures.text('stream-generate-content.sse'));
    const run = await firstFrameBeforeUpstreamEnds(upstream, events[0], events.slice(1), () => adapter.chatStream(ctx('gemini-2.5-flash'), hello));
    expect(parseFrames([run.first])[0].choices[0].delta.role).toBe('assistant');
    expect(run.upstreamEndedBeforeFirst).toBe(false);
    expect(run.upstreamFinished).toBe(true);
  });

  it('aborting mid-stream closes the upstream request; usage has the prompt and the streamed text', async () => {
    const events = sseEventsOf(fixtures.text('stream-generate-content.sse'));
    let stream!: ChatStream;
    const run = await abortAfterFrames(upstream, events[0] + events[1], 3, async (signal) => (stream = await adapter.chatStream(ctx('gemini-2.5-flash', { signal }), hello)));
    expect(run.endedAfterAbort).toBe(true);
    expect(run.upstreamFinished).toBe(false);
    expect(stream.usage()).toEqual({ prompt_tokens: 5, completion_tokens: countTokens('Hello there, how can'), estimated: true });
  });

  it('a stream that ends without a finishReason is an incomplete answer: upstream_bad_response', async () => {
    const events = sseEventsOf(fixtures.text('stream-generate-content.sse'));
    upstream.respond(streamReply(events.slice(0, 2)));
    const stream = await adapter.chatStream(ctx('gemini-2.5-flash'), hello);
    await expect(collectFrames(stream)).rejects.toMatchObject({ code: 'upstream_bad_response', message: 'Provider "gemini" ended the stream before a finishReason; the answer is incomplete.' });
  });

  it('embeds one text with embedContent', async () => {
    upstream.respond(jsonReply(200, fixtures.json('embed-content.json')));
    const result = await adapter.embeddings(ctx('gemini-embedding-001'), { model: 'gemini/gemini-embedding-001', input: 'hello', dimensions: 4 });
    expect(upstream.last.url).toBe('/v1beta/models/gemini-embedding-001:embedContent');
    expect(upstream.last.json()).toEqual({ content: { parts: [{ text: 'hello' }] }, outputDimensionality: 4 });
    expect(result.body).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.0131, -0.0087, -0.0512, 0.0295] }],
      model: 'gemini-embedding-001',
      usage: { prompt_tokens: estimateEmbeddingTokens('hello'), total_tokens: estimateEmbeddingTokens('hello') },
    });
    expect(result.usage.estimated).toBe(true);
  });

  it('embeds several texts with batchEmbedContents, base64 when asked', async () => {
    upstream.respond(jsonReply(200, fixtures.json('batch-embed-contents.json')));
    const result = await adapter.embeddings(ctx('gemini-embedding-001'), { model: 'gemini/gemini-embedding-001', input: ['a', 'b'], encoding_format: 'base64' });
    expect(upstream.last.url).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(upstream.last.json()).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] } },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] } },
      ],
    });
    const second = result.body.data[1].embedding as string;
    const floats = new Float32Array(Uint8Array.from(Buffer.from(second, 'base64')).buffer);
    expect(Array.from(floats)).toEqual([-0.0203, 0.0441, 0.0078, -0.0119].map(Math.fround));
  });

  it('estimates usage when the answer has none', async () => {
    const { usageMetadata: _u, ...bare } = fixtures.json('generate-content.json');
    upstream.respond(jsonReply(200, bare));
    const result = await adapter.chat(ctx('gemini-2.5-flash'), hello);
    expect(result.usage).toEqual({ prompt_tokens: estimatePromptTokens(hello), completion_tokens: countTokens('Hello! How can I help you today?'), estimated: true });
  });

  it.each([
    [429, 'error-429.json', 'upstream_rate_limited', true, 'exceeded your current quota'],
    [500, 'error-500.json', 'upstream_unavailable', true, 'internal error'],
    [503, 'error-503.json', 'upstream_unavailable', true, 'overloaded'],
    [400, 'error-400.json', 'validation_failed', false, 'valid role'],
    [404, 'error-404.json', 'unknown_model', false, 'gemini-9-pro'],
    [403, 'error-403.json', 'upstream_bad_response', false, "rejected the gateway's credentials"],
    [400, 'error-400-api-key.json', 'upstream_bad_response', false, "rejected the gateway's credentials"],
  ])('maps HTTP %i (%s) to %s', async (status, fixture, code, retryable, sentence) => {
    upstream.respond(jsonReply(status, fixtures.text(fixture)));
    const err = (await adapter.chat(ctx('gemini-2.5-flash'), hello).catch((e: unknown) => e)) as AgentgwError;
    expect(err).toBeInstanceOf(AgentgwError);
    expect(err.code).toBe(code);
    expect(err.isRetryable).toBe(retryable);
    expect(err.message).toContain('"gemini"');
    expect(err.message).toContain(String(status));
    expect(err.message).toContain(sentence);
    expect(err.message).not.toContain(API_KEY);
  });
});

// The gateway's schema takes a null or absent content on any message (OpenAI allows one on an assistant message with
// tool_calls); OpenAI answers 400 to the others, and so does the adapter, before calling Gemini, naming the field.
describe('gemini adapter: messages without content', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('gemini', { type: 'gemini', base_url: `${url}/v1beta`, api_key: API_KEY }),
    (u, a) => ((upstream = u), (adapter = a)),
  );
  /** The request types require content where the gateway's schema does not. */
  const request = (messages: object[], stream = false) => ({ model: 'gemini/gemini-2.5-flash', messages, ...(stream ? { stream } : {}) }) as unknown as OpenAIChatRequest;
  const call = weatherCall;
  const refused = messagesWithoutContent('call_1');

  it.each(refused)('answers 400 to %s, plain and streamed, before calling Gemini', async (_, messages, param, sentence) => {
    upstream.respond(jsonReply(200, fixtures.json('generate-content.json')));
    await expectRefusedPlainAndStreamed(adapter, 'gemini-2.5-flash', messages, param, sentence);
    expect(upstream.requests).toHaveLength(0);
  });

  it('translates an assistant message with tool_calls and a null or absent content, plain and streamed', async () => {
    const messages = [
      { role: 'user', content: 'Weather in Paris, then Lyon?' },
      { role: 'assistant', content: null, tool_calls: [call('call_1', 'Paris')] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":18}' },
      { role: 'assistant', tool_calls: [call('call_2', 'Lyon')] },
      { role: 'tool', tool_call_id: 'call_2', content: '{"temperature":21}' },
    ];
    const functionCall = (location: string) => ({ functionCall: { name: 'get_weather', args: { location } }, thoughtSignature: 'skip_thought_signature_validator' });
    const contents = [
      { role: 'user', parts: [{ text: 'Weather in Paris, then Lyon?' }] },
      { role: 'model', parts: [functionCall('Paris')] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 18 } } }] },
      { role: 'model', parts: [functionCall('Lyon')] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 21 } } }] },
    ];
    upstream.respond(jsonReply(200, fixtures.json('generate-content.json')));
    await adapter.chat(ctx('gemini-2.5-flash'), request(messages));
    expect(upstream.last.json()).toEqual({ contents });

    upstream.respond(streamReply(sseEventsOf(fixtures.text('stream-generate-content.sse'))));
    await collectFrames(await adapter.chatStream(ctx('gemini-2.5-flash'), request(messages, true)));
    expect(upstream.last.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(upstream.last.json()).toEqual({ contents });
    expect(upstream.requests).toHaveLength(2);
  });
});
