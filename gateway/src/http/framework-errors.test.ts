import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ErrorBody } from '../contract/index.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw?.close());

const get = (path: string) => fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${gw.adminKey}` } });

test('a malformed URL gets a CONTRACT error body, not the framework default', async () => {
  const r = await get('/api/tenants/%E0%A4%A');
  expect(r.status).toBe(400);
  const body = (await r.json()) as ErrorBody;
  expect(body.error.type).toBe('invalid_request_error');
  expect(body.error.message.length).toBeGreaterThan(10);
});

test('a 128-character trace id can be looked up', async () => {
  const id = 'x'.repeat(128);
  const r = await get(`/api/traces/${id}`);
  expect(r.status).toBe(404);
  expect(((await r.json()) as ErrorBody).error.code).toBe('trace_not_found');
  const tooLong = await get(`/api/traces/${'x'.repeat(129)}`);
  expect(tooLong.status).toBe(400);
});
