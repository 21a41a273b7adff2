import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

// The /v1 front end at the HTTP level: what a malformed request gets back, before any policy or provider is involved.
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  gw = await startTestGateway({ config: { providers: { mock: { type: 'mock' } }, limits: { gateway_body_bytes: 4096 } } });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('open', { tenant_id: 'acme' });
  key = (await admin.agent('acme', 'bot', 'open')).api_key as string;
});
afterAll(async () => {
  await gw?.close();
});

const chatBody = JSON.stringify({ model: 'mock/mock-1', messages: [{ role: 'user', content: 'hi' }] });

async function send(path: string, opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}) {
  const res = await request(`${gw.url}${path}`, {
    method: (opts.method ?? 'POST') as 'POST',
    headers: { authorization: `Bearer ${key}`, ...opts.headers },
    body: opts.body,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: text ? (JSON.parse(text) as any) : null };
}

describe('/v1 requests that are not well-formed get a CONTRACT error with the request and trace ids', () => {
  test.each([
    ['a body that is not JSON', { headers: { 'content-type': 'application/json' }, body: '{"model":' }, 400, 'invalid_json'],
    ['an empty JSON body', { headers: { 'content-type': 'application/json' }, body: '' }, 400, 'invalid_json'],
    ['a JSON array', { headers: { 'content-type': 'application/json' }, body: '[]' }, 400, 'invalid_json'],
    ['no body at all', { headers: {} }, 400, 'invalid_json'],
    ['a __proto__ key', { headers: { 'content-type': 'application/json' }, body: '{"model":"mock/mock-1","__proto__":{"x":1},"messages":[]}' }, 400, 'invalid_json'],
    ['a text/plain body', { headers: { 'content-type': 'text/plain' }, body: chatBody }, 400, 'invalid_header'],
    ['a body over the limit', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock/mock-1', messages: [{ role: 'user', content: 'x'.repeat(5000) }] }) }, 413, 'body_too_large'],
  ] as const)('%s', async (_name, opts, status, code) => {
    const r = await send('/v1/chat/completions', { ...opts, headers: { ...opts.headers, 'x-agent-trace-id': 'bad-input' } });
    expect(r.status).toBe(status);
    expect(r.json.error.code).toBe(code);
    expect(r.json.error.message).toMatch(/\.$/);
    expect(r.headers['x-request-id']).toMatch(/^req_/);
    expect(r.headers['x-agent-trace-id']).toBe('bad-input');
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  test('a body over the limit sent in chunks (no Content-Length) is refused too', async () => {
    const chunks = (async function* () {
      for (let i = 0; i < 10; i++) yield Buffer.from('x'.repeat(1000));
    })();
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: chunks,
    }).catch((err: unknown) => err as Error);
    // The gateway answers 413 and closes; a client still sending may see the close instead.
    if (!(res instanceof Error)) {
      expect(res.statusCode).toBe(413);
      expect(((await res.body.json()) as any).error.code).toBe('body_too_large');
    }
  });

  test('wrong methods and unknown paths are 404 route_not_found; a trailing slash and a query string still route', async () => {
    const get = await send('/v1/chat/completions', { method: 'GET' });
    expect(get.status).toBe(404);
    expect(get.json.error.code).toBe('route_not_found');
    const deep = await send('/v1/chat/completions/extra', { headers: { 'content-type': 'application/json' }, body: chatBody });
    expect(deep.status).toBe(404);
    const slash = await send('/v1/chat/completions/?x=1', { headers: { 'content-type': 'application/json' }, body: chatBody });
    expect(slash.status).toBe(200);
    expect(slash.json.object).toBe('chat.completion');
    const models = await send('/v1/models/', { method: 'GET' });
    expect(models.status).toBe(200);
    expect(models.json.data.map((m: any) => m.id)).toContain('mock/mock-1');
    const head = await send('/v1/models', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  test('auth comes before routing: an unknown path without a key is 401', async () => {
    const res = await request(`${gw.url}/v1/nothing`, { method: 'GET' });
    expect(res.statusCode).toBe(401);
    expect(((await res.body.json()) as any).error.code).toBe('invalid_api_key');
  });

  test('paths that only start like /v1 belong to the admin side', async () => {
    const res = await request(`${gw.url}/v1x/models`, { method: 'GET' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-agent-trace-id']).toBeUndefined();
  });

  test('Content-Type parameters and case are accepted', async () => {
    const r = await send('/v1/chat/completions', { headers: { 'content-type': 'Application/JSON; charset=UTF-8' }, body: chatBody });
    expect(r.status).toBe(200);
  });
});

describe('shutdown', () => {
  test('a connection the client opened but never used does not hold up close()', async () => {
    const { connect } = await import('node:net');
    const other = await startTestGateway({ config: { providers: { mock: { type: 'mock' } } } });
    const port = Number(new URL(other.url).port);
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const closedByServer = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // Without the reaper, close() waits for the server's headers timeout (a minute): the test would time out.
    await other.close();
    await closedByServer;
    expect(socket.destroyed).toBe(true);
  });
});
