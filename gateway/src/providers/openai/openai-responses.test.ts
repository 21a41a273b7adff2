import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../../contract/errors.js';
import {
  abortAfterFrames,
  adapterOnFakeUpstream,
  collectFrames,
  FakeUpstream,
  fixtureReader,
  jsonReply,
  sseEventsOf,
  streamReply,
} from '../__fixtures__/fake-upstream.js';
import { createProvider } from '../index.js';
import { countTokens } from '../shared/count-tokens.js';
import type { NativeResponses, ProviderAdapter, ResponsesCallContext } from '../spec.js';

// The Responses API recorded for the /v1/responses dialect, replayed by a fake OpenAI (and Azure OpenAI) upstream.
const responsesFixture = (name: string) => readFileSync(new URL(`../../data-plane/dialects/responses/__fixtures__/${name}`, import.meta.url), 'utf8');
const errorFixtures = fixtureReader(import.meta.url);
const API_KEY = 'sk-test-0123456789abcdef2345';
const PROMPT_ESTIMATE = 42;

function call(model = 'gpt-5.4', extra: Partial<ResponsesCallContext> = {}): ResponsesCallContext {
  return { model, requestId: 'req_test_1', signal: new AbortController().signal, estimatePromptTokens: () => PROMPT_ESTIMATE, ...extra };
}

/** A request as the client wrote it: Codex's, with `include`, `prompt_cache_key`, reasoning and a `stream` flag. */
const codexRequest = (): Record<string, unknown> => JSON.parse(responsesFixture('codex-request.json'));
const simpleRequest = (): Record<string, unknown> => ({ model: 'openai/gpt-5.4', instructions: 'You are a helpful assistant.', input: 'Hello!', stream: true, store: false });

/** The data of one SSE event of a fixture, parsed. */
function dataOf(event: string): any {
  return JSON.parse(event.slice(event.indexOf('\ndata: ') + 7));
}

/** Events of a fixture with the given types replaced by `replace` (dropped when it returns null). */
function editEvents(sse: string, replace: (type: string, data: any) => string | null): string[] {
  return sseEventsOf(sse).flatMap((event) => {
    const data = dataOf(event);
    const out = replace(data.type as string, data);
    return out === null ? [] : [out];
  });
}

const eventOf = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;

