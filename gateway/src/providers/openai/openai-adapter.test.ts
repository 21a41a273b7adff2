import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../../contract/errors.js';
import {
  adapterOnFakeUpstream,
  ctx,
  FakeUpstream,
  fixtureReader,
  gatedStreamReply,
  jsonReply,
  parseFrames,
  sseEventsOf,
  streamReply,
} from '../__fixtures__/fake-upstream.js';
import { createProvider } from '../index.js';
import { countTokens, estimatePromptTokens } from '../shared/count-tokens.js';
import type { OpenAIChatRequest, ProviderAdapter } from '../spec.js';

const fixtures = fixtureReader(import.meta.url);
const API_KEY = 'sk-test-0123456789abcdef2345';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

const hello: OpenAIChatRequest = {
  model: 'openai/gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello' },
  ],
  temperature: 0.2,
};

async function collect(stream: AsyncIterable<string>): Promise<string[]> {
  const frames: string[] = [];
  for await (const frame of stream) frames.push(frame);
  return frames;
}

/** The data payloads of an SSE fixture, without [DONE]. */
function dataOf(sse: string): string[] {
  return sseEventsOf(sse)
    .map((e) => e.replace(/^data: /, '').trim())
    .filter((d) => d !== '[DONE]');
}

describe('openai adapter', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    (url) => createProvider('openai', { type: 'openai', base_url: `${url}/v1`, api_key: API_KEY, models: ['gpt-4o-mini'] }),
    (u, a) => ((upstream = u), (adapter = a)),
  );

  it('describes itself without its key', () => {
    expect(adapter).toMatchObject({ name: 'openai', type: 'openai', baseUrl: `${upstream.url}/v1`, models: ['gpt-4o-mini'], configured: true });
    expect(JSON.stringify(adapter.baseUrl)).not.toContain(API_KEY);
  });

  it('passes a chat request through and returns the completion with its usage', async () => {
    upstream.respond(jsonReply(200, fixtures.json('chat-completion.json')));
    const result = await adapter.chat(ctx('gpt-4o-mini'), hello);

    const req = upstream.last;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.json()).toEqual({ ...hello, model: 'gpt-4o-mini' });

    expect(result.body).toEqual(fixtures.json('chat-completion.json'));
    expect(result.usage).toEqual({ prompt_tokens: 19, completion_tokens: 10, cached_prompt_tokens: 0, reasoning_tokens: 0, estimated: false });
  });

  it('never forwards stream fields on a plain call', async () => {
    upstream.respond(jsonReply(200, fixtures.json('chat-completion.json')));
    await adapter.chat(ctx('gpt-4o-mini'), { ...hello, stream: true, stream_options: { include_usage: true } });
    expect(upstream.last.json()).not.toHaveProperty('stream');
    expect(upstream.last.json()).not.toHaveProperty('stream_options');
  });

  it('returns tool calls as the upstream sent them', async () => {
    upstream.respond(jsonReply(200, fixtures.json('chat-completion-tool-call.json')));
    const body: OpenAIChatRequest = { ...hello, tools: [weatherTool], tool_choice: 'auto' };
    const result = await adapter.chat(ctx('gpt-4o-mini'), body);
    expect(upstream.last.json().tools).toEqual([weatherTool]);
    expect(result.body.choices[0].finish_reason).toBe('tool_calls');
    expect(result.body.choices[0].message.tool_calls).toEqual([
      { id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
    ]);
  });

  it('streams the upstream chunks unchanged, usage chunk included when the client asked for it', async () => {
    const sse = fixtures.text('chat-stream.sse');
    upstream.respond(streamReply(sseEventsOf(sse)));
    const stream = await adapter.chatStream(ctx('gpt-4o-mini', { includeUsage: true }), { ...hello, stream: true });
    const frames = await collect(stream);

    expect(upstream.last.json()).toMatchObject({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true } });
    expect(frames).toEqual(dataOf(sse).map((d) => `data: ${d}\n\n`));
    expect(stream.usage()).toEqual({ prompt_tokens: 19, completion_tokens: 3, cached_prompt_tokens: 0, reasoning_tokens: 0, estimated: false });
    expect(stream.finishReason()).toBe('stop');
  });

  it('asks for usage but drops the usage chunk when the client did not ask for it', async () => {
    const sse = fixtures.text('chat-stream.sse');
    upstream.respond(streamReply(sseEventsOf(sse)));
    const stream = await adapter.chatStream(ctx('gpt-4o-mini'), { ...hello, stream: true });
    const chunks = parseFrames(await collect(stream));

    expect(upstream.last.json().stream_options).toEqual({ include_usage: true });
    expect(chunks).toHaveLength(5);
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('Hello there!');
    expect(stream.usage()).toMatchObject({ prompt_tokens: 19, completion_tokens: 3, estimated: false });
  });

  it('parses events split at any byte boundary', async () => {
    const sse = fixtures.text('chat-stream.sse');
    const bytes = Buffer.from(sse);
    const pieces: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 7) pieces.push(bytes.subarray(i, i + 7));
    upstream.respond(streamReply(pieces));
    const stream = await adapter.chatStream(ctx('gpt-4o-mini', { includeUsage: true }), hello);
    expect(await collect(stream)).toEqual(dataOf(sse).map((d) => `data: ${d}\n\n`));
  });

  it('streams tool calls with index, id, name and incremental arguments', async () => {
    upstream.respond(streamReply(sseEventsOf(fixtures.text('chat-stream-tool-call.sse'))));
    const stream = await adapter.chatStream(ctx('gpt-4o-mini'), { ...hello, tools: [weatherTool] });
    const chunks = parseFrames(await collect(stream));
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, id: 'call_mdfe4thyTO4cDtnA1DRyUsKM', function: { name: 'get_weather' } });
    expect(calls.map((c: any) => c.function.arguments).join('')).toBe('{"location":"Paris"}');
    expect(stream.finishReason()).toBe('tool_calls');
    expect(stream.usage()).toMatchObject({ prompt_tokens: 61, completion_tokens: 16, estimated: false });
  });

  it('delivers the first chunk before the upstream finishes', async () => {
    const events = sseEventsOf(fixtures.text('chat-stream.sse'));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { responder, closed } = gatedStreamReply(events[0], events.slice(1), gate);
    let upstreamDone = false;
    void closed.then(() => (upstreamDone = true));
    upstream.respond(responder);

    const stream = await adapter.chatStream(ctx('gpt-4o-mini'), hello);
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(parseFrames([first.value])[0].choices[0].delta.role).toBe('assistant');
    expect(upstreamDone).toBe(false);

    release();
    const rest: string[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest.push(next.value);
    expect(rest.length).toBe(4);
    expect(await closed).toBe(true);
  });

  it('aborting mid-stream closes the upstream request and bills what was streamed', async () => {
    const events = sseEventsOf(fixtures.text('chat-stream.sse'));
    const { responder, closed } = gatedStreamReply(events[0] + events[1] + events[2], events.slice(3), new Promise(() => {}));
    upstream.respond(responder);
    const controller = new AbortController();

    const stream = await adapter.chatStream(ctx('gpt-4o-mini', { signal: controller.signal }), hello);
    const iterator = stream[Symbol.asyncIterator]();
    const received = [await iterator.next(), await iterator.next(), await iterator.next()];
    expect(parseFrames(received.map((r) => r.value as string)).map((c) => c.choices[0].delta.content).join('')).toBe('Hello there');

    controller.abort();
    expect((await iterator.next()).done).toBe(true);
    expect(await closed).toBe(false);
    expect(stream.usage()).toEqual({
      prompt_tokens: estimatePromptTokens(hello),
      completion_tokens: countTokens('Hello there'),
      estimated: true,
    });
  });

  it('embeds through /embeddings', async () => {
    upstream.respond(jsonReply(200, fixtures.json('embeddings.json')));
    const result = await adapter.embeddings(ctx('text-embedding-3-small'), { model: 'openai/text-embedding-3-small', input: ['hello', 'world'] });
    expect(upstream.last.url).toBe('/v1/embeddings');
    expect(upstream.last.json()).toEqual({ model: 'text-embedding-3-small', input: ['hello', 'world'] });
    expect(result.body).toEqual(fixtures.json('embeddings.json'));
    expect(result.usage).toEqual({ prompt_tokens: 8, completion_tokens: 0, estimated: false });
  });

  it('passes the embeddings text on as the upstream sent it when it reports usage, and serialises its own when it adds an estimate', async () => {
    const sent = fixtures.text('embeddings.json');
    upstream.respond(jsonReply(200, sent));
    const reported = await adapter.embeddings(ctx('text-embedding-3-small'), { model: 'openai/text-embedding-3-small', input: 'hello' });
    expect(reported.raw).toBe(sent);
    const { usage: _usage, ...withoutUsage } = fixtures.json('embeddings.json') as Record<string, unknown>;
    upstream.respond(jsonReply(200, JSON.stringify(withoutUsage)));
    const estimated = await adapter.embeddings(ctx('text-embedding-3-small'), { model: 'openai/text-embedding-3-small', input: 'hello' });
    expect(estimated.raw).toBeUndefined();
    expect(estimated.usage.estimated).toBe(true);
    expect(estimated.body.usage?.prompt_tokens).toBe(estimated.usage.prompt_tokens);
  });

  describe('upstream errors', () => {
    async function failure(status: number, fixture: string): Promise<AgentgwError> {
      upstream.respond(jsonReply(status, fixtures.text(fixture)));
      const err = await adapter.chat(ctx('gpt-4o-mini'), hello).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AgentgwError);
      return err as AgentgwError;
    }

    it('429 is retryable and names the provider and status', async () => {
      const err = await failure(429, 'error-429.json');
      expect(err.code).toBe('upstream_rate_limited');
      expect(err.status).toBe(429);
      // No Retry-After from the upstream: the client is still told when to try again.
      expect(err.headers['retry-after']).toBe('1');
      expect(err.isRetryable).toBe(true);
      expect(err.message).toContain('"openai"');
      expect(err.message).toContain('429');
      expect(err.message).toContain('Rate limit reached');
    });

    it('500 is retryable', async () => {
      const err = await failure(500, 'error-500.json');
      expect(err).toMatchObject({ code: 'upstream_unavailable', status: 502 });
      expect(err.isRetryable).toBe(true);
      expect(err.message).toContain('HTTP 500');
    });

    it('400 is the client request being wrong for this provider, with the upstream sentence and param', async () => {
      const err = await failure(400, 'error-400.json');
      expect(err).toMatchObject({ code: 'validation_failed', status: 400, param: 'temperature' });
      expect(err.isRetryable).toBe(false);
      expect(err.message).toContain("Invalid 'temperature'");
    });

    it('404 for a model is unknown_model', async () => {
      const err = await failure(404, 'error-404.json');
      expect(err).toMatchObject({ code: 'unknown_model', param: 'model' });
    });

    it("401 says the provider rejected the gateway's credentials and never repeats the key", async () => {
      const err = await failure(401, 'error-401.json');
      expect(err.code).toBe('upstream_bad_response');
      expect(err.isRetryable).toBe(false);
      expect(err.message).toContain("rejected the gateway's credentials");
      expect(err.message).not.toContain('sk-test');
    });

    it('scrubs the configured key from any upstream sentence it repeats', async () => {
      upstream.respond(jsonReply(400, { error: { message: `Key ${API_KEY} is not allowed for this model family.`, param: null } }));
      const err = (await adapter.chat(ctx('gpt-4o-mini'), hello).catch((e: unknown) => e)) as AgentgwError;
      expect(err.code).toBe('validation_failed');
      expect(err.message).not.toContain(API_KEY);
      expect(err.message).toContain('[redacted]');
    });

    it('a non-JSON 2xx body is upstream_bad_response', async () => {
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>gateway</html>');
      });
      await expect(adapter.chat(ctx('gpt-4o-mini'), hello)).rejects.toMatchObject({ code: 'upstream_bad_response' });
    });

    it('a 2xx JSON body without choices is upstream_bad_response', async () => {
      upstream.respond(jsonReply(200, { id: 'x', object: 'chat.completion' }));
      await expect(adapter.chat(ctx('gpt-4o-mini'), hello)).rejects.toMatchObject({ code: 'upstream_bad_response' });
    });

    it('stream errors before the first byte reject chatStream, so the caller can fall back', async () => {
      upstream.respond(jsonReply(503, fixtures.text('error-500.json')));
      await expect(adapter.chatStream(ctx('gpt-4o-mini'), hello)).rejects.toMatchObject({ code: 'upstream_unavailable' });
    });

    it('an error event mid-stream fails the iteration with an AgentgwError', async () => {
      const events = sseEventsOf(fixtures.text('chat-stream.sse'));
      upstream.respond(streamReply([events[0], 'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error"}}\n\n']));
      const stream = await adapter.chatStream(ctx('gpt-4o-mini'), hello);
      await expect(collect(stream)).rejects.toMatchObject({ code: 'upstream_unavailable' });
    });

    it('a stream with no events is upstream_bad_response', async () => {
      upstream.respond(streamReply([': keep-alive\n\n']));
      const stream = await adapter.chatStream(ctx('gpt-4o-mini'), hello);
      await expect(collect(stream)).rejects.toMatchObject({ code: 'upstream_bad_response' });
    });
  });

  describe('when a stream is complete', () => {
    const events = () => sseEventsOf(fixtures.text('chat-stream.sse'));
    const FINISH = 4;

    it('a stream that closes before any finish_reason or [DONE] is an incomplete answer, billed for what was streamed', async () => {
      upstream.respond(streamReply(events().slice(0, FINISH)));
      const stream = await adapter.chatStream(ctx('gpt-4o-mini', { includeUsage: true }), hello);
      const received: string[] = [];
      const err = await (async () => {
        for await (const frame of stream) received.push(frame);
      })().catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'upstream_bad_response', message: 'Provider "openai" ended the stream before a finish_reason or data: [DONE]; the answer is incomplete.' });
      // Nothing synthesized: no estimated usage chunk, the frames as sent.
      expect(received).toEqual(events().slice(0, FINISH));
      expect(stream.usage()).toEqual({ prompt_tokens: estimatePromptTokens(hello), completion_tokens: countTokens('Hello there!'), estimated: true });
    });

    it('a server that sends finish_reason but no [DONE] gives a whole answer; without its usage chunk, usage is estimated', async () => {
      upstream.respond(streamReply(events().slice(0, FINISH + 1)));
      const frames = await collect(await adapter.chatStream(ctx('gpt-4o-mini', { includeUsage: true }), hello));
      expect(parseFrames(frames).at(-1).usage).toEqual({ prompt_tokens: estimatePromptTokens(hello), completion_tokens: countTokens('Hello there!'), total_tokens: estimatePromptTokens(hello) + countTokens('Hello there!') });
      upstream.respond(streamReply(events().slice(0, -1)));
      const stream = await adapter.chatStream(ctx('gpt-4o-mini'), hello);
      await collect(stream);
      expect(stream.usage()).toMatchObject({ prompt_tokens: 19, completion_tokens: 3, estimated: false });
    });

    it('[DONE] ends a stream, whatever came before it', async () => {
      upstream.respond(streamReply([...events().slice(0, FINISH), 'data: [DONE]\n\n']));
      expect(await collect(await adapter.chatStream(ctx('gpt-4o-mini'), hello))).toEqual(events().slice(0, FINISH));
    });

    it('with n > 1, every choice that streamed must finish', async () => {
      const chunk = (index: number, finish: string | null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index, delta: { content: 'x' }, finish_reason: finish }] })}\n\n`;
      upstream.respond(streamReply([chunk(0, null), chunk(1, null), chunk(0, 'stop')]));
      await expect(collect(await adapter.chatStream(ctx('gpt-4o-mini'), hello))).rejects.toMatchObject({ code: 'upstream_bad_response' });
      upstream.respond(streamReply([chunk(0, null), chunk(1, null), chunk(0, 'stop'), chunk(1, 'length')]));
      expect(await collect(await adapter.chatStream(ctx('gpt-4o-mini'), hello))).toHaveLength(4);
    });

    it('a chunk that opens and closes like an object but does not parse fails the stream before it reaches the client', async () => {
      const broken = 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x"}"finish_reason":null}]}\n\n';
      upstream.respond(streamReply([...events().slice(0, 2), broken, ...events().slice(2)]));
      const stream = await adapter.chatStream(ctx('gpt-4o-mini'), hello);
      const received: string[] = [];
      const err = await (async () => {
        for await (const frame of stream) received.push(frame);
      })().catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'upstream_bad_response' });
      expect(received).toEqual(events().slice(0, 2));
    });

    it('a stream cut mid-frame fails: the last frame is read without its blank line, and it does not parse', async () => {
      const whole = events().join('');
      upstream.respond(streamReply([whole.slice(0, whole.indexOf('"finish_reason":"stop"') + 10)]));
      await expect(collect(await adapter.chatStream(ctx('gpt-4o-mini'), hello))).rejects.toMatchObject({ code: 'upstream_bad_response' });
      // The whole finish chunk without its blank line is the answer's end.
      const finish = events()[FINISH]!;
      upstream.respond(streamReply([...events().slice(0, FINISH), finish.trimEnd()]));
      expect(await collect(await adapter.chatStream(ctx('gpt-4o-mini'), hello))).toHaveLength(FINISH + 1);
    });

    it('a connection dropped mid-stream is an answer cut short (upstream_bad_response), not an unreachable upstream', async () => {
      upstream.respond((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(events().slice(0, 2).join(''), () => res.socket?.destroy());
      });
      const stream = await adapter.chatStream(ctx('gpt-4o-mini'), hello);
      await expect(collect(stream)).rejects.toMatchObject({ code: 'upstream_bad_response', message: expect.stringContaining('cut the stream short') });
    });
  });
});

describe('openai adapter without an upstream', () => {
  it('connection refused is upstream_unavailable', async () => {
    const upstream = await FakeUpstream.start();
    const url = upstream.url;
    await upstream.stop();
    const adapter = createProvider('openai', { type: 'openai', base_url: url, api_key: API_KEY });
    const err = (await adapter.chat(ctx('gpt-4o-mini'), hello).catch((e: unknown) => e)) as AgentgwError;
    expect(err).toBeInstanceOf(AgentgwError);
    expect(err.code).toBe('upstream_unavailable');
    expect(err.isRetryable).toBe(true);
    expect(err.message).toContain('ECONNREFUSED');
    await adapter.close();
  });

  it('an upstream that never answers is upstream_timeout', async () => {
    const upstream = await FakeUpstream.start();
    upstream.respond(() => {});
    const adapter = createProvider('openai', { type: 'openai', base_url: upstream.url, api_key: API_KEY, timeout_ms: 50 });
    await expect(adapter.chat(ctx('gpt-4o-mini'), hello)).rejects.toMatchObject({ code: 'upstream_timeout', status: 504 });
    await adapter.close();
    await upstream.stop();
  });

  it('an abort before the answer rejects with the abort reason and cancels the request', async () => {
    const upstream = await FakeUpstream.start();
    let closedEarly!: Promise<void>;
    upstream.respond((_req, res) => {
      closedEarly = new Promise((resolve) => res.on('close', () => resolve()));
    });
    const adapter = createProvider('openai', { type: 'openai', base_url: upstream.url, api_key: API_KEY });
    const controller = new AbortController();
    const pending = adapter.chat(ctx('gpt-4o-mini', { signal: controller.signal }), hello);
    while (upstream.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error('client went away'));
    await expect(pending).rejects.toThrow('client went away');
    await closedEarly;
    await adapter.close();
    await upstream.stop();
  });

  it('without an api_key it is not configured and calls fail without reaching the upstream', async () => {
    const adapter = createProvider('openai', { type: 'openai', base_url: 'http://127.0.0.1:9' });
    expect(adapter.configured).toBe(false);
    await expect(adapter.chat(ctx('gpt-4o-mini'), hello)).rejects.toMatchObject({ code: 'upstream_bad_response' });
    await adapter.close();
  });
});
