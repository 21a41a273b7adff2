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
import type { OpenAIChatRequest, ProviderAdapter } from '../spec.js';

const fixtures = fixtureReader(import.meta.url);
const API_KEY = 'azure-test-key-5f1c2b7e9d';

const hello: OpenAIChatRequest = { model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'Say hello' }] };

describe('azure-openai adapter', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) =>
      createProvider('azure', {
        type: 'azure-openai',
        base_url: url,
        api_key: API_KEY,
        api_version: '2024-10-21',
        deployments: { 'gpt-4o': 'prod-gpt4o', 'text-embedding-3-small': 'embed-small' },
      }),
    (u, a) => ((upstream = u), (adapter = a)),
  );

  it('advertises its deployed models', () => {
    expect(adapter.models).toEqual(['gpt-4o', 'text-embedding-3-small']);
  });

  it('calls the deployment of the model with the api-key header and api-version', async () => {
    upstream.respond(jsonReply(200, fixtures.json('chat-completion.json')));
    const result = await adapter.chat(ctx('gpt-4o'), hello);
    const req = upstream.last;
    expect(req.url).toBe('/openai/deployments/prod-gpt4o/chat/completions?api-version=2024-10-21');
    expect(req.headers['api-key']).toBe(API_KEY);
    expect(req.headers.authorization).toBeUndefined();
    expect(req.json()).toEqual({ ...hello, model: 'gpt-4o' });
    expect(result.body.choices[0].message.content).toBe('Hello! How can I help you today?');
    expect(result.usage).toEqual({ prompt_tokens: 20, completion_tokens: 10, cached_prompt_tokens: 0, reasoning_tokens: 0, estimated: false });
  });

  it('uses the model name as deployment when none is mapped', async () => {
    upstream.respond(jsonReply(200, fixtures.json('chat-completion.json')));
    await adapter.chat(ctx('gpt-4.1-mini'), hello);
    expect(upstream.last.url).toBe('/openai/deployments/gpt-4.1-mini/chat/completions?api-version=2024-10-21');
  });

  it('streams, passing the prompt filter chunk through and taking usage from the last chunk', async () => {
    const sse = fixtures.text('chat-stream.sse');
    upstream.respond(streamReply(sseEventsOf(sse)));
    const stream = await adapter.chatStream(ctx('gpt-4o', { includeUsage: true }), hello);
    const frames: string[] = [];
    for await (const frame of stream) frames.push(frame);
    expect(upstream.last.json().stream_options).toEqual({ include_usage: true });
    const chunks = parseFrames(frames);
    expect(chunks).toHaveLength(5);
    expect(chunks[0].prompt_filter_results).toBeDefined();
    expect(chunks[4].usage.total_tokens).toBe(22);
    expect(stream.usage()).toEqual({ prompt_tokens: 20, completion_tokens: 2, cached_prompt_tokens: 0, reasoning_tokens: 0, estimated: false });
    expect(stream.finishReason()).toBe('stop');
  });

  it('embeds through the embeddings deployment', async () => {
    upstream.respond(jsonReply(200, fixtures.json('embeddings.json')));
    const result = await adapter.embeddings(ctx('text-embedding-3-small'), { model: 'azure/text-embedding-3-small', input: 'hi' });
    expect(upstream.last.url).toBe('/openai/deployments/embed-small/embeddings?api-version=2024-10-21');
    expect(result.body.data[0].embedding).toHaveLength(4);
    expect(result.usage).toEqual({ prompt_tokens: 2, completion_tokens: 0, estimated: false });
  });

  it.each([
    [429, 'error-429.json', 'upstream_rate_limited', true],
    [500, 'error-500.json', 'upstream_unavailable', true],
    [400, 'error-400.json', 'validation_failed', false],
    [404, 'error-404.json', 'unknown_model', false],
    [401, 'error-401.json', 'upstream_bad_response', false],
  ])('maps HTTP %i to %s', async (status, fixture, code, retryable) => {
    upstream.respond(jsonReply(status, fixtures.text(fixture)));
    const err = (await adapter.chat(ctx('gpt-4o'), hello).catch((e: unknown) => e)) as AgentgwError;
    expect(err).toBeInstanceOf(AgentgwError);
    expect(err.code).toBe(code);
    expect(err.isRetryable).toBe(retryable);
    expect(err.message).toContain('"azure"');
    expect(err.message).toContain(String(status));
    expect(err.message).not.toContain(API_KEY);
  });

  it('rejects a configuration without base_url', () => {
    expect(() => createProvider('azure', { type: 'azure-openai', api_key: API_KEY })).toThrow(/base_url/);
  });
});
