import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../../contract/errors.js';
import {
  adapterOnFakeUpstream,
  ctx,
  FakeUpstream,
  fixtureReader,
  jsonReply,
  parseFrames,
  sseEventsOf,
  streamReply,
} from '../__fixtures__/fake-upstream.js';
import { createProvider } from '../index.js';
import { countTokens, estimatePromptTokens } from '../shared/count-tokens.js';
import type { OpenAIChatRequest, ProviderAdapter } from '../spec.js';

const fixtures = fixtureReader(import.meta.url);
const hello: OpenAIChatRequest = { model: 'mistral/mistral-small-latest', messages: [{ role: 'user', content: 'Bonjour' }] };

async function collect(stream: AsyncIterable<string>): Promise<string[]> {
  const frames: string[] = [];
  for await (const frame of stream) frames.push(frame);
  return frames;
}

describe('openai-compatible adapter with a key (Mistral-style)', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('mistral', { type: 'openai-compatible', base_url: `${url}/v1`, api_key: 'mistral-key-0a9b8c7d6e', headers: { 'x-extra': 'yes' } }),
    (u, a) => ((upstream = u), (adapter = a)),
  );

  it('posts to base_url/chat/completions with the bearer key and configured headers', async () => {
    upstream.respond(jsonReply(200, fixtures.json('chat-completion.json')));
    const result = await adapter.chat(ctx('mistral-small-latest'), hello);
    expect(upstream.last.url).toBe('/v1/chat/completions');
    expect(upstream.last.headers.authorization).toBe('Bearer mistral-key-0a9b8c7d6e');
    expect(upstream.last.headers['x-extra']).toBe('yes');
    expect(upstream.last.json().model).toBe('mistral-small-latest');
    expect(result.body.choices[0].message.content).toBe('Bonjour ! Comment puis-je vous aider ?');
    expect(result.usage).toEqual({ prompt_tokens: 8, completion_tokens: 12, estimated: false });
  });

  it('takes usage from a final chunk that also carries choices, keeping multi-byte characters split across writes', async () => {
    const bytes = Buffer.from(fixtures.text('chat-stream.sse'));
    const emoji = bytes.indexOf(Buffer.from('👋'));
    upstream.respond(streamReply([bytes.subarray(0, emoji + 2), bytes.subarray(emoji + 2)]));
    const stream = await adapter.chatStream(ctx('mistral-small-latest'), hello);
    const chunks = parseFrames(await collect(stream));
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('Héllo 👋 there');
    // The client did not ask for usage: the chunk stays, its usage goes.
    expect(chunks[2].usage).toBeUndefined();
    expect(chunks[2].choices[0].finish_reason).toBe('stop');
    expect(stream.usage()).toEqual({ prompt_tokens: 8, completion_tokens: 6, estimated: false });
  });

  it.each([
    ['error-422.json', 'Extra inputs are not permitted'],
    ['error-422-fastapi.json', 'messages: Field required'],
  ])('repeats the validation detail of a 422 (%s)', async (fixture, sentence) => {
    upstream.respond(jsonReply(422, fixtures.text(fixture)));
    const err = (await adapter.chat(ctx('mistral-small-latest'), hello).catch((e: unknown) => e)) as AgentgwError;
    expect(err).toMatchObject({ code: 'validation_failed' });
    expect(err.message).toContain(sentence);
  });
});

describe('openai-compatible adapter without a key (Ollama-style)', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('ollama', { type: 'openai-compatible', base_url: `${url}/v1`, stream_usage: false }),
    (u, a) => ((upstream = u), (adapter = a)),
  );

  it('is configured without a key and sends no authorization', async () => {
    expect(adapter.configured).toBe(true);
    upstream.respond(streamReply(sseEventsOf(fixtures.text('chat-stream-no-usage.sse'))));
    const stream = await adapter.chatStream(ctx('llama3.2'), hello);
    await collect(stream);
    expect(upstream.last.headers.authorization).toBeUndefined();
    expect(upstream.last.json()).not.toHaveProperty('stream_options');
  });

  it('estimates usage the upstream did not report, and sends it when the client asked', async () => {
    upstream.respond(streamReply(sseEventsOf(fixtures.text('chat-stream-no-usage.sse'))));
    const stream = await adapter.chatStream(ctx('llama3.2', { includeUsage: true }), { ...hello, stream_options: { include_usage: true } });
    const chunks = parseFrames(await collect(stream));
    const expected = { prompt_tokens: estimatePromptTokens(hello), completion_tokens: countTokens('Hello world'), estimated: true };
    expect(stream.usage()).toEqual(expected);
    const last = chunks[chunks.length - 1];
    expect(last).toMatchObject({ id: 'chatcmpl-42', object: 'chat.completion.chunk', choices: [] });
    expect(last.usage).toEqual({ prompt_tokens: expected.prompt_tokens, completion_tokens: expected.completion_tokens, total_tokens: expected.prompt_tokens + expected.completion_tokens });
    expect(upstream.last.json().stream_options).toEqual({ include_usage: true });
  });

  it('estimates usage of a plain answer without usage', async () => {
    upstream.respond(jsonReply(200, { id: 'chatcmpl-7', object: 'chat.completion', created: 1, model: 'llama3.2', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }] }));
    const result = await adapter.chat(ctx('llama3.2'), hello);
    expect(result.usage).toEqual({ prompt_tokens: estimatePromptTokens(hello), completion_tokens: countTokens('Hi there'), estimated: true });
    expect(result.body.usage?.completion_tokens).toBe(countTokens('Hi there'));
  });

  it('requires a base_url', () => {
    expect(() => createProvider('vllm', { type: 'openai-compatible' })).toThrow(/base_url/);
  });
});
