// Issue 23, items 3 and 4: a Redis of the test's own (never the shared one on 6379) that loses its data or goes away.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ErrorBody } from '../../contract/index.js';
import { adminApi } from '../../test-support/admin-api.js';
import { adminClient } from '../../test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from '../../test-support/fake-openai.js';
import { startTestGateway, type TestGateway } from '../../test-support/gateway.js';
import { type OwnRedis, startOwnRedis } from '../../test-support/own-redis.js';

// gpt-4o-mini: $0.15 / $0.60 per million; the fake upstream bills ceil(len(messages JSON) / 4) prompt tokens and 7 completion tokens.
const BODY = { model: 'openai/gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] };
const COST_PER_REQUEST = (Math.ceil(JSON.stringify(BODY.messages).length / 4) * 0.15 + 7 * 0.6) / 1e6;
/** A hang must fail the test, not stall it: every request gives up after this long. */
const REQUEST_TIMEOUT_MS = 3_000;

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  ms: number;
}

async function chat(gw: TestGateway, key: string, traceId?: string): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(traceId ? { 'x-agent-trace-id': traceId } : {}) },
    body: JSON.stringify(BODY),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const body = await res.json();
  return { status: res.status, headers: res.headers, body, ms: performance.now() - started };
}

async function admin(gw: TestGateway, path: string): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${gw.adminUrl}${path}`, { headers: { authorization: `Bearer ${gw.adminKey}` }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  return { status: res.status, headers: res.headers, body: await res.json(), ms: performance.now() - started };
}

async function recordedCost(gw: TestGateway, agentId: string): Promise<number> {
  await gw.runtime.dataPlane.usage.flush();
  const usage = await adminClient(gw.adminUrl, gw.adminKey).call('GET', '/usage?group_by=agent');
  return usage.data.find((r: { key: string }) => r.key === agentId)?.cost ?? 0;
}

/** The agent's spend from the admin interface, once the counters answer again (503 store_unavailable until then). */
async function spendWhenBack(gw: TestGateway, agentId: string): Promise<{ day: number; month: number }> {
  for (let i = 0; ; i++) {
    const r = await admin(gw, `/agents/${agentId}`);
    if (r.status === 200 || i >= 40) {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body as { spend: { day: number; month: number } }).spend;
    }
    expectStoreUnavailable(r);
    await sleep(50);
  }
}

const code = (a: Answer) => (a.body as ErrorBody).error?.code;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const summary = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(1);
  return `n=${s.length} p50=${at(0.5)} ms p95=${at(0.95)} max=${s[s.length - 1]!.toFixed(1)} ms`;
};

function expectStoreUnavailable(a: Answer) {
  expect(a.status, JSON.stringify(a.body)).toBe(503);
  expect(code(a)).toBe('store_unavailable');
  expect((a.body as ErrorBody).error.type).toBe('service_unavailable');
  expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0);
}

let upstream: FakeOpenAI;
let redis: OwnRedis;
beforeAll(async () => {
  // A little upstream time keeps requests in flight while Redis goes away.
  upstream = await startFakeOpenAI({ delayMs: 5 });
  redis = await startOwnRedis();
});
afterAll(async () => {
  await upstream?.close();
  await redis?.cleanup();
});

async function gateway(): Promise<TestGateway> {
  if (!redis.running) await redis.start();
  return startTestGateway({
    config: {
      providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk' } },
      counters: { kind: 'redis', url: redis.url },
    },
  });
}

describe('Redis restarted without its data (item 3)', () => {
  test('an agent with a daily budget never gets past it: the counters are rebuilt from the usage rows first', async () => {
    const gw = await gateway();
    try {
      const a = adminClient(gw.adminUrl, gw.adminKey);
      await a.tenant('acme');
      const budget = Number((COST_PER_REQUEST * 20).toFixed(10));
      await a.policy('daily', { tenant_id: 'acme', daily_budget: budget });
      const agent = await a.agent('acme', 'bot', 'daily');
      const statuses = new Map<number, number>();
      let ok = 0;
      let restarted: Promise<void> | undefined;
      // 4 clients in a loop, one trace each; Redis restarts (empty) once about half the budget is spent.
      const worker = async (w: number) => {
        let refused = 0;
        for (let i = 0; i < 150 && refused < 3; i++) {
          const r = await chat(gw, agent.api_key, `trace-${w}`);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (r.status === 200 && ++ok === 6) {
            // This client waits for the restart; the others keep sending through it.
            restarted = redis.restartWithoutData();
            await restarted;
          }
          if (r.status === 429) {
            expect(code(r)).toBe('daily_budget_exceeded');
            refused++;
          }
          if (r.status === 503) {
            expectStoreUnavailable(r);
            await sleep(20);
          }
        }
      };
      await Promise.all([0, 1, 2, 3].map(worker));
      await restarted;
      const spent = await recordedCost(gw, agent.id);
      console.log(`restart mid-run: ${JSON.stringify(Object.fromEntries(statuses))}, spent $${spent.toFixed(10)} of $${budget} (${((spent / budget) * 100).toFixed(0)}%)`);
      expect(restarted).toBeDefined();
      expect([...statuses.keys()].every((s) => s === 200 || s === 429 || s === 503)).toBe(true);
      expect(statuses.get(429)).toBeGreaterThan(0);
      expect(spent).toBeLessThanOrEqual(budget + 1e-12);
      // What the admin interface shows after the rebuild is what the usage rows hold (settles of holds made before
      // the restart are added once, never lost).
      const shown = (await spendWhenBack(gw, agent.id)).day;
      expect(shown).toBeGreaterThanOrEqual(spent - 1e-12);
      expect(shown).toBeLessThanOrEqual(budget + 1e-12);
    } finally {
      await gw.close();
    }
  }, 60_000);

  test('a second restart while idle: the first budgeted request waits for the rebuild (or gets a 503), never passes unchecked', async () => {
    const gw = await gateway();
    try {
      const a = adminClient(gw.adminUrl, gw.adminKey);
      await a.tenant('acme');
      const budget = Number((COST_PER_REQUEST * 10).toFixed(10));
      await a.policy('daily', { tenant_id: 'acme', daily_budget: budget, monthly_budget: 100 });
      const agent = await a.agent('acme', 'bot', 'daily');
      // Spend the budget (the worst case reserved is about twice the cost, so about 5 requests pass).
      let passed = 0;
      for (let r = await chat(gw, agent.api_key); r.status !== 429; r = await chat(gw, agent.api_key)) {
        expect(r.status).toBe(200);
        passed++;
      }
      expect(passed).toBeGreaterThanOrEqual(3);
      await gw.runtime.dataPlane.usage.flush();
      for (let round = 0; round < 2; round++) {
        await redis.restartWithoutData();
        const answers: Answer[] = [];
        for (let i = 0; i < 20; i++) {
          const r = await chat(gw, agent.api_key);
          answers.push(r);
          if (r.status === 503) expectStoreUnavailable(r);
          else expect(r.status).toBe(429);
          if (r.status === 429) break;
          await sleep(50);
        }
        console.log(`restart ${round + 1} while idle: ${answers.map((r) => `${r.status} in ${r.ms.toFixed(0)} ms`).join(', ')}`);
        expect(answers[answers.length - 1]!.status).toBe(429);
      }
      expect(await recordedCost(gw, agent.id)).toBeLessThanOrEqual(budget + 1e-12);
    } finally {
      await gw.close();
    }
  }, 60_000);
});

describe('Redis away (item 4)', () => {
  test('stopped: budgeted and rate-limited requests get 503 store_unavailable with Retry-After at once, unlimited ones are served, admin spend is 503; back: all works', async () => {
    const gw = await gateway();
    const api = adminApi(gw.adminUrl, gw.adminKey);
    try {
      const a = adminClient(gw.adminUrl, gw.adminKey);
      await a.tenant('acme');
      await a.policy('budgeted', { tenant_id: 'acme', daily_budget: 10 });
      await a.policy('rated', { tenant_id: 'acme', rules: { rpm: 1000 } });
      await a.policy('looped', { tenant_id: 'acme', rules: { retry_block: { max_repeats: 1000, window_seconds: 60 } } });
      const budgeted = await a.agent('acme', 'budgeted', 'budgeted');
      const rated = await a.agent('acme', 'rated', 'rated');
      const looped = await a.agent('acme', 'looped', 'looped');
      const free = await a.agent('acme', 'free');
      for (const ag of [budgeted, rated, looped, free]) expect((await chat(gw, ag.api_key)).status).toBe(200);
      const healthy: number[] = [];
      for (let i = 0; i < 20; i++) healthy.push((await chat(gw, budgeted.api_key)).ms);

      await redis.stop();
      const refused: number[] = [];
      for (let i = 0; i < 30; i++) {
        const r = await chat(gw, budgeted.api_key);
        expectStoreUnavailable(r);
        refused.push(r.ms);
      }
      for (const ag of [rated, looped]) expectStoreUnavailable(await chat(gw, ag.api_key));
      const served: number[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await chat(gw, free.api_key);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        served.push(r.ms);
      }
      const spendRead = await admin(gw, `/agents/${budgeted.id}`);
      expectStoreUnavailable(spendRead);
      expect((await api('GET', `/agents/${budgeted.id}`)).status).toBe(503);
      // Everything else of the admin interface works without Redis.
      expect((await api('GET', '/agents')).status).toBe(200);
      console.log(`redis up, budgeted 200: ${summary(healthy)}`);
      console.log(`redis stopped, budgeted 503: ${summary(refused)}; unlimited 200: ${summary(served)}; admin spend 503 in ${spendRead.ms.toFixed(1)} ms`);

      await redis.start();
      let back: Answer | undefined;
      const started = performance.now();
      for (let i = 0; i < 100; i++) {
        back = await chat(gw, budgeted.api_key);
        if (back.status === 200) break;
        expectStoreUnavailable(back);
        await sleep(50);
      }
      console.log(`redis back (empty): first budgeted 200 after ${(performance.now() - started).toFixed(0)} ms`);
      expect(back?.status).toBe(200);
      for (const ag of [rated, looped, free]) expect((await chat(gw, ag.api_key)).status).toBe(200);
      // The spend shown is rebuilt from the usage rows (this Redis came back empty) and counts what was served since.
      const spend = await spendWhenBack(gw, budgeted.id);
      expect(spend.day).toBeCloseTo(await recordedCost(gw, budgeted.id), 10);
      const freeSpend = await spendWhenBack(gw, free.id);
      expect(freeSpend.day).toBeCloseTo(await recordedCost(gw, free.id), 10);
    } finally {
      if (!redis.running) await redis.start();
      await gw.close();
    }
  }, 60_000);

  test('a node that starts while Redis is down starts, serves what needs no counters, and checks budgets once Redis is there', async () => {
    await redis.stop();
    const started = performance.now();
    const gw = await startTestGateway({
      config: {
        providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk' } },
        counters: { kind: 'redis', url: redis.url },
      },
    });
    try {
      console.log(`start with Redis down: ${(performance.now() - started).toFixed(0)} ms`);
      const a = adminClient(gw.adminUrl, gw.adminKey);
      await a.tenant('acme');
      await a.policy('budgeted', { tenant_id: 'acme', daily_budget: 10 });
      const budgeted = await a.agent('acme', 'budgeted', 'budgeted');
      const free = await a.agent('acme', 'free');
      expectStoreUnavailable(await chat(gw, budgeted.api_key));
      expect((await chat(gw, free.api_key)).status).toBe(200);
      await redis.start();
      let back: Answer | undefined;
      for (let i = 0; i < 60 && back?.status !== 200; i++) {
        if (i > 0) await sleep(50);
        back = await chat(gw, budgeted.api_key);
        if (back.status !== 200) expectStoreUnavailable(back);
      }
      expect(back?.status).toBe(200);
      // The unlimited request served while Redis was down is in the usage rows, so in the rebuilt spend.
      expect((await spendWhenBack(gw, free.id)).day).toBeCloseTo(await recordedCost(gw, free.id), 10);
    } finally {
      await gw.close();
    }
  }, 60_000);

  test('hung (SIGSTOP): requests that need counters get 503 after the command timeout, then at once while the breaker is open', async () => {
    const gw = await gateway();
    try {
      const a = adminClient(gw.adminUrl, gw.adminKey);
      await a.tenant('acme');
      await a.policy('budgeted', { tenant_id: 'acme', daily_budget: 10 });
      const budgeted = await a.agent('acme', 'budgeted', 'budgeted');
      const free = await a.agent('acme', 'free');
      expect((await chat(gw, budgeted.api_key)).status).toBe(200);
      redis.pause();
      const refused: number[] = [];
      try {
        // Concurrent, as under load: all of them time out together, then the breaker answers.
        const first = await Promise.all(Array.from({ length: 10 }, () => chat(gw, budgeted.api_key)));
        for (const r of first) expectStoreUnavailable(r);
        for (let i = 0; i < 20; i++) {
          const r = await chat(gw, budgeted.api_key);
          expectStoreUnavailable(r);
          refused.push(r.ms);
        }
        expect((await chat(gw, free.api_key)).status).toBe(200);
        expectStoreUnavailable(await admin(gw, `/agents/${budgeted.id}`));
        console.log(`redis hung: first 10 concurrent 503: ${summary(first.map((r) => r.ms))}; then 503: ${summary(refused)}`);
      } finally {
        redis.resume();
      }
      let back: Answer | undefined;
      for (let i = 0; i < 60; i++) {
        back = await chat(gw, budgeted.api_key);
        if (back.status === 200) break;
        expectStoreUnavailable(back);
        await sleep(50);
      }
      expect(back?.status).toBe(200);
    } finally {
      await gw.close();
    }
  }, 60_000);
});
