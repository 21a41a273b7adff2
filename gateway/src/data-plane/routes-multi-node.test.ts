import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { TEST_REDIS_URL, type TestGateway, startTestGateway } from '../test-support/gateway.js';

// Two nodes on one PostgreSQL schema and one Redis: a route written through node one's admin interface serves
// node two's very next request (the write returns once every live node holds it), and so do its update and delete.
// Stored routes route exactly as config aliases do: failover, cooldowns shared between nodes, the highest target price.
const hits: Record<string, number> = {};
let upstream: Server;
let one: TestGateway;
let two: TestGateway;
let key: string;
let admin: ReturnType<typeof adminClient>;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const name = (req.url ?? '').split('/')[1]!;
      hits[name] = (hits[name] ?? 0) + 1;
      if (name === 'down') return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"overloaded"}}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: name, choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const provider = (name: string) => ({ type: 'openai', base_url: `${base}/${name}/v1`, api_key: 'sk-test' });
  const config = {
    providers: { cheap: provider('cheap'), dear: provider('dear'), down: provider('down') },
    prices: { 'cheap/m': { input: 1, output: 1 }, 'dear/m': { input: 100, output: 100 }, 'down/m': { input: 1, output: 1 } },
    counters: { kind: 'redis', url: TEST_REDIS_URL, prefix: `agentgw-test:routes-${randomBytes(6).toString('hex')}:` },
  };
  one = await startTestGateway({ storage: 'postgres', config });
  two = await startTestGateway({ storage: 'postgres', config, pgSchema: one.storage.kind === 'postgres' ? one.storage.schema : undefined, adminKey: one.adminKey });
  admin = adminClient(one.adminUrl, one.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'bot')).api_key;
});
afterAll(async () => {
  await two?.close();
  await one?.close();
  await new Promise((r) => upstream?.close(r));
});

async function chat(gw: TestGateway, model: string, apiKey = key, maxTokens = 10) {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: maxTokens, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await res.json()) as { model?: string; error?: { code: string } };
  return { status: res.status, served: body.model, code: body.error?.code };
}

test('a route written on one node serves the next request on the other, and so do its update and delete', async () => {
  expect(await chat(two, 'team/fast')).toMatchObject({ status: 400, code: 'unknown_model' });
  await admin.call('PUT', `/routes/${encodeURIComponent('team/*')}`, { strategy: 'fallback', targets: [{ model: 'cheap/m' }] }, 201);
  expect(await chat(two, 'team/fast')).toMatchObject({ status: 200, served: 'cheap' });
  expect(hits.cheap).toBe(1);

  await admin.call('PUT', `/routes/${encodeURIComponent('team/*')}`, { strategy: 'fallback', targets: [{ model: 'dear/m' }] }, 200);
  expect(await chat(two, 'team/fast')).toMatchObject({ status: 200, served: 'dear' });
  expect(hits).toMatchObject({ cheap: 1, dear: 1 });

  await admin.call('DELETE', `/routes/${encodeURIComponent('team/*')}`, undefined, 204);
  expect(await chat(two, 'team/fast')).toMatchObject({ status: 400, code: 'unknown_model' });
  expect(hits).toMatchObject({ cheap: 1, dear: 1 });
});

test('a stored route fails over, and a target one node cooled down is avoided by the other', async () => {
  await admin.call('PUT', '/routes/failing', { strategy: 'fallback', targets: [{ model: 'down/m' }, { model: 'cheap/m' }] }, 201);
  const before = { down: hits.down ?? 0, cheap: hits.cheap ?? 0 };
  expect(await chat(one, 'failing')).toMatchObject({ status: 200 });
  expect(hits.down).toBe(before.down + 1);
  expect(hits.cheap).toBe(before.cheap + 1);
  await new Promise((r) => setTimeout(r, 1000));
  for (let i = 0; i < 3; i++) expect(await chat(two, 'failing')).toMatchObject({ status: 200 });
  expect(hits.down).toBe(before.down + 1);
  expect(hits.cheap).toBe(before.cheap + 4);
  const health = (await admin.call('GET', '/route-health')) as { routes: Array<{ alias: string | null; targets: Array<{ model: string; state: string }> }> };
  expect(health.routes.find((r) => r.alias === 'failing')?.targets.map((t) => [t.model, t.state])).toEqual([
    ['down/m', 'cooling_down'],
    ['cheap/m', 'healthy'],
  ]);
});

test('the per-request cost cap reads the highest price of a stored route\'s targets', async () => {
  // 1000 output tokens: 0.001 USD on cheap/m, 0.1 USD on dear/m; the cap lies between.
  await admin.policy('capped', { tenant_id: 'acme', rules: { max_cost_per_request: 0.01 } });
  const capped = (await admin.agent('acme', 'capped-bot', 'capped')).api_key;
  await admin.call('PUT', '/routes/cheap-only', { strategy: 'fallback', targets: [{ model: 'cheap/m' }] }, 201);
  await admin.call('PUT', '/routes/mixed', { strategy: 'weighted', targets: [{ model: 'cheap/m', weight: 100 }, { model: 'dear/m', weight: 1 }] }, 201);
  expect(await chat(two, 'cheap-only', capped, 1000)).toMatchObject({ status: 200 });
  expect(await chat(two, 'mixed', capped, 1000)).toMatchObject({ status: 403, code: 'cost_cap_exceeded' });
});
