import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
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
  type RecordedRequest,
  streamReply,
} from '../__fixtures__/fake-upstream.js';
import { createProvider } from '../index.js';
import { countTokens } from '../shared/count-tokens.js';
import type { ChatStream, OpenAIChatRequest, ProviderAdapter } from '../spec.js';
import { encodeMessage } from './__fixtures__/encode-event-stream.js';
import { expectRefusedPlainAndStreamed, messagesWithoutContent, weatherCall } from '../__fixtures__/messages-without-content.js';

const fixtures = fixtureReader(import.meta.url);
const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE0TEST', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token-example-1234' };
const EVENTSTREAM = 'application/vnd.amazon.eventstream';

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Current weather of a city', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
};

const hello: OpenAIChatRequest = {
  model: 'bedrock/claude-haiku',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello' },
  ],
};

function eventFrames(fixture: string): Buffer[] {
  return (fixtures.json(fixture) as Array<{ event: string; payload: unknown }>).map(({ event, payload }) =>
    encodeMessage({ ':event-type': event, ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify(payload))),
  );
}

/** Recomputes the SigV4 signature of what the fake upstream received and compares it with what was sent. */
async function expectValidSignature(req: RecordedRequest): Promise<void> {
  const auth = String(req.headers.authorization);
  expect(auth).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE0TEST\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$/);
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)![1].split(';');
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) headers[name] = String(req.headers[name]);
  const date = String(req.headers['x-amz-date']);
  const signingDate = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
  const signer = new SignatureV4({ credentials: CREDENTIALS, region: 'us-west-2', service: 'bedrock', sha256: Hash.bind(null, 'sha256') });
  const expected = await signer.sign(
    new HttpRequest({ method: req.method, protocol: 'https:', hostname: '127.0.0.1', path: req.url, headers, body: req.body.toString('utf8') }),
    { signingDate },
  );
  expect(auth).toBe(expected.headers.authorization);
}

/** The Bedrock provider pointed at a fake upstream, signing with the test credentials. */
const bedrockOn = (url: string) =>
  createProvider('bedrock', {
    type: 'bedrock',
    base_url: url,
    region: 'us-west-2',
    access_key_id: CREDENTIALS.accessKeyId,
    secret_access_key: CREDENTIALS.secretAccessKey,
    session_token: CREDENTIALS.sessionToken,
  });

