import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { adapterOnFakeUpstream, collectFrames, FakeUpstream, jsonReply, streamReply } from '../__fixtures__/fake-upstream.js';
import { createProvider } from '../index.js';
import type { MessagesCallContext, ProviderAdapter } from '../spec.js';
import { encodeMessage } from './__fixtures__/encode-event-stream.js';

// Claude on Bedrock through InvokeModel: the Anthropic fixtures recorded for /v1/messages, in Bedrock's envelope.
const anthropicFixture = (name: string) => readFileSync(new URL(`../../data-plane/dialects/messages/__fixtures__/${name}`, import.meta.url), 'utf8');
const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const EVENTSTREAM = 'application/vnd.amazon.eventstream';

function call(extra: Partial<MessagesCallContext> = {}): MessagesCallContext {
  return {
    model: MODEL,
    signal: new AbortController().signal,
    requestId: 'req_test',
    clientHeaders: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14, context-management-2025-06-27' },
    query: '',
    estimatePromptTokens: () => 5,
    ...extra,
  };
}

/** The SSE events of a recorded Anthropic stream, each as Bedrock wraps it: a chunk whose bytes are the event's JSON. */
function bedrockChunks(sse: string): { chunks: Buffer[]; events: string[] } {
  const events = sse.split('\n\n').filter((e) => e.trim() !== '');
  const chunks = events.map((e) => {
    const data = e.split('\n').find((l) => l.startsWith('data: '))!.slice(6);
    const payload = Buffer.from(JSON.stringify({ bytes: Buffer.from(data).toString('base64') }));
    return encodeMessage({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, payload);
  });
  return { chunks, events };
}

describe('bedrock: Claude models speak the Messages API natively', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('bedrock', { type: 'bedrock', base_url: url, api_key: 'bedrock-api-key-0123456789' }),
    (u, a) => {
      upstream = u;
      adapter = a;
    },
  );

  it('serves Claude model ids only', () => {
    expect(adapter.messages?.serves(MODEL)).toBe(true);
    expect(adapter.messages?.serves('anthropic.claude-3-5-haiku-20241022-v1:0')).toBe(true);
    expect(adapter.messages?.serves('amazon.nova-pro-v1:0')).toBe(false);
    expect(adapter.messages?.serves('meta.llama3-70b-instruct-v1:0')).toBe(false);
  });

  it('sends the request in InvokeModel envelope and passes the message back as sent, usage billed with cache reads and writes', async () => {
    const message = anthropicFixture('anthropic-message-thinking-tool-use.json');
    upstream.respond(jsonReply(200, JSON.parse(message)));
    const body = { model: 'claude-sonnet-4-5', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'weather in Paris?' }], stream: false, cache_probe: { kept: true } };
    const result = await adapter.messages!.create(call(), body);
    expect(JSON.parse(result.text)).toEqual(JSON.parse(message));
    const sent = upstream.last;
    expect(sent.url).toBe(`/model/${encodeURIComponent(MODEL)}/invoke`);
    expect(sent.headers.authorization).toBe('Bearer bedrock-api-key-0123456789');
    const { model, stream, ...rest } = body;
    expect(sent.json()).toEqual({ anthropic_version: 'bedrock-2023-05-31', ...rest, anthropic_beta: ['interleaved-thinking-2025-05-14', 'context-management-2025-06-27'] });
    const usage = JSON.parse(message).usage;
    expect(result.usage).toMatchObject({
      prompt_tokens: usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
      completion_tokens: usage.output_tokens,
      cached_prompt_tokens: usage.cache_read_input_tokens,
      cache_write_prompt_tokens: usage.cache_creation_input_tokens,
      estimated: false,
    });
  });

  it('streams Claude events unwrapped from the event stream, in order and unchanged, billed from message_delta', async () => {
    const { chunks, events } = bedrockChunks(anthropicFixture('anthropic-stream-thinking-tool-use.sse'));
    upstream.respond(streamReply(chunks, EVENTSTREAM));
    const stream = await adapter.messages!.stream(call(), { model: 'x', max_tokens: 2048, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const frames = await collectFrames(stream);
    expect(upstream.last.url).toBe(`/model/${encodeURIComponent(MODEL)}/invoke-with-response-stream`);
    expect(upstream.last.json().stream).toBeUndefined();
    // Each frame names its event and carries the event's JSON exactly as Claude wrote it.
    expect(frames.join('').split('\n\n').filter(Boolean)).toEqual(events.map((e) => e.trim()));
    const last = events.filter((e) => e.startsWith('event: message_delta')).at(-1)!;
    const delta = JSON.parse(last.split('\ndata: ')[1]!) as { usage: { output_tokens: number } };
    expect(stream.usage()).toMatchObject({ completion_tokens: delta.usage.output_tokens, estimated: false });
  });

  it('a stream that ends before message_stop fails as an incomplete answer', async () => {
    const { chunks } = bedrockChunks(anthropicFixture('anthropic-stream-thinking-tool-use.sse'));
    upstream.respond(streamReply(chunks.slice(0, 4), EVENTSTREAM));
    const stream = await adapter.messages!.stream(call(), { model: 'x', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    await expect(collectFrames(stream)).rejects.toMatchObject({ code: 'upstream_bad_response' });
  });
});
