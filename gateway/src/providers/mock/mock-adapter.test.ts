import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../../contract/errors.js';
import { collectFrames, ctx, parseFrames } from '../__fixtures__/fake-upstream.js';
import { createProvider } from '../index.js';
import { countTokens, estimatePromptTokens } from '../shared/count-tokens.js';
import type { OpenAIChatRequest } from '../spec.js';

const mock = createProvider('mock', { type: 'mock' });
const hello: OpenAIChatRequest = { model: 'mock/mock-1', messages: [{ role: 'user', content: 'What is the capital of France?' }] };
const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' }, days: { type: 'integer', minimum: 1 }, units: { enum: ['c', 'f'] } }, required: ['location'] } },
};

describe('mock adapter', () => {
  it('is offline and always configured', () => {
    expect(mock).toMatchObject({ name: 'mock', type: 'mock', baseUrl: null, configured: true, models: ['mock-1', 'mock-embed-1'] });
  });

  it('echoes the prompt deterministically with real token counts', async () => {
    const a = await mock.chat(ctx('mock-1'), hello);
    const b = await mock.chat(ctx('mock-1'), hello);
    const text = a.body.choices[0].message.content!;
    expect(text).toContain('What is the capital of France?');
    expect(b.body.choices[0].message.content).toBe(text);
    expect(a.body.choices[0].finish_reason).toBe('stop');
    expect(a.usage).toEqual({ prompt_tokens: estimatePromptTokens(hello), completion_tokens: countTokens(text), estimated: false });
    expect(a.body.usage).toEqual({ prompt_tokens: a.usage.prompt_tokens, completion_tokens: a.usage.completion_tokens, total_tokens: a.usage.prompt_tokens + a.usage.completion_tokens });
  });

  it('stops at max_tokens with finish_reason length', async () => {
    const result = await mock.chat(ctx('mock-1'), { ...hello, max_tokens: 3 });
    expect(result.body.choices[0].finish_reason).toBe('length');
    expect(result.usage.completion_tokens).toBe(3);
  });

  it('streams the same reply in several chunks, with the usage chunk when asked', async () => {
    const plain = await mock.chat(ctx('mock-1'), hello);
    const stream = await mock.chatStream(ctx('mock-1', { includeUsage: true }), hello);
    const chunks = parseFrames(await collectFrames(stream));
    const textChunks = chunks.filter((c) => c.choices[0]?.delta.content);
    expect(textChunks.length).toBeGreaterThan(2);
    expect(textChunks.map((c) => c.choices[0].delta.content).join('')).toBe(plain.body.choices[0].message.content);
    expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe('stop');
    expect(chunks[chunks.length - 1].usage).toEqual(plain.body.usage);
    expect(stream.usage()).toEqual(plain.usage);
  });

  it('calls a tool when tools are given, with arguments that fit its schema', async () => {
    const body = { ...hello, tools: [weatherTool] };
    const result = await mock.chat(ctx('mock-1'), body);
    const call = result.body.choices[0].message.tool_calls![0];
    expect(result.body.choices[0].finish_reason).toBe('tool_calls');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ location: 'What is the capital of France?', days: 1, units: 'c' });

    const stream = await mock.chatStream(ctx('mock-1'), body);
    const deltas = parseFrames(await collectFrames(stream)).flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toMatchObject({ index: 0, id: call.id, function: { name: 'get_weather' } });
    expect(deltas.map((d: any) => d.function.arguments).join('')).toBe(call.function.arguments);
    expect(stream.finishReason()).toBe('tool_calls');
  });

  it('answers a tool result with text, and calls no tool when tool_choice is none', async () => {
    const afterTool = await mock.chat(ctx('mock-1'), {
      ...hello,
      tools: [weatherTool],
      messages: [
        ...hello.messages,
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'Sunny' },
      ],
    });
    expect(afterTool.body.choices[0].message.content).toContain('Sunny');
    const none = await mock.chat(ctx('mock-1'), { ...hello, tools: [weatherTool], tool_choice: 'none' });
    expect(none.body.choices[0].message.tool_calls).toBeUndefined();
  });

  it('answers JSON when json_schema is asked for', async () => {
    const result = await mock.chat(ctx('mock-1'), {
      ...hello,
      response_format: { type: 'json_schema', json_schema: { name: 'city', schema: { type: 'object', properties: { city: { type: 'string' } } } } },
    });
    expect(JSON.parse(result.body.choices[0].message.content!)).toEqual({ city: 'What is the capital of France?' });
  });

  it('embeds deterministically: unit vectors, equal for equal texts, base64 on request', async () => {
    const result = await mock.embeddings(ctx('mock-embed-1'), { model: 'mock/mock-embed-1', input: ['a', 'b', 'a'], dimensions: 8 });
    const [a, b, again] = result.body.data.map((d) => d.embedding as number[]);
    expect(a).toHaveLength(8);
    expect(Math.hypot(...a)).toBeCloseTo(1, 10);
    expect(again).toEqual(a);
    expect(b).not.toEqual(a);
    expect(result.usage).toEqual({ prompt_tokens: 3, completion_tokens: 0, estimated: false });

    const encoded = await mock.embeddings(ctx('mock-embed-1'), { model: 'mock/mock-embed-1', input: 'a', dimensions: 8, encoding_format: 'base64' });
    const floats = new Float32Array(Uint8Array.from(Buffer.from(encoded.body.data[0].embedding as string, 'base64')).buffer);
    expect(Array.from(floats)).toEqual(a.map(Math.fround));
  });

  it('simulates upstream failures for error-<status> models, to exercise fallbacks', async () => {
    const err = (await mock.chat(ctx('error-429'), hello).catch((e: unknown) => e)) as AgentgwError;
    expect(err).toBeInstanceOf(AgentgwError);
    expect(err).toMatchObject({ code: 'upstream_rate_limited' });
    expect(err.isRetryable).toBe(true);
    await expect(mock.chatStream(ctx('error-500'), hello)).rejects.toMatchObject({ code: 'upstream_unavailable' });
    await expect(mock.chat(ctx('error-400'), hello)).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('aborting mid-stream ends it quietly, usage counts what was streamed', async () => {
    const controller = new AbortController();
    const stream = await mock.chatStream(ctx('mock-1', { signal: controller.signal }), hello);
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    const second = await iterator.next();
    controller.abort();
    expect((await iterator.next()).done).toBe(true);
    const streamed = parseFrames([second.value as string])[0].choices[0].delta.content;
    expect(stream.usage()).toEqual({ prompt_tokens: estimatePromptTokens(hello), completion_tokens: countTokens(streamed), estimated: true });
  });

  it('a ChatStream can be iterated once', async () => {
    const stream = await mock.chatStream(ctx('mock-1'), hello);
    await collectFrames(stream);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(/once/);
  });
});
