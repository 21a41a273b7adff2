import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ErrorBody } from '../contract/index.js';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

/** A gateway of its own with tenant acme, policy `open` (no rules) and one agent on it. */
async function gatewayWithAgent(providers: Record<string, unknown> = { mock: { type: 'mock' } }, extra: Record<string, unknown> = {}) {
  const gateway = await startTestGateway({ config: { providers, ...extra } as never });
  const admin = adminClient(gateway.adminUrl, gateway.adminKey);
  await admin.tenant('acme');
  await admin.policy('open', { tenant_id: 'acme' });
  const agent = await admin.agent('acme', 'bot', 'open');
  return { gateway, admin, agent, key: agent.api_key as string };
}

// The /v1 front end at the HTTP level: what a malformed request gets back, before any policy or provider is involved.
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  ({ gateway: gw, key } = await gatewayWithAgent(undefined, { limits: { gateway_body_bytes: 4096 } }));
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
    const chunks = Readable.from(
      (async function* () {
        for (let i = 0; i < 10; i++) yield Buffer.from('x'.repeat(1000));
      })(),
    );
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: chunks,
    }).catch((err: unknown) => err as Error);
    // The gateway answers 413 and closes; a client still sending may see the close instead.
    if (!(res instanceof Error)) {
      expect(res.statusCode).toBe(413);
      expect(((await res.body.json()) as ErrorBody).error.code).toBe('body_too_large');
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
  test('pipelined requests in progress on one connection are all answered before it closes', async () => {
    const { connect } = await import('node:net');
    const { startFakeOpenAI } = await import('../test-support/fake-openai.js');
    const upstream = await startFakeOpenAI({ delayMs: 300 });
    const { gateway: other, key: apiKey } = await gatewayWithAgent({ up: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-test' } });
    try {
      const raw = (model: string) => {
        const b = JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] });
        return `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(b)}\r\n\r\n${b}`;
      };
      const socket = connect(Number(new URL(other.url).port), '127.0.0.1');
      let received = '';
      socket.on('data', (d) => (received += d.toString()));
      socket.on('error', () => undefined);
      const closed = new Promise<void>((r) => socket.once('close', () => r()));
      await new Promise<void>((r) => socket.once('connect', () => r()));
      // The first is refused at once (unknown provider), the second waits 300 ms on the upstream.
      socket.write(raw('nope/x') + raw('up/gpt-4o-mini'));
      await new Promise((r) => setTimeout(r, 100));
      await other.close();
      await closed;
      expect([...received.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1])).toEqual(['400', '200']);
      expect(received.toLowerCase()).toContain('connection: close');
    } finally {
      await upstream.close();
    }
  });

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

describe('review regressions', () => {
  const body = JSON.stringify({ model: 'mock/mock-1', messages: [{ role: 'user', content: 'hi' }] });

  /** A POST whose headers go now and whose body goes when `send()` is called. */
  async function heldPost(base: string, apiKey: string, trace: string) {
    const http = await import('node:http');
    let req!: import('node:http').ClientRequest;
    const status = new Promise<number>((resolve, reject) => {
      req = http.request(
        `${base}/v1/chat/completions`,
        { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-agent-trace-id': trace } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', reject);
    });
    req.flushHeaders();
    return { send: () => req.end(body), status };
  }

  test('a policy change between a request\'s headers and its body applies to it and to every later request', async () => {
    const { gateway: other, admin, agent } = await gatewayWithAgent();
    try {
      await admin.policy('closed', { tenant_id: 'acme', allowed_models: [] });
      const held = await heldPost(other.url, agent.api_key, 'held');
      await new Promise((r) => setTimeout(r, 50));
      await admin.call('PATCH', `/agents/${agent.id}`, { policy_id: 'closed' });
      await admin.call('DELETE', '/policies/open');
      held.send();
      expect(await held.status).toBe(403);
      const later = await request(`${other.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agent.api_key}`, 'content-type': 'application/json' },
        body,
      });
      expect(later.statusCode).toBe(403);
      expect(((await later.body.json()) as any).error.code).toBe('model_not_allowed');
    } finally {
      await other.close();
    }
  });

  test('a key revoked between a request\'s headers and its body is refused', async () => {
    const { gateway: other, admin, agent } = await gatewayWithAgent();
    try {
      const held = await heldPost(other.url, agent.api_key, 'revoked');
      await new Promise((r) => setTimeout(r, 50));
      await admin.call('POST', `/agents/${agent.id}/rotate-key`);
      held.send();
      expect(await held.status).toBe(401);
    } finally {
      await other.close();
    }
  });

  test('unknown routes are answered but not recorded; an upload the client abandons is recorded as client_closed', async () => {
    const http = await import('node:http');
    const nothing = await request(`${gw.url}/v1/nothing`, { headers: { authorization: `Bearer ${key}`, 'x-agent-trace-id': 'probe-404' } });
    expect(nothing.statusCode).toBe(404);
    await nothing.body.text();
    await new Promise<void>((resolve) => {
      const r = http.request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': 1000, 'x-agent-trace-id': 'abandoned' },
      });
      r.on('error', () => resolve());
      r.write('{"model":');
      setTimeout(() => {
        r.destroy();
        resolve();
      }, 50);
    });
    let abandoned: any;
    for (let i = 0; i < 50 && !abandoned; i++) {
      await new Promise((r) => setTimeout(r, 20));
      await gw.runtime.dataPlane.usage.flush();
      const res = await request(`${gw.adminUrl}/traces/abandoned`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
      if (res.statusCode === 200) abandoned = ((await res.body.json()) as any).requests[0];
      else await res.body.text();
    }
    expect(abandoned).toMatchObject({ http_status: 499, error_code: 'client_closed' });
    const probe = await request(`${gw.adminUrl}/traces/probe-404`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
    expect(probe.statusCode).toBe(404);
    await probe.body.text();
  });
});
