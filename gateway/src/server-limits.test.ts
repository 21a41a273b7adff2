// The client side of the server, set by `limits:`: headers and request timeouts (which time only what the client sends,
// never an answer: a stream runs as long as the model writes), the keep-alive timeout, the connection cap, and the body
// limit under CONTRACT's name (body_mb) and its earlier one (gateway_body_bytes). Each waits on what the server does, so
// a slower machine makes a run longer, never wrong.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from './config.js';
import { adminClient } from './test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from './test-support/fake-openai.js';
import { type TestGateway, startTestGateway } from './test-support/gateway.js';

/** A raw connection to the gateway: what it received, and a promise of its close. */
function open(url: string): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.on('data', (d) => (text += d.toString('latin1')));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => text, closed }));
    socket.once('error', reject);
  });
}

function statusLine(text: string): string {
  return text.split('\r\n')[0]!;
}

function bodyOf(text: string): any {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
}

describe('timeouts', () => {
  let gw: TestGateway;
  let upstream: FakeOpenAI;
  let key: string;
  beforeAll(async () => {
    upstream = await startFakeOpenAI({ chunks: 5, gate: () => new Promise((r) => setTimeout(r, 400)) });
    gw = await startTestGateway({
      config: {
        providers: { oai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-test' } },
        limits: { headers_timeout_s: 1, request_timeout_s: 1, keep_alive_timeout_s: 1 },
      },
    });
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    key = (await admin.agent('acme', 'bot')).api_key;
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  test('the server is set from the config', () => {
    const server = gw.app.server;
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).toEqual([1000, 1000, 1000]);
    expect(server.maxConnections).toBe(4096);
  });

  test('headers not sent within headers_timeout_s: 408 with CONTRACT body, and the connection is closed', async () => {
    const c = await open(gw.url);
    c.socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer x\r\n');
    await c.closed;
    expect(statusLine(c.received())).toBe('HTTP/1.1 408 Request Timeout');
    expect(bodyOf(c.received()).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_header' });
  });

  test('a body not sent within request_timeout_s: 408, and the connection is closed', async () => {
    const c = await open(gw.url);
    c.socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`);
    await c.closed;
    expect(statusLine(c.received())).toBe('HTTP/1.1 408 Request Timeout');
  });

  test('an answer is not timed: a stream that runs longer than request_timeout_s arrives whole', async () => {
    const started = Date.now();
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'oai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    // The upstream took 2 s (5 chunks, 400 ms apart), twice the request timeout.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    expect(res.status).toBe(200);
    for (let i = 0; i < 5; i++) expect(text).toContain(`word${i} `);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  test('an idle keep-alive connection is closed after keep_alive_timeout_s', async () => {
    const c = await open(gw.url);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n');
    await c.closed;
    expect(statusLine(c.received())).toBe('HTTP/1.1 200 OK');
    expect(c.received()).toMatch(/keep-alive: timeout=1/i);
  });
});

describe('max_connections', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ config: { limits: { max_connections: 2 } } });
  });
  afterAll(async () => gw?.close());

  test('a connection past the cap is closed at once, unanswered; once one closes, a new one is served', async () => {
    const held = [await open(gw.url), await open(gw.url)];
    for (const c of held) c.socket.write('GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n');
    for (const c of held) await expect.poll(() => statusLine(c.received())).toBe('HTTP/1.1 200 OK');

    const refused = await open(gw.url);
    refused.socket.write('GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n');
    await refused.closed;
    expect(refused.received()).toBe('');

    held[0]!.socket.destroy();
    await held[0]!.closed;
    // The server sees the close a moment after the client does.
    await expect.poll(async () => (await fetch(`${gw.url}/healthz`).catch(() => null))?.status).toBe(200);
    held[1]!.socket.destroy();
  });
});

describe('body_mb', () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startTestGateway({ config: { providers: { mock: { type: 'mock' } }, limits: { body_mb: 0.004 } } });
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    key = (await admin.agent('acme', 'bot')).api_key;
  });
  afterAll(async () => gw?.close());

  const chat = (content: string) =>
    fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock/mock-1', messages: [{ role: 'user', content }] }),
    });

  test('is the /v1 body limit (CONTRACT name): past it 413 body_too_large', async () => {
    expect((await chat('x'.repeat(3000))).status).toBe(200);
    const r = await chat('x'.repeat(5000));
    expect(r.status).toBe(413);
    const error = ((await r.json()) as any).error;
    expect(error.code).toBe('body_too_large');
    // The sentence names the limit and the key that raises it.
    expect(error.message).toMatch(/limit of [\d.]+ MB.*limits\.body_mb/);
  });
});

describe('limits in the config', () => {
  const limits = (l: Record<string, unknown>) => loadConfig({ env: {}, overrides: { limits: l } }).limits;

  test('defaults suit long streamed model calls', () => {
    expect(limits({})).toMatchObject({
      body_bytes: 10 * 1024 * 1024,
      upstream_body_mb: 32,
      headers_timeout_s: 60,
      request_timeout_s: 300,
      keep_alive_timeout_s: 72,
      max_connections: 4096,
    });
  });

  test('body_mb is CONTRACT name; gateway_body_bytes, its earlier name in bytes, still works', () => {
    expect(limits({ body_mb: 2 }).body_bytes).toBe(2 * 1024 * 1024);
    expect(limits({ gateway_body_bytes: 4096 }).body_bytes).toBe(4096);
  });

  test.each([
    [{ body_mb: 2, gateway_body_bytes: 4096 }, /config limits\.gateway_body_bytes: set body_mb or gateway_body_bytes/],
    [{ body_mb: 0 }, /config limits\.body_mb: /],
    [{ body_mb: 0.0001 }, /config limits\.body_mb: must be at least/],
    [{ headers_timeout_s: 120, request_timeout_s: 60 }, /config limits\.headers_timeout_s: must not be more than request_timeout_s \(60\)/],
    [{ max_connections: 0 }, /config limits\.max_connections: /],
    [{ keep_alive_timeout_s: 1.5 }, /config limits\.keep_alive_timeout_s: /],
    [{ request_timeout: 60 }, /config limits: .*request_timeout/],
  ])('%j is refused with a sentence naming the key', (l, message) => {
    expect(() => limits(l)).toThrow(message);
  });
});
