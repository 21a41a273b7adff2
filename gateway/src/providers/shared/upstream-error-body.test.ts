import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FakeUpstream } from '../__fixtures__/fake-upstream.js';
import { OpenAIFrameTranslator } from '../openai/openai-stream-frames.js';
import { providerIdentity } from './provider-identity.js';
import { StreamMeter } from './stream-meter.js';
import { UpstreamClient } from './upstream-client.js';
import { ERROR_BODY_LIMIT, ErrorBody } from './upstream-status-error.js';

// Error bodies reach the caller's message whole whichever way the upstream was called, even when a character is split
// between two network chunks, and are cut at ERROR_BODY_LIMIT bytes.
const MESSAGE = 'Paramètre « température » hors limites : 0 ≤ t ≤ 2 — réessayez 🙂';
const BODY = Buffer.from(JSON.stringify({ error: { message: MESSAGE, type: 'invalid_request_error' } }));
// Inside the "è" of "Paramètre": its two bytes arrive in different writes.
const SPLIT = BODY.indexOf(Buffer.from('è')) + 1;

let upstream: FakeUpstream;
let client: UpstreamClient;
const identity = providerIdentity('up', 'openai', []);
const signal = () => new AbortController().signal;

beforeAll(async () => {
  upstream = await FakeUpstream.start();
  upstream.respond((_req, res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.write(BODY.subarray(0, SPLIT));
    setTimeout(() => res.end(BODY.subarray(SPLIT)), 20);
  });
  client = new UpstreamClient(identity, `${upstream.url}/v1`, {});
});
afterAll(async () => {
  await client.close();
  await upstream.stop();
});

describe('upstream error bodies', () => {
  test('a split character survives: collected JSON calls', async () => {
    const err: any = await client.sendJsonText({ path: '/chat/completions', headers: {}, body: '{}', signal: signal() }).catch((e: unknown) => e);
    expect(err?.code).toBe('validation_failed');
    expect(err.message).toContain(MESSAGE);
  });

  test('a split character survives: streamed response bodies', async () => {
    const err: any = await client.send({ path: '/embeddings', headers: {}, body: '{}', signal: signal() }).catch((e: unknown) => e);
    expect(err?.code).toBe('validation_failed');
    expect(err.message).toContain(MESSAGE);
  });

  test('a split character survives: event streams', async () => {
    const meter = new StreamMeter(() => 1);
    const err: any = await client
      .openFrames({ path: '/chat/completions', headers: {}, body: '{}', signal: signal() }, { meter, translator: new OpenAIFrameTranslator(identity, meter, true) })
      .catch((e: unknown) => e);
    expect(err?.code).toBe('validation_failed');
    expect(err.message).toContain(MESSAGE);
  });
});

describe('ErrorBody', () => {
  test('keeps the first ERROR_BODY_LIMIT bytes and says when to stop reading', () => {
    const body = new ErrorBody();
    const chunk = Buffer.alloc(ERROR_BODY_LIMIT / 4 + 1, 'a');
    expect([body.add(chunk), body.add(chunk), body.add(chunk)]).toEqual([false, false, false]);
    expect(body.add(chunk)).toBe(true);
    expect(body.add(chunk)).toBe(true);
    expect(body.text()).toBe('a'.repeat(ERROR_BODY_LIMIT));
  });

  test('an empty body is empty text', () => {
    expect(new ErrorBody().text()).toBe('');
  });
});