describe('openai adapter: native Responses API', () => {
  let upstream: FakeUpstream;
  let adapter: ProviderAdapter;
  let responses: NativeResponses;
  adapterOnFakeUpstream(
    (url) => createProvider('openai', { type: 'openai', base_url: `${url}/v1`, api_key: API_KEY }),
    (u, a) => {
      upstream = u;
      adapter = a;
      responses = a.responses!;
    },
  );

  it('speaks the Responses API; OpenAI-compatible servers do not (their requests are translated)', async () => {
    expect(adapter.responses).toBeDefined();
    const compatible = createProvider('vllm', { type: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' });
    expect(compatible.responses).toBeUndefined();
    await compatible.close();
  });

  describe('create', () => {
    it('posts the body as the client wrote it, model replaced in its place and without stream, and returns the answer unchanged', async () => {
      const answer = responsesFixture('openapi-reasoning-response.json');
      upstream.respond(jsonReply(200, answer));
      const body = codexRequest();
      const result = await responses.create(call('gpt-5.5-codex'), body);

      const sent = upstream.last;
      expect(sent.method).toBe('POST');
      expect(sent.url).toBe('/v1/responses');
      expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(sent.headers['content-type']).toBe('application/json');
      const { stream, ...rest } = body;
      expect(stream).toBe(true);
      expect(sent.json()).toEqual({ ...rest, model: 'gpt-5.5-codex' });
      expect(Object.keys(sent.json())).toEqual(Object.keys(rest));
      expect(sent.json()).toMatchObject({ include: ['reasoning.encrypted_content'], prompt_cache_key: body.prompt_cache_key, reasoning: body.reasoning });

      expect(result.text).toBe(answer);
      expect(result.value).toEqual(JSON.parse(answer));
      expect(result.usage).toEqual({ prompt_tokens: 81, completion_tokens: 1035, cached_prompt_tokens: 0, reasoning_tokens: 832, estimated: false });
    });

    it('keeps a body without stream as it is, and drops stream: false and stream_options', async () => {
      upstream.respond(jsonReply(200, responsesFixture('openapi-function-call-response.json')));
      await responses.create(call(), { model: 'x', input: 'hi', stream: false, stream_options: { include_obfuscation: false }, tools: [] });
      expect(upstream.last.body.toString()).toBe('{"model":"gpt-5.4","input":"hi","tools":[]}');
    });

    it('passes reasoning items with encrypted content through, usage without cached tokens when none are reported', async () => {
      const encrypted = responsesFixture('reasoning-encrypted-response.json');
      upstream.respond(jsonReply(200, encrypted));
      const result = await responses.create(call(), simpleRequest());
      expect(result.text).toBe(encrypted);
      expect((result.value.output as any[])[0]).toMatchObject({ type: 'reasoning', encrypted_content: 'gAAAAABpM0Yj-...=' });

      const functionCall = responsesFixture('openapi-function-call-response.json');
      upstream.respond(jsonReply(200, functionCall));
      const called = await responses.create(call(), simpleRequest());
      expect(called.text).toBe(functionCall);
      expect(called.usage).toEqual({ prompt_tokens: 291, completion_tokens: 23, reasoning_tokens: 0, estimated: false });
    });

    it('estimates usage when the upstream reports none: the prompt from the context, the output from its items', async () => {
      const response = JSON.parse(responsesFixture('openapi-function-call-response.json'));
      response.usage = null;
      upstream.respond(jsonReply(200, response));
      const result = await responses.create(call(), simpleRequest());
      const item = response.output[0];
      expect(result.usage).toEqual({ prompt_tokens: PROMPT_ESTIMATE, completion_tokens: countTokens(item.name + item.arguments), estimated: true });
      expect(result.value.usage).toBeNull();
    });

    it('a 2xx answer without an output array is upstream_bad_response, retryable', async () => {
      upstream.respond(jsonReply(200, { id: 'resp_1', object: 'response' }));
      const err = (await responses.create(call(), simpleRequest()).catch((e: unknown) => e)) as AgentgwError;
      expect(err).toMatchObject({ code: 'upstream_bad_response', isRetryable: true });
    });

    it('a failed response is an error, so the caller can fall back', async () => {
      const response = { ...JSON.parse(responsesFixture('openapi-reasoning-response.json')), status: 'failed', error: { code: 'server_error', message: 'The model had an error.' }, output: [] };
      upstream.respond(jsonReply(200, response));
      const err = (await responses.create(call(), simpleRequest()).catch((e: unknown) => e)) as AgentgwError;
      expect(err).toMatchObject({ code: 'upstream_unavailable', isRetryable: true });
      expect(err.message).toContain('The model had an error.');
    });
  });

  describe('stream', () => {
    it.each([
      ['openapi-text-stream.sse', { prompt_tokens: 37, completion_tokens: 11, reasoning_tokens: 0, estimated: false }],
      ['function-call-stream.sse', { prompt_tokens: 291, completion_tokens: 23, reasoning_tokens: 0, estimated: false }],
      ['reasoning-summary-stream.sse', { prompt_tokens: 8, completion_tokens: 215, cached_prompt_tokens: 0, reasoning_tokens: 192, estimated: false }],
    ])('passes every event of %s on byte for byte, billed from response.completed', async (fixture, usage) => {
      const sse = responsesFixture(fixture);
      const events = sseEventsOf(sse);
      upstream.respond(streamReply(events));
      const stream = await responses.stream(call(), simpleRequest());
      const frames = await collectFrames(stream);

      expect(frames).toEqual(events);
      expect(frames.join('')).toBe(sse);
      expect(stream.usage()).toEqual(usage);
      expect(stream.finishReason()).toBe('stop');
      expect(stream.finalResponse()).toEqual(dataOf(events.at(-1)!).response);
    });

    it('sends the body as written with stream: true and the model replaced, keys in the client order', async () => {
      upstream.respond(streamReply(sseEventsOf(responsesFixture('openapi-text-stream.sse'))));
      const body = codexRequest();
      await collectFrames(await responses.stream(call('gpt-5.5-codex'), body));
      const sent = upstream.last;
      expect(sent.url).toBe('/v1/responses');
      expect(sent.json()).toEqual({ ...body, model: 'gpt-5.5-codex', stream: true });
      expect(Object.keys(sent.json())).toEqual(Object.keys(body));

      await collectFrames(await responses.stream(call(), { input: 'hi' }));
      expect(upstream.last.body.toString()).toBe('{"input":"hi","model":"gpt-5.4","stream":true}');
    });

    it('parses events split at any byte boundary', async () => {
      const sse = responsesFixture('reasoning-summary-stream.sse');
      const bytes = Buffer.from(sse);
      const pieces: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += 7) pieces.push(bytes.subarray(i, i + 7));
      upstream.respond(streamReply(pieces));
      const stream = await responses.stream(call(), simpleRequest());
      expect((await collectFrames(stream)).join('')).toBe(sse);
      expect(stream.usage()).toMatchObject({ completion_tokens: 215, reasoning_tokens: 192 });
    });

    it('passes events without an event name on as data-only frames, still billed', async () => {
      const events = sseEventsOf(responsesFixture('function-call-stream.sse')).map((e) => e.slice(e.indexOf('\n') + 1));
      upstream.respond(streamReply(events));
      const stream = await responses.stream(call(), simpleRequest());
      expect(await collectFrames(stream)).toEqual(events);
      expect(stream.usage()).toEqual({ prompt_tokens: 291, completion_tokens: 23, reasoning_tokens: 0, estimated: false });
      expect(stream.finalResponse()).toMatchObject({ status: 'completed' });
    });

    it('without reported usage: the prompt estimated, the output counted from the text, tool and reasoning deltas streamed', async () => {
      const sse = responsesFixture('reasoning-summary-stream.sse');
      const noUsage = editEvents(sse, (type, data) => (type === 'response.completed' ? eventOf({ ...data, response: { ...data.response, usage: null } }) : eventOf(data)));
      upstream.respond(streamReply(noUsage));
      const stream = await responses.stream(call(), simpleRequest());
      await collectFrames(stream);
      const streamed = sseEventsOf(sse)
        .map(dataOf)
        .filter((d) => d.type.endsWith('.delta'))
        .map((d) => d.delta as string)
        .join('');
      expect(streamed).toContain('Hello! How can I assist you today?');
      expect(stream.usage()).toEqual({ prompt_tokens: PROMPT_ESTIMATE, completion_tokens: countTokens(streamed), estimated: true });

      const fnSse = responsesFixture('function-call-stream.sse');
      upstream.respond(streamReply(editEvents(fnSse, (type, data) => (type === 'response.completed' ? eventOf({ ...data, response: { ...data.response, usage: null } }) : eventOf(data)))));
      const fnStream = await responses.stream(call(), simpleRequest());
      await collectFrames(fnStream);
      expect(fnStream.usage().completion_tokens).toBe(countTokens('{"location":"Boston, MA","unit":"celsius"}'));
    });

    it('ends on response.incomplete, finish reason from incomplete_details', async () => {
      const sse = responsesFixture('openapi-text-stream.sse');
      const incomplete = editEvents(sse, (type, data) =>
        type === 'response.completed'
          ? eventOf({ ...data, type: 'response.incomplete', response: { ...data.response, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } })
          : eventOf(data),
      );
      upstream.respond(streamReply(incomplete));
      const stream = await responses.stream(call(), simpleRequest());
      expect(await collectFrames(stream)).toEqual(incomplete);
      expect(stream.finishReason()).toBe('max_output_tokens');
      expect(stream.finalResponse()).toMatchObject({ status: 'incomplete' });
      expect(stream.usage()).toMatchObject({ prompt_tokens: 37, completion_tokens: 11, estimated: false });
    });

    it('a response.failed mid-stream delivers the events before it, not itself, and fails as retryable; finalResponse keeps it', async () => {
      const events = sseEventsOf(responsesFixture('openapi-text-stream.sse'));
      const created = dataOf(events[0]!).response;
      const failedResponse = { ...created, status: 'failed', error: { code: 'server_error', message: `The server had an error (key ${API_KEY}).` }, usage: { input_tokens: 37, output_tokens: 2 } };
      upstream.respond(streamReply([...events.slice(0, 5), eventOf({ type: 'response.failed', response: failedResponse })]));
      const stream = await responses.stream(call(), simpleRequest());
      const received: string[] = [];
      const err = (await (async () => {
        for await (const frame of stream) received.push(frame);
      })().catch((e: unknown) => e)) as AgentgwError;

      expect(received).toEqual(events.slice(0, 5));
      expect(err).toBeInstanceOf(AgentgwError);
      expect(err).toMatchObject({ code: 'upstream_unavailable', status: 502, isRetryable: true });
      expect(err.message).toContain('"openai" failed mid-stream (server_error): The server had an error');
      expect(err.message).not.toContain(API_KEY);
      expect(stream.finalResponse()).toEqual(failedResponse);
      expect(stream.usage()).toMatchObject({ prompt_tokens: 37, completion_tokens: 2, estimated: false });
    });

    it('a response.failed for the context window is the request being wrong for the model, as a 400 of the chat path is', async () => {
      const events = sseEventsOf(responsesFixture('openapi-text-stream.sse'));
      const created = dataOf(events[0]!).response;
      const error = { code: 'context_length_exceeded', message: 'Your input exceeds the context window of this model. Please adjust your input and try again.' };
      upstream.respond(streamReply([events[0]!, eventOf({ type: 'response.failed', response: { ...created, status: 'failed', error } })]));
      const stream = await responses.stream(call(), simpleRequest());
      await expect(collectFrames(stream)).rejects.toMatchObject({ code: 'validation_failed', status: 400, isRetryable: false });
      expect(stream.finalResponse()).toMatchObject({ status: 'failed', error });
    });

    it('an error event mid-stream fails the iteration, the upstream sentence sanitised', async () => {
      const events = sseEventsOf(responsesFixture('function-call-stream.sse'));
      const error = { type: 'error', code: 'server_error', message: `Something broke for ${API_KEY}`, param: null, sequence_number: 4 };
      upstream.respond(streamReply([...events.slice(0, 4), eventOf(error), ...events.slice(4)]));
      const stream = await responses.stream(call(), simpleRequest());
      const received: string[] = [];
      const err = (await (async () => {
        for await (const frame of stream) received.push(frame);
      })().catch((e: unknown) => e)) as AgentgwError;
      expect(received).toEqual(events.slice(0, 4));
      expect(err).toMatchObject({ code: 'upstream_unavailable', isRetryable: true });
      expect(err.message).toContain('Something broke for [redacted]');
      expect(stream.finalResponse()).toBeNull();
    });

    it('an error event in the nested shape is read too', async () => {
      const error = { type: 'error', error: { type: 'invalid_request_error', code: 'context_length_exceeded', message: 'Input too long.', param: 'input' }, sequence_number: 1 };
      upstream.respond(streamReply([eventOf(error)]));
      const stream = await responses.stream(call(), simpleRequest());
      await expect(collectFrames(stream)).rejects.toMatchObject({ code: 'validation_failed', param: 'input', message: expect.stringContaining('Input too long.') });
    });

    it('a stream cut before its terminal event is an error, not a silent end', async () => {
      const events = sseEventsOf(responsesFixture('openapi-text-stream.sse'));
      upstream.respond(streamReply(events.slice(0, -1)));
      const stream = await responses.stream(call(), simpleRequest());
      const received: string[] = [];
      const err = (await (async () => {
        for await (const frame of stream) received.push(frame);
      })().catch((e: unknown) => e)) as AgentgwError;
      expect(received).toEqual(events.slice(0, -1));
      expect(err).toMatchObject({ code: 'upstream_bad_response', message: 'Provider "openai" ended the stream before response.completed; the answer is incomplete.' });
      expect(stream.finalResponse()).toBeNull();
      // Billed from what was streamed: the prompt estimated, the one text delta counted.
      expect(stream.usage()).toEqual({ prompt_tokens: PROMPT_ESTIMATE, completion_tokens: countTokens('Hi'), estimated: true });
    });

    it('a stream with no events, or an event that is not JSON, is upstream_bad_response', async () => {
      upstream.respond(streamReply([': keep-alive\n\n']));
      await expect(collectFrames(await responses.stream(call(), simpleRequest()))).rejects.toMatchObject({ code: 'upstream_bad_response' });

      const events = sseEventsOf(responsesFixture('openapi-text-stream.sse'));
      upstream.respond(streamReply([events[0]!, 'event: response.in_progress\ndata: {"type":"response.in_pro\n\n', ...events.slice(1)]));
      const received: string[] = [];
      const stream = await responses.stream(call(), simpleRequest());
      const err = await (async () => {
        for await (const frame of stream) received.push(frame);
      })().catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'upstream_bad_response' });
      expect(received).toEqual([events[0]]);
    });

    it('aborting mid-stream closes the upstream request', async () => {
      const events = sseEventsOf(responsesFixture('openapi-text-stream.sse'));
      const result = await abortAfterFrames(upstream, events.slice(0, 5).join(''), 5, (signal) => responses.stream(call('gpt-5.4', { signal }), simpleRequest()));
      expect(result.received).toEqual(events.slice(0, 5));
      expect(result.endedAfterAbort).toBe(true);
      expect(result.upstreamFinished).toBe(false);
    });
  });

  describe('upstream errors, mapped as the chat path maps them', () => {
    it.each([
      [429, 'error-429.json', { code: 'upstream_rate_limited', status: 429, isRetryable: true }],
      [500, 'error-500.json', { code: 'upstream_unavailable', status: 502, isRetryable: true }],
      [503, 'error-500.json', { code: 'upstream_unavailable', status: 502, isRetryable: true }],
      [400, 'error-400.json', { code: 'validation_failed', status: 400, param: 'temperature', isRetryable: false }],
      [404, 'error-404.json', { code: 'unknown_model', status: 400, param: 'model' }],
      [401, 'error-401.json', { code: 'upstream_bad_response', status: 502, isRetryable: false }],
    ])('HTTP %i, plain and before the first byte of a stream', async (status, fixture, expected) => {
      upstream.respond(jsonReply(status, errorFixtures.text(fixture)));
      const plain = (await responses.create(call(), simpleRequest()).catch((e: unknown) => e)) as AgentgwError;
      const streamed = (await responses.stream(call(), simpleRequest()).catch((e: unknown) => e)) as AgentgwError;
      for (const err of [plain, streamed]) {
        expect(err).toBeInstanceOf(AgentgwError);
        expect(err).toMatchObject(expected);
        expect(err.message).toContain('"openai"');
        expect(err.message).not.toContain('sk-test');
      }
      if (status === 429) expect(plain.headers['retry-after']).toBe('1');
    });

    it('without an api_key, calls fail without reaching the upstream', async () => {
      const keyless = createProvider('openai', { type: 'openai', base_url: `${upstream.url}/v1` });
      await expect(keyless.responses!.create(call(), simpleRequest())).rejects.toMatchObject({ code: 'upstream_bad_response' });
      await expect(keyless.responses!.stream(call(), simpleRequest())).rejects.toMatchObject({ code: 'upstream_bad_response' });
      expect(upstream.requests).toHaveLength(0);
      await keyless.close();
    });
  });
});

