import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { TEST_REDIS_URL, type TestGateway, startTestGateway } from '../test-support/gateway.js';

// Three nodes on one PostgreSQL schema and one Redis (a prefix of this test's own): a target one node cooled down is
// avoided by the other two within a second, without either of them calling it.
const hits: Record<string, number> = {};
let upstream: Server;
let one: TestGateway;
let two: TestGateway;
let three: TestGateway;
let key: string;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const name = (req.url ?? '').split('/')[1]!;
      hits[name] = (hits[name] ?? 0) + 1;
      if (name === 'lim') return void res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '30' }).end('{"error":{"message":"slow down"}}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: name, choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const config = {
    providers: { lim: { type: 'openai', base_url: `${base}/lim/v1`, api_key: 'sk-test' }, spare: { type: 'openai', base_url: `${base}/spare/v1`, api_key: 'sk-test' } },
    models: { m: ['lim/m', 'spare/m'] },
    counters: { kind: 'redis', url: TEST_REDIS_URL, prefix: `agentgw-test:routing-${randomBytes(6).toString('hex')}:` },
  };
  one = await startTestGateway({ storage: 'postgres', config });
  const pgSchema = one.storage.kind === 'postgres' ? one.storage.schema : undefined;
  two = await startTestGateway({ storage: 'postgres', config, pgSchema, adminKey: one.adminKey });
  three = await startTestGateway({ storage: 'postgres', config, pgSchema, adminKey: one.adminKey });
  const admin = adminClient(one.adminUrl, one.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'bot')).api_key;
});
afterAll(async () => {
  await three?.close();
  await two?.close();
  await one?.close();
  await new Promise((r) => upstream?.close(r));
});

async function chat(gw: TestGateway) {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.text();
  return res.status;
}

test('a target cooled down by one node is avoided by the other two within a second', async () => {
  // Before: every node serves m from its first target.
  for (const gw of [two, three]) expect(gw.runtime.dataPlane.router.health.of('lim/m').state(Date.now())).not.toBe('cooling_down');
  expect(await chat(one)).toBe(200);
  expect(hits).toEqual({ lim: 1, spare: 1 });
  await new Promise((r) => setTimeout(r, 1000));
  for (const gw of [two, three]) {
    expect(gw.runtime.dataPlane.router.health.of('lim/m').state(Date.now())).toBe('cooling_down');
    for (let i = 0; i < 3; i++) expect(await chat(gw)).toBe(200);
  }
  // Neither of the other nodes called the cooled-down target: all six requests went to the spare.
  expect(hits).toEqual({ lim: 1, spare: 7 });
});
