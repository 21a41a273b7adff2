import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

// One local upstream per path prefix (/<name>/v1/...), each answering as `mode[name]` says: ok, 429 with Retry-After,
// 500, or a connection reset.
type Mode = 'ok' | '429' | '500' | 'reset' | 'hang';
const mode: Record<string, Mode> = {};
const hits: Record<string, number> = {};
/** The keys a key pool's requests came with, in order. */
const poolKeys: string[] = [];
/** Ends the stream the `held` upstream keeps open after its first chunk. */
let endHeld: (() => void) | undefined;
const COMPLETION = { id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } };
const CHUNK = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'fine' }, finish_reason: null }] };

let upstream: Server;
let gw: TestGateway;
let key: string;
let admin: ReturnType<typeof adminClient>;
const names = ['a', 'b', 'c', 'lim', 'dead', 'rst', 'spare', 'only', 'only2', 'sa', 'sb', 'held', 'tq'];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const name = (req.url ?? '').split('/')[1]!;
      hits[name] = (hits[name] ?? 0) + 1;
      if (name === 'pool') {
        const auth = String(req.headers.authorization);
        poolKeys.push(auth.slice('Bearer '.length));
        if (auth === 'Bearer k-b') return void res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '30' }).end('{"error":{"message":"slow down"}}');
      }
      const m = mode[name] ?? 'ok';
      if (m === '429') return void res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"error":{"message":"slow down"}}');
      if (m === '500') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"boom"}}');
      if (m === 'reset') return void req.socket.destroy();
      if (m === 'hang') return;
      if (JSON.parse(body).stream && name === 'held') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify(CHUNK)}\n\n`);
        endHeld = () => res.end('data: [DONE]\n\n');
        return;
      }
      if (JSON.parse(body).stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.end(`data: ${JSON.stringify(CHUNK)}\n\ndata: [DONE]\n\n`);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...COMPLETION, model: name }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const providers: Record<string, unknown> = Object.fromEntries(names.map((n) => [n, { type: 'openai', base_url: `${base}/${n}/v1`, api_key: 'sk-test' }]));
  providers.slow = { type: 'openai', base_url: `${base}/slow/v1`, api_key: 'sk-test', timeout_ms: 300 };
  providers.pool = { type: 'openai', base_url: `${base}/pool/v1`, api_keys: ['k-a', 'k-b', 'k-c'] };
  gw = await startTestGateway({
    config: {
      providers,
      prices: { 'a/cheap': { input: 1, output: 1 }, 'b/dear': { input: 1000, output: 1000 } },
      models: {
        weighted: { strategy: 'weighted', targets: [{ model: 'a/m', weight: 3 }, { model: 'b/m', weight: 1 }] },
        tiers: { strategy: 'weighted', targets: [{ model: 'c/m', priority: 1 }, { model: 'sa/m' }] },
        'limited-first': ['lim/m', 'spare/m'],
        'dead-first': ['dead/m', 'spare/m'],
        'reset-first': ['rst/m', 'spare/m'],
        lonely: ['only/m', 'only2/m'],
        single: ['only/m'],
        busy: { strategy: 'least_busy', targets: ['held/m', 'spare/m'] },
        streams: ['sb/m', 'spare/m'],
        pooled: ['pool/m', 'spare/m'],
        'token-quota': [{ model: 'tq/m', tpm: 10 }, 'spare/m'],
        'slow-first': ['slow/m', 'spare/m'],
        priced: { strategy: 'weighted', targets: [{ model: 'a/cheap', weight: 9 }, { model: 'b/dear', weight: 1 }] },
      },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'bot')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await new Promise((r) => upstream?.close(r));
});
beforeEach(() => {
  for (const n of Object.keys(hits)) delete hits[n];
});

async function chat(model: string, stream = false, agentKey = key) {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 100, ...(stream ? { stream: true } : {}) }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('routing over several targets', () => {
  test('weighted: smooth weighted round-robin gives each target exactly its share of sequential requests', async () => {
    const served: string[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await chat('weighted');
      expect(r.status).toBe(200);
      served.push(JSON.parse(r.text).model);
    }
    expect(hits).toEqual({ a: 30, b: 10 });
    expect(served.slice(0, 4)).toEqual(['a', 'a', 'b', 'a']);
  });

  test('a lower priority group gets traffic only while the group above is unavailable', async () => {
    for (let i = 0; i < 5; i++) expect((await chat('tiers')).status).toBe(200);
    expect(hits).toEqual({ sa: 5 });
    mode.sa = '500';
    for (let i = 0; i < 5; i++) expect((await chat('tiers')).status).toBe(200);
    // One failed attempt on sa, then it cools down and c carries the load.
    expect(hits).toEqual({ sa: 6, c: 5 });
    delete mode.sa;
  });

  test('a 429ing target gets no traffic until its Retry-After ends, then one probe; no request fails meanwhile', async () => {
    mode.lim = '429';
    for (let i = 0; i < 6; i++) expect((await chat('limited-first')).status).toBe(200);
    expect(hits).toEqual({ lim: 1, spare: 6 });
    await sleep(1100);
    delete mode.lim;
    const [r1, r2] = await Promise.all([chat('limited-first'), chat('limited-first')]);
    expect([r1.status, r2.status]).toEqual([200, 200]);
    // One probe went to lim while the other request went to the spare; the probe answered, so lim is first again.
    expect(hits).toEqual({ lim: 2, spare: 7 });
    for (let i = 0; i < 3; i++) expect(JSON.parse((await chat('limited-first')).text).model).toBe('lim');
  });

  test('a dead target costs clients one failed attempt per cooldown period, and no request fails', async () => {
    mode.dead = '500';
    mode.rst = 'reset';
    for (let i = 0; i < 10; i++) {
      expect((await chat('dead-first')).status).toBe(200);
      expect((await chat('reset-first')).status).toBe(200);
    }
    expect(hits).toEqual({ dead: 1, rst: 1, spare: 20 });
  });

  test('a target that times out is cooled down like a dead one', async () => {
    mode.slow = 'hang';
    for (let i = 0; i < 4; i++) expect((await chat('slow-first')).status).toBe(200);
    expect(hits).toEqual({ slow: 1, spare: 4 });
  });

  test('least_busy: a stream counts in flight until it ends, so the next request goes to the idle target', async () => {
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'busy', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('fine');
    expect(JSON.parse((await chat('busy')).text).model).toBe('spare');
    const health = () => gw.runtime.dataPlane.router.health.of('held/m').inFlight;
    expect(health()).toBe(1);
    endHeld!();
    while (!(await reader.read()).done);
    // The request's end is recorded just after its last byte.
    for (let i = 0; i < 50 && health() !== 0; i++) await sleep(10);
    expect(health()).toBe(0);
    expect(hits).toEqual({ held: 1, spare: 1 });
  });

  test('a stream fails over before its first byte', async () => {
    mode.sb = '500';
    const r = await chat('streams', true);
    expect(r.status).toBe(200);
    expect(r.text).toContain('data: [DONE]');
    expect(hits).toEqual({ sb: 1, spare: 1 });
  });

  test('every target cooling down: 429 upstream_rate_limited with Retry-After, without an upstream call', async () => {
    mode.only = '429';
    mode.only2 = '429';
    const first = await chat('lonely');
    expect(first.status).toBe(429);
    const second = await chat('lonely');
    expect(second.status).toBe(429);
    expect(JSON.parse(second.text).error.code).toBe('upstream_rate_limited');
    expect(second.headers.get('retry-after')).toBe('1');
    expect(hits).toEqual({ only: 1, only2: 1 });
  });

  test("a target's own tpm counts each request's tokens for an agent without a tpm of its own", async () => {
    expect((await chat('token-quota')).status).toBe(200);
    expect((await chat('token-quota')).status).toBe(200);
    expect(hits).toEqual({ tq: 1, spare: 1 });
  });

  test('a route of one target is always called: its upstream answers, not a cooldown', async () => {
    mode.only = '500';
    for (let i = 0; i < 3; i++) expect((await chat('single')).status).toBe(502);
    mode.only = 'ok';
    expect((await chat('single')).status).toBe(200);
    expect(hits).toEqual({ only: 4 });
    mode.only = '429';
  });

  test('a key pool uses its keys in turn; a key answering 429 rests on its own while the others carry the load', async () => {
    for (let i = 0; i < 7; i++) {
      const r = await chat('pooled');
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text).model).toBe('pool');
    }
    expect(poolKeys).toEqual(['k-a', 'k-b', 'k-c', 'k-a', 'k-c', 'k-a', 'k-c', 'k-a']);
    expect(hits.spare).toBeUndefined();
    const res = await fetch(`${gw.adminUrl}/route-health`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
    const body = (await res.json()) as { routes: Array<{ alias: string | null; targets: Array<{ state: string; keys: Array<{ key_index: number; state: string }> }> }> };
    const pooled = body.routes.find((r) => r.alias === 'pooled')!.targets[0]!;
    expect(pooled.state).toBe('healthy');
    expect(pooled.keys.map((k) => [k.key_index, k.state])).toEqual([[0, 'healthy'], [1, 'cooling_down'], [2, 'healthy']]);
    // No response or health report names a key.
    expect(JSON.stringify(body)).not.toContain('k-b');
  });

  test('the per-request cap is checked at the highest price among the targets a request may reach', async () => {
    // The worst case on b/dear (1000 USD per million tokens, 100 output tokens) passes 0.01 USD; on a/cheap it does not.
    await admin.policy('capped', { tenant_id: 'acme', rules: { max_cost_per_request: 0.01 } });
    const capped = (await admin.agent('acme', 'capped-bot', 'capped')).api_key as string;
    const r = await chat('priced', false, capped);
    expect(r.status).toBe(403);
    expect(JSON.parse(r.text).error.code).toBe('cost_cap_exceeded');
    expect(hits).toEqual({});
    expect((await chat('a/cheap', false, capped)).status).toBe(200);
  });

  test('GET /api/route-health shows each target: state, cooldown end, in flight, latency, error rate (admin only)', async () => {
    mode.only = '429';
    await chat('lonely');
    const res = await fetch(`${gw.adminUrl}/route-health`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { routes: Array<{ alias: string | null; strategy: string; targets: Array<Record<string, unknown>> }> };
    const lonely = body.routes.find((r) => r.alias === 'lonely')!;
    expect(lonely.strategy).toBe('fallback');
    expect(lonely.targets[0]).toMatchObject({ model: 'only/m', state: 'cooling_down', in_flight: 0, keys: [] });
    expect(Date.parse(lonely.targets[0]!.cooldown_until as string)).toBeGreaterThan(Date.now());
    expect(lonely.targets[0]!.error_rate).toBeGreaterThan(0);
    const weighted = body.routes.find((r) => r.alias === 'weighted')!;
    expect(weighted.strategy).toBe('weighted');
    expect(weighted.targets.map((t) => [t.model, t.weight, t.state])).toEqual([['a/m', 3, 'healthy'], ['b/m', 1, 'healthy']]);
    expect(weighted.targets[0]!.latency_ms_p50).toEqual(expect.any(Number));
    // An agent key is no admin key.
    const agent = await fetch(`${gw.adminUrl}/route-health`, { headers: { authorization: `Bearer ${key}` } });
    expect(agent.status).toBe(401);
  });

  test('Prometheus series per target', async () => {
    const text = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.adminKey}` } })).text();
    expect(text).toMatch(/agentgw_route_target_cooling_down\{target="only\/m"\} 1/);
    expect(text).toMatch(/agentgw_route_target_cooling_down\{target="a\/m"\} 0/);
    expect(text).toMatch(/agentgw_route_target_error_rate\{target="dead\/m"\} 0\.\d+/);
    expect(text).toMatch(/agentgw_route_target_in_flight\{target="spare\/m"\} 0/);
  });
});