describe('azure-openai adapter: native Responses API', () => {
  const AZURE_KEY = 'azure-test-key-5f1c2b7e9d';
  let upstream: FakeUpstream;
  let responses: NativeResponses;
  adapterOnFakeUpstream(
    (url) => createProvider('azure', { type: 'azure-openai', base_url: url, api_key: AZURE_KEY, api_version: '2024-10-21', deployments: { 'gpt-5.4': 'prod-gpt54' } }),
    (u, a) => {
      upstream = u;
      responses = a.responses!;
    },
  );

  it('posts to the v1 Responses path with the api-key header, the deployment as the body model', async () => {
    const answer = responsesFixture('openapi-reasoning-response.json');
    upstream.respond(jsonReply(200, answer));
    const body = codexRequest();
    const result = await responses.create(call('gpt-5.4'), body);
    const sent = upstream.last;
    expect(sent.url).toBe('/openai/v1/responses');
    expect(sent.headers['api-key']).toBe(AZURE_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    const { stream, ...rest } = body;
    expect(sent.json()).toEqual({ ...rest, model: 'prod-gpt54' });
    expect(result.text).toBe(answer);
    expect(result.usage).toMatchObject({ prompt_tokens: 81, completion_tokens: 1035, reasoning_tokens: 832, estimated: false });

    upstream.respond(jsonReply(200, answer));
    await responses.create(call('gpt-4.1-mini'), simpleRequest());
    expect(upstream.last.json().model).toBe('gpt-4.1-mini');
  });

  it('streams the events through unchanged', async () => {
    const sse = responsesFixture('function-call-stream.sse');
    upstream.respond(streamReply(sseEventsOf(sse)));
    const stream = await responses.stream(call('gpt-5.4'), simpleRequest());
    expect((await collectFrames(stream)).join('')).toBe(sse);
    expect(upstream.last.url).toBe('/openai/v1/responses');
    expect(upstream.last.json()).toMatchObject({ model: 'prod-gpt54', stream: true });
    expect(stream.usage()).toMatchObject({ prompt_tokens: 291, completion_tokens: 23, estimated: false });
  });

  it('maps its errors as the chat path does', async () => {
    upstream.respond(jsonReply(404, { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } }));
    await expect(responses.create(call('gpt-5.4'), simpleRequest())).rejects.toMatchObject({ code: 'unknown_model' });
    upstream.respond(jsonReply(401, { error: { code: '401', message: `Access denied due to invalid subscription key ${AZURE_KEY}.` } }));
    const err = (await responses.stream(call('gpt-5.4'), simpleRequest()).catch((e: unknown) => e)) as AgentgwError;
    expect(err).toMatchObject({ code: 'upstream_bad_response' });
    expect(err.message).not.toContain(AZURE_KEY);
  });
});
