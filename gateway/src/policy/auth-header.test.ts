import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminApi } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { bearerKey } from './auth.js';

describe('bearerKey: a key, a missing header, or what is malformed', () => {
  test.each([
    ['Bearer agk_1', { key: 'agk_1' }],
    ['bearer   agk_1  ', { key: 'agk_1' }],
    ['Bearer\tagk_1', { key: 'agk_1' }],
    [undefined, { missing: true }],
    ['', { missing: true }],
    ['   ', { missing: true }],
  ])('%j', (header, expected) => {
    expect(bearerKey(header)).toEqual(expected);
  });

  test.each([
    ['Bearer agk_1 agk_1', /followed by 2 words where it takes one key/],
    ['Bearer a b c', /followed by 3 words/],
    ['Bearer', /followed by no key/],
    ['agk_1', /must be the word "Bearer", a space, then the key/],
    ['Basic dXNlcjpwYXNz', /must be the word "Bearer"/],
  ])('%j is malformed', (header, why) => {
    const parsed = bearerKey(header);
    expect('malformed' in parsed && parsed.malformed).toMatch(why);
    // The sentence never quotes what was sent.
    expect(JSON.stringify(parsed)).not.toContain('agk_1');
  });
});

describe('a malformed Authorization header is answered as malformed, not as missing, on /v1, /api and /mcp', () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    const api = adminApi(gw.adminUrl, gw.adminKey);
    await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } });
    key = (await api('POST', '/agents', { body: { tenant_id: 'acme', name: 'bot' } })).body.api_key;
  });
  afterAll(async () => gw?.close());

  const error = async (res: Response) => ({ status: res.status, body: (await res.json()) as any });

  test('/v1: "Bearer KEY KEY" is a 401 saying the header is malformed, without the key', async () => {
    const { status, body } = await error(await fetch(`${gw.baseUrl}/models`, { headers: { authorization: `Bearer ${key} ${key}` } }));
    expect(status).toBe(401);
    expect(body.error.code).toBe('invalid_api_key');
    expect(body.error.message).toMatch(/^The Authorization header is malformed: "Bearer" is followed by 2 words where it takes one key/);
    expect(body.error.message).not.toMatch(/Missing/);
    expect(JSON.stringify(body)).not.toContain(key);
    // No header at all is still "missing".
    const missing = await error(await fetch(`${gw.baseUrl}/models`));
    expect(missing.body.error.message).toMatch(/^Missing API key/);
  });

  test('/v1/messages: an x-api-key with a space in it is malformed, in Anthropic\'s shape', async () => {
    const res = await fetch(`${gw.baseUrl}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': `${key} ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'mock/m', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const { status, body } = await error(res);
    expect(status).toBe(401);
    expect(body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    expect(body.error.message).toMatch(/^The API key header \(x-api-key or Authorization\) is malformed/);
    expect(JSON.stringify(body)).not.toContain(key);
  });

  test('/api: "Bearer KEY KEY" with an admin key is malformed', async () => {
    const res = await adminApi(gw.adminUrl, gw.adminKey)('GET', '/tenants', { headers: { authorization: `Bearer ${gw.adminKey} ${gw.adminKey}` } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_api_key');
    expect(res.body.error.message).toMatch(/^The Authorization header is malformed: "Bearer" is followed by 2 words/);
    expect(res.text).not.toContain(gw.adminKey);
    const noScheme = await adminApi(gw.adminUrl, gw.adminKey)('GET', '/tenants', { headers: { authorization: gw.adminKey } });
    expect(noScheme.body.error.message).toMatch(/must be the word "Bearer", a space, then the key/);
  });

  test('/mcp: "Bearer KEY KEY" is malformed', async () => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key} ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    });
    const { status, body } = await error(res);
    expect(status).toBe(401);
    expect(body.error.code).toBe('invalid_api_key');
    expect(body.error.message).toMatch(/^The Authorization header is malformed/);
    expect(JSON.stringify(body)).not.toContain(key);
  });
});

test('the one-match reading of a plain Bearer header gives the key the word split gives, for any header', () => {
  const split = (header: string) => {
    const words = header.trim().split(/\s+/).filter(Boolean);
    return words.length === 2 && words[0]!.toLowerCase() === 'bearer' ? words[1] : undefined;
  };
  const ws = fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u2028', '\ufeff', '  ');
  const header = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.tuple(fc.array(ws, { maxLength: 2 }), fc.constantFrom('Bearer', 'bearer', 'BEARER', 'BeArEr', 'Bearer:', 'Basic'), fc.array(ws, { maxLength: 3 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.array(ws, { maxLength: 2 })).map(([a, b, c, d, e]) => `${a.join('')}${b}${c.join('')}${d}${e.join('')}`),
  );
  fc.assert(fc.property(header, (h) => {
    const r = bearerKey(h);
    expect('key' in r ? r.key : undefined).toBe(split(h));
  }), { numRuns: 5000 });
});