describe('bedrock adapter', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    bedrockOn,
    (u, a) => ((upstream = u), (adapter = a)),
  );

  it('translates to Converse, signs with SigV4, and translates the answer back', async () => {
    upstream.respond(jsonReply(200, fixtures.json('converse.json'), { 'x-amzn-requestid': 'f6e2c1a4-5b3d-4c8e-9a7f-0d1e2f3a4b5c' }));
    const result = await adapter.chat(ctx(MODEL), { ...hello, max_tokens: 256, temperature: 0.4, top_p: 0.8, stop: ['END'] });

    const req = upstream.last;
    expect(req.url).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse');
    expect(req.headers['x-amz-security-token']).toBe(CREDENTIALS.sessionToken);
    await expectValidSignature(req);
    expect(req.json()).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Say hello' }] }],
      system: [{ text: 'You are terse.' }],
      inferenceConfig: { maxTokens: 256, temperature: 0.4, topP: 0.8, stopSequences: ['END'] },
    });

    expect(result.body).toMatchObject({
      id: 'chatcmpl-f6e2c1a4-5b3d-4c8e-9a7f-0d1e2f3a4b5c',
      object: 'chat.completion',
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 524, completion_tokens: 11, total_tokens: 535, prompt_tokens_details: { cached_tokens: 512 } },
    });
    expect(result.usage).toEqual({ prompt_tokens: 524, completion_tokens: 11, cached_prompt_tokens: 512, cache_write_prompt_tokens: 0, estimated: false });
  });

  it('reports prompt cache writes for billing, and keeps them out of the OpenAI usage object', async () => {
    upstream.respond(jsonReply(200, fixtures.json('converse-cache-write.json')));
    const result = await adapter.chat(ctx(MODEL), hello);
    // inputTokens 21 + cacheReadInputTokens 2048 + cacheWriteInputTokens 1873
    expect(result.usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, cached_prompt_tokens: 2048, cache_write_prompt_tokens: 1873, estimated: false });
    expect(result.body.usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
  });

  it('reports the writes to the 1-hour cache apart (usage.cacheDetails), streamed and not', async () => {
    upstream.respond(jsonReply(200, fixtures.json('converse-cache-write-1h.json')));
    const result = await adapter.chat(ctx(MODEL), hello);
    expect(result.usage).toEqual({
      prompt_tokens: 3942,
      completion_tokens: 9,
      cached_prompt_tokens: 2048,
      cache_write_prompt_tokens: 1873,
      cache_write_1h_prompt_tokens: 1524,
      estimated: false,
    });
    expect(result.body.usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });

    upstream.respond(streamReply(eventFrames('converse-stream-cache-write-1h.json'), EVENTSTREAM));
    const stream = await adapter.chatStream(ctx(MODEL, { includeUsage: true }), hello);
    const chunks = parseFrames(await collectFrames(stream));
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
    expect(stream.usage()).toMatchObject({ cache_write_prompt_tokens: 1873, cache_write_1h_prompt_tokens: 1524 });
  });

  it('translates tools, toolUse and toolResult, images and json_schema', async () => {
    upstream.respond(jsonReply(200, fixtures.json('converse.json')));
    const schema = { type: 'object', properties: { summary: { type: 'string' } } };
    await adapter.chat(ctx(MODEL), {
      model: 'bedrock/x',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image_url', image_url: { url: 'data:image/webp;base64,UklGRg==' } }] },
        { role: 'assistant', content: '', tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'tooluse_1', content: '18°C' },
      ],
      tools: [weatherTool],
      tool_choice: 'required',
      response_format: { type: 'json_schema', json_schema: { name: 'summary', schema } },
    });
    expect(upstream.last.json()).toEqual({
      messages: [
        { role: 'user', content: [{ text: 'Weather?' }, { image: { format: 'webp', source: { bytes: 'UklGRg==' } } }] },
        { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { location: 'Paris' } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: '18°C' }] } }] },
      ],
      toolConfig: {
        tools: [{ toolSpec: { name: 'get_weather', description: 'Current weather of a city', inputSchema: { json: weatherTool.function.parameters } } }],
        toolChoice: { any: {} },
      },
      outputConfig: { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(schema), name: 'summary' } } } },
    });
  });

  it('rejects image URLs it cannot fetch, before calling Bedrock', async () => {
    await expect(
      adapter.chat(ctx(MODEL), { ...hello, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] }),
    ).rejects.toMatchObject({ code: 'validation_failed', param: 'messages[0].content[0].image_url.url' });
    expect(upstream.requests).toHaveLength(0);
  });

  it('returns toolUse blocks as tool_calls', async () => {
    upstream.respond(jsonReply(200, fixtures.json('converse-tool-use.json')));
    const result = await adapter.chat(ctx(MODEL), { ...hello, tools: [weatherTool] });
    expect(result.body.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        content: "I'll look up the weather.",
        tool_calls: [{ id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
      },
    });
    expect(result.usage).toEqual({ prompt_tokens: 415, completion_tokens: 62, estimated: false });
  });

  it('decodes ConverseStream event-stream frames into chunks, split at awkward boundaries', async () => {
    const all = Buffer.concat(eventFrames('converse-stream.json'));
    upstream.respond(streamReply([all.subarray(0, 5), all.subarray(5, 90), all.subarray(90, 91), all.subarray(91)], EVENTSTREAM));
    const stream = await adapter.chatStream(ctx(MODEL, { includeUsage: true }), hello);
    const chunks = parseFrames(await collectFrames(stream));

    expect(upstream.last.url).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream');
    expect(upstream.last.headers.accept).toBe(EVENTSTREAM);
    await expectValidSignature(upstream.last);
    expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason ?? null])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Hello' }, null],
      [{ content: ' there!' }, null],
      [{}, 'stop'],
      [undefined, null],
    ]);
    expect(chunks[4].usage).toEqual({ prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 });
    expect(stream.usage()).toEqual({ prompt_tokens: 12, completion_tokens: 4, estimated: false });
  });

  it('reports streamed prompt cache writes for billing, and keeps them out of the usage chunk', async () => {
    upstream.respond(streamReply(eventFrames('converse-stream-cache-write.json'), EVENTSTREAM));
    const stream = await adapter.chatStream(ctx(MODEL, { includeUsage: true }), hello);
    const chunks = parseFrames(await collectFrames(stream));
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 3942, completion_tokens: 9, total_tokens: 3951, prompt_tokens_details: { cached_tokens: 2048 } });
    expect(stream.usage()).toEqual({ prompt_tokens: 3942, completion_tokens: 9, cached_prompt_tokens: 2048, cache_write_prompt_tokens: 1873, estimated: false });
  });

  it('streams toolUse as delta.tool_calls with incremental arguments', async () => {
    upstream.respond(streamReply(eventFrames('converse-stream-tool-use.json'), EVENTSTREAM));
    const stream = await adapter.chatStream(ctx(MODEL), { ...hello, tools: [weatherTool] });
    const chunks = parseFrames(await collectFrames(stream));
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: 'tooluse_OF0b3K3sQ4GXhfSYcTpg7g', type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(calls.map((c: any) => c.function.arguments).join('')).toBe('{"location": "Paris"}');
    expect(stream.finishReason()).toBe('tool_calls');
    expect(stream.usage()).toEqual({ prompt_tokens: 415, completion_tokens: 62, estimated: false });
  });

  it('delivers the first chunk before the upstream finishes', async () => {
    const frames = eventFrames('converse-stream.json');
    const run = await firstFrameBeforeUpstreamEnds(upstream, Buffer.concat(frames.slice(0, 2)), frames.slice(2), () => adapter.chatStream(ctx(MODEL), hello), EVENTSTREAM);
    expect(parseFrames([run.first])[0].choices[0].delta.role).toBe('assistant');
    expect(run.upstreamEndedBeforeFirst).toBe(false);
    expect(run.upstreamFinished).toBe(true);
  });

  it('aborting mid-stream closes the upstream request; usage is estimated from what was streamed', async () => {
    const frames = eventFrames('converse-stream.json');
    let stream!: ChatStream;
    const run = await abortAfterFrames(upstream, Buffer.concat(frames.slice(0, 3)), 3, async (signal) => (stream = await adapter.chatStream(ctx(MODEL, { signal }), hello)), EVENTSTREAM);
    expect(parseFrames(run.received).map((c) => c.choices[0].delta.content).join('')).toBe('Hello there!');
    expect(run.endedAfterAbort).toBe(true);
    expect(run.upstreamFinished).toBe(false);
    expect(stream.usage()).toMatchObject({ completion_tokens: countTokens('Hello there!'), estimated: true });
  });

  it('an exception frame mid-stream fails the iteration as retryable', async () => {
    const frames = eventFrames('converse-stream.json');
    const exception = encodeMessage(
      { ':exception-type': 'throttlingException', ':content-type': 'application/json', ':message-type': 'exception' },
      Buffer.from('{"message":"Too many tokens, please wait before trying again."}'),
    );
    upstream.respond(streamReply([frames[0], frames[1], exception], EVENTSTREAM));
    const stream = await adapter.chatStream(ctx(MODEL), hello);
    const err = (await collectFrames(stream).catch((e: unknown) => e)) as AgentgwError;
    expect(err).toBeInstanceOf(AgentgwError);
    expect(err.code).toBe('upstream_unavailable');
    expect(err.message).toContain('throttlingException');
  });

  it('a frame with a bad checksum is upstream_bad_response', async () => {
    const frames = eventFrames('converse-stream.json');
    const broken = Buffer.from(frames[1]);
    broken[broken.length - 10] ^= 0xff;
    upstream.respond(streamReply([frames[0], broken], EVENTSTREAM));
    const stream = await adapter.chatStream(ctx(MODEL), hello);
    await expect(collectFrames(stream)).rejects.toMatchObject({ code: 'upstream_bad_response' });
  });

  it('embeds with Titan, one signed InvokeModel call per text, with reported token counts', async () => {
    upstream.respond(jsonReply(200, fixtures.json('titan-embedding.json')));
    const result = await adapter.embeddings(ctx('amazon.titan-embed-text-v2:0'), { model: 'bedrock/titan', input: ['a', 'b'], dimensions: 256 });
    expect(upstream.requests.map((r) => r.url)).toEqual(['/model/amazon.titan-embed-text-v2%3A0/invoke', '/model/amazon.titan-embed-text-v2%3A0/invoke']);
    expect(upstream.requests.map((r) => r.json())).toEqual([{ inputText: 'a', dimensions: 256 }, { inputText: 'b', dimensions: 256 }]);
    await expectValidSignature(upstream.requests[0]);
    expect(result.body.data.map((d) => d.index)).toEqual([0, 1]);
    expect(result.body.data[0].embedding).toEqual([0.0125, -0.0413, 0.0071, 0.0339]);
    expect(result.usage).toEqual({ prompt_tokens: 6, completion_tokens: 0, estimated: false });
  });

  it('embeds with Cohere in one call', async () => {
    upstream.respond(jsonReply(200, fixtures.json('cohere-embedding.json')));
    const result = await adapter.embeddings(ctx('cohere.embed-english-v3'), { model: 'bedrock/cohere', input: ['a', 'b'] });
    expect(upstream.last.json()).toEqual({ texts: ['a', 'b'], input_type: 'search_document' });
    expect(result.body.data[1].embedding).toEqual([0.055, -0.066, 0.077, -0.088]);
    expect(result.usage.estimated).toBe(true);
  });

  it('refuses embeddings with a chat model', async () => {
    await expect(adapter.embeddings(ctx(MODEL), { model: 'bedrock/x', input: 'a' })).rejects.toMatchObject({ code: 'unknown_model' });
  });

  it.each([
    [429, 'ThrottlingException', 'error-429.json', 'upstream_rate_limited', true, 'Too many requests'],
    [500, 'InternalServerException', 'error-500.json', 'upstream_unavailable', true, 'unexpected error'],
    [400, 'ValidationException', 'error-400.json', 'validation_failed', false, 'temperature: range'],
    [400, 'ValidationException', 'error-400-model.json', 'unknown_model', false, 'model identifier is invalid'],
    [403, 'UnrecognizedClientException', 'error-403.json', 'upstream_bad_response', false, "rejected the gateway's credentials"],
  ])('maps HTTP %i %s (%s) to %s', async (status, type, fixture, code, retryable, sentence) => {
    upstream.respond(jsonReply(status, fixtures.text(fixture), { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` }));
    const err = (await adapter.chat(ctx(MODEL), hello).catch((e: unknown) => e)) as AgentgwError;
    expect(err).toBeInstanceOf(AgentgwError);
    expect(err.code).toBe(code);
    expect(err.isRetryable).toBe(retryable);
    expect(err.message).toContain('"bedrock"');
    expect(err.message).toContain(String(status));
    expect(err.message).toContain(sentence);
    expect(err.message).not.toContain(CREDENTIALS.secretAccessKey);
  });
});

describe('bedrock adapter with an API key', () => {
  it('sends the key as a bearer token instead of signing', async () => {
    const upstream = await FakeUpstream.start();
    const adapter = createProvider('bedrock', { type: 'bedrock', base_url: upstream.url, region: 'us-east-1', api_key: 'ABSKbedrock-api-key-example' });
    upstream.respond(jsonReply(200, fixtures.json('converse.json')));
    await adapter.chat(ctx(MODEL), hello);
    expect(upstream.last.headers.authorization).toBe('Bearer ABSKbedrock-api-key-example');
    expect(upstream.last.headers['x-amz-date']).toBeUndefined();
    await adapter.close();
    await upstream.stop();
  });

  it('without any credentials it is not configured', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    try {
      const adapter = createProvider('bedrock', { type: 'bedrock', region: 'eu-west-1' });
      expect(adapter.configured).toBe(false);
      expect(adapter.baseUrl).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com');
      await expect(adapter.chat(ctx(MODEL), hello)).rejects.toMatchObject({ code: 'upstream_bad_response' });
      await adapter.close();
    } finally {
      if (saved.id !== undefined) process.env.AWS_ACCESS_KEY_ID = saved.id;
      if (saved.secret !== undefined) process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    }
  });
});

// Prompt caching, LiteLLM's convention: cache_control on a content part, a message or a tool marks a breakpoint,
// which Converse takes as a cachePoint block right after the marked block.
describe('bedrock adapter: prompt-cache breakpoints', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    bedrockOn,
    (u, a) => ((upstream = u), (adapter = a)),
  );
  /** The request types know no cache_control: the gateway's schema passes it through as an extra key. */
  const cachedRequest = (body: object) => body as OpenAIChatRequest;
  const EPHEMERAL = { type: 'ephemeral' };
  const CACHE_POINT = { cachePoint: { type: 'default' } };
  const LONG_DOC = 'The contract, in full: '.padEnd(4000, 'clause ');

  it('puts a cachePoint after a marked content part, signed as sent', async () => {
    upstream.respond(jsonReply(200, fixtures.json('converse-cache-write.json')));
    const result = await adapter.chat(
      ctx(MODEL),
      cachedRequest({
        model: 'bedrock/claude',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: LONG_DOC, cache_control: { type: 'ephemeral', scope: 'global' } },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' }, cache_control: EPHEMERAL },
              { type: 'text', text: 'When does it renew?' },
            ],
          },
        ],
      }),
    );
    await expectValidSignature(upstream.last);
    expect(upstream.last.json()).toEqual({
      messages: [
        {
          role: 'user',
          content: [{ text: LONG_DOC }, CACHE_POINT, { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } }, CACHE_POINT, { text: 'When does it renew?' }],
        },
      ],
    });
    expect(result.usage).toMatchObject({ cached_prompt_tokens: 2048, cache_write_prompt_tokens: 1873 });
  });

  it('puts a message breakpoint after the last block of that message: string content, toolUse, toolResult', async () => {
    upstream.respond(jsonReply(200, fixtures.json('converse.json')));
    await adapter.chat(
      ctx(MODEL),
      cachedRequest({
        model: 'bedrock/claude',
        messages: [
          { role: 'user', content: LONG_DOC, cache_control: EPHEMERAL },
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
            cache_control: EPHEMERAL,
          },
          { role: 'tool', tool_call_id: 'tooluse_1', content: [{ type: 'text', text: '18°C', cache_control: EPHEMERAL }] },
          { role: 'user', content: 'And tomorrow?', cache_control: EPHEMERAL },
        ],
      }),
    );
    expect(upstream.last.json().messages).toEqual([
      { role: 'user', content: [{ text: LONG_DOC }, CACHE_POINT] },
      { role: 'assistant', content: [{ text: 'Checking.' }, { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { location: 'Paris' } } }, CACHE_POINT] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: '18°C' }] } }, CACHE_POINT, { text: 'And tomorrow?' }, CACHE_POINT] },
    ]);
  });

  it('puts cachePoints in system, after the marked system message or part', async () => {
    upstream.respond(jsonReply(200, fixtures.json('converse.json')));
    await adapter.chat(
      ctx(MODEL),
      cachedRequest({
        model: 'bedrock/claude',
        messages: [
          { role: 'system', content: LONG_DOC, cache_control: EPHEMERAL },
          { role: 'developer', content: [{ type: 'text', text: 'Be terse. ' }, { type: 'text', text: 'Cite clauses.', cache_control: EPHEMERAL }] },
          { role: 'system', content: [{ type: 'text', text: 'Today is ' }, { type: 'text', text: 'Monday.' }] },
          { role: 'user', content: 'When does it renew?' },
        ],
      }),
    );
    expect(upstream.last.json()).toEqual({
      messages: [{ role: 'user', content: [{ text: 'When does it renew?' }] }],
      system: [{ text: LONG_DOC }, CACHE_POINT, { text: 'Be terse. ' }, { text: 'Cite clauses.' }, CACHE_POINT, { text: 'Today is Monday.' }],
    });
  });

  it('puts a cachePoint in toolConfig.tools after the marked tool', async () => {
    upstream.respond(jsonReply(200, fixtures.json('converse.json')));
    await adapter.chat(
      ctx(MODEL),
      cachedRequest({ ...hello, tools: [{ type: 'function', function: { name: 'get_time' } }, { ...weatherTool, cache_control: EPHEMERAL }], tool_choice: 'auto' }),
    );
    expect(upstream.last.json().toolConfig).toEqual({
      tools: [
        { toolSpec: { name: 'get_time', inputSchema: { json: { type: 'object', properties: {} } } } },
        { toolSpec: { name: 'get_weather', description: 'Current weather of a city', inputSchema: { json: weatherTool.function.parameters } } },
        CACHE_POINT,
      ],
      toolChoice: { auto: {} },
    });
  });

  it('sends the ttl the client gave on each cachePoint, streamed too', async () => {
    const oneHour = { type: 'ephemeral', ttl: '1h' };
    const body = cachedRequest({
      model: 'bedrock/claude',
      messages: [
        { role: 'system', content: LONG_DOC, cache_control: oneHour },
        { role: 'user', content: 'When does it renew?', cache_control: { type: 'ephemeral', ttl: '5m' } },
      ],
      tools: [{ ...weatherTool, cache_control: oneHour }],
    });
    upstream.respond(jsonReply(200, fixtures.json('converse.json')));
    await adapter.chat(ctx(MODEL), body);
    const sent = upstream.last.json();
    const hourPoint = { cachePoint: { type: 'default', ttl: '1h' } };
    expect(sent.system).toEqual([{ text: LONG_DOC }, hourPoint]);
    expect(sent.messages).toEqual([{ role: 'user', content: [{ text: 'When does it renew?' }, { cachePoint: { type: 'default', ttl: '5m' } }] }]);
    expect(sent.toolConfig.tools[1]).toEqual(hourPoint);
    expect(upstream.last.body.toString('utf8')).not.toMatch(/cache_control|ephemeral/);

    upstream.respond(streamReply(eventFrames('converse-stream-cache-write.json'), EVENTSTREAM));
    await collectFrames(await adapter.chatStream(ctx(MODEL), { ...body, stream: true }));
    expect(upstream.last.url).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream');
    expect(upstream.last.json()).toEqual(sent);
  });

  it('answers 400 for a 1-hour breakpoint after a 5-minute one (tools, then system, then messages), before calling Bedrock', async () => {
    const before = upstream.requests.length;
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ messages: [{ role: 'system', content: LONG_DOC, cache_control: { type: 'ephemeral' } }, { role: 'user', content: 'Hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }, 'messages[1].cache_control', 'the default'],
      [{ messages: [{ role: 'system', content: LONG_DOC, cache_control: { type: 'ephemeral', ttl: '1h' } }, { role: 'user', content: 'Hi' }], tools: [{ ...weatherTool, cache_control: { type: 'ephemeral', ttl: '5m' } }] }, 'messages[0].cache_control', '"5m"'],
    ];
    for (const [request, param, shortOne] of cases) {
      const err = await adapter.chat(ctx(MODEL), cachedRequest({ model: 'bedrock/claude', ...request })).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'validation_failed', param });
      expect((err as Error).message).toContain(`asks for a 1-hour cache after`);
      expect((err as Error).message).toContain(shortOne);
    }
    expect(upstream.requests.length).toBe(before);
  });

  it('sends a request whose cache_control values are all null as one without any', async () => {
    upstream.respond(jsonReply(200, fixtures.json('converse.json')));
    await adapter.chat(ctx(MODEL), { ...hello, tools: [weatherTool] });
    const plain = upstream.last.json();
    await adapter.chat(
      ctx(MODEL),
      cachedRequest({
        ...hello,
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'You are terse.', cache_control: null }], cache_control: null },
          { role: 'user', content: 'Say hello', cache_control: null },
        ],
        tools: [{ ...weatherTool, cache_control: null }],
      }),
    );
    expect(upstream.last.json()).toEqual(plain);
    expect(JSON.stringify(plain)).not.toContain('cachePoint');
  });

  it('answers 400 to an invalid cache_control, naming where it is, before calling Bedrock', async () => {
    const cases: Array<[object, string, string]> = [
      [{ ...hello, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'default' } }] }] }, 'messages[0].content[0].cache_control', 'its type is "default"'],
      [{ ...hello, messages: [{ role: 'system', content: 'Hi', cache_control: { type: 'ephemeral', ttl: '1d' } }] }, 'messages[0].cache_control', 'its ttl is "1d"'],
      [{ ...hello, tools: [{ ...weatherTool, cache_control: true }] }, 'tools[0].cache_control', 'must be {"type": "ephemeral"}'],
      [{ ...hello, messages: [{ role: 'user', content: '', cache_control: EPHEMERAL }] }, 'messages[0].cache_control', 'does not receive'],
    ];
    for (const [body, param, sentence] of cases) {
      const err = await adapter.chat(ctx(MODEL), cachedRequest(body)).catch((e: unknown) => e);
      expect(err, param).toMatchObject({ code: 'validation_failed', status: 400, param });
      expect((err as Error).message).toContain(sentence);
    }
    expect(upstream.requests).toHaveLength(0);
  });
});

// The gateway's schema takes a null or absent content on any message (OpenAI allows one on an assistant message with
// tool_calls); OpenAI answers 400 to the others, and so does the adapter, before calling Bedrock, naming the field.
describe('bedrock adapter: messages without content', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  adapterOnFakeUpstream(
    bedrockOn,
    (u, a) => ((upstream = u), (adapter = a)),
  );
  /** The request types require content where the gateway's schema does not. */
  const request = (messages: object[], stream = false) => ({ model: 'bedrock/claude-haiku', messages, ...(stream ? { stream } : {}) }) as unknown as OpenAIChatRequest;
  const call = weatherCall;
  const refused = messagesWithoutContent('tooluse_1');

  it.each(refused)('answers 400 to %s, plain and streamed, before calling Bedrock', async (_, messages, param, sentence) => {
    upstream.respond(jsonReply(200, fixtures.json('converse.json')));
    await expectRefusedPlainAndStreamed(adapter, MODEL, messages, param, sentence);
    expect(upstream.requests).toHaveLength(0);
  });

  it('translates an assistant message with tool_calls and a null or absent content, plain and streamed', async () => {
    const messages = [
      { role: 'user', content: 'Weather in Paris, then Lyon?' },
      { role: 'assistant', content: null, tool_calls: [call('tooluse_1', 'Paris')] },
      { role: 'tool', tool_call_id: 'tooluse_1', content: '18°C' },
      { role: 'assistant', tool_calls: [call('tooluse_2', 'Lyon')] },
      { role: 'tool', tool_call_id: 'tooluse_2', content: '21°C' },
    ];
    const sent = [
      { role: 'user', content: [{ text: 'Weather in Paris, then Lyon?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { location: 'Paris' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: '18°C' }] } }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_2', name: 'get_weather', input: { location: 'Lyon' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_2', content: [{ text: '21°C' }] } }] },
    ];
    upstream.respond(jsonReply(200, fixtures.json('converse.json')));
    await adapter.chat(ctx(MODEL), request(messages));
    expect(upstream.last.json()).toEqual({ messages: sent });

    upstream.respond(streamReply(eventFrames('converse-stream.json'), EVENTSTREAM));
    await collectFrames(await adapter.chatStream(ctx(MODEL), request(messages, true)));
    expect(upstream.last.url).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream');
    expect(upstream.last.json()).toEqual({ messages: sent });
    expect(upstream.requests).toHaveLength(2);
  });
});
