// Redis counters that lose their state or their server (issue 23, items 3 and 4), on a Redis of the test's own.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type OwnRedis, startOwnRedis } from '../../test-support/own-redis.js';
import { RedisCounters } from './redis.js';
import { CountersUnavailableError, type ReserveRequest, type SeedRows } from './spec.js';

let redis: OwnRedis;
beforeAll(async () => {
  redis = await startOwnRedis();
});
afterAll(async () => redis?.cleanup());

const opened: RedisCounters[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
  if (!redis.running) await redis.start();
});

/** Several nodes on one Redis, reading the "usage rows" from `db` when they rebuild. */
function nodes(n: number, db: { day: number; traceCost: number }, loads: { count: number }) {
  const prefix = `agwtest:${randomUUID()}:`;
  const loadSeed = async (): Promise<SeedRows> => {
    loads.count++;
    await new Promise((r) => setTimeout(r, 20));
    return { now: new Date(), agents: [{ agentId: 'agt_1', day: db.day, month: db.day }], traces: [{ traceId: 'tr_1', cost: db.traceCost }] };
  };
  return Array.from({ length: n }, () => {
    const c = new RedisCounters({ url: redis.url, prefix, loadSeed, rebuildWaitMs: 2_000 });
    opened.push(c);
    return c;
  });
}

const req = (over: Partial<ReserveRequest> = {}): ReserveRequest => ({
  agentId: 'agt_1',
  traceId: 'tr_1',
  amount: 1,
  dailyLimit: 10,
  monthlyLimit: null,
  traceLimit: null,
  now: new Date(),
  ...over,
});

async function untilAnswering<T>(op: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await op();
    } catch (err) {
      if (!(err instanceof CountersUnavailableError) || i > 100) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

describe('Redis counters that lost their state', () => {
  it('rebuild from the usage rows before admitting: on several nodes at once, counted once', async () => {
    const db = { day: 0, traceCost: 0 };
    const loads = { count: 0 };
    const [a, b, c] = nodes(3, db, loads);
    await a.seed({ now: new Date(), agents: [], traces: [] });
    for (let i = 0; i < 6; i++) {
      const r = await a.reserve(req());
      if (!r.ok) throw new Error('refused');
      await a.settle(r.reservationId, 1);
    }
    db.day = 6;
    db.traceCost = 6;
    expect(await a.spend('agt_1', new Date())).toEqual({ day: 6, month: 6 });

    await redis.restartWithoutData();
    // Every node finds the epoch missing; each may rebuild, none counts the rows twice.
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => untilAnswering(() => [a, b, c][i % 3]!.reserve(req({ amount: 1, traceId: null })))),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(4);
    expect(loads.count).toBeGreaterThanOrEqual(1);
    expect(loads.count).toBeLessThanOrEqual(3);
    expect(await b.spend('agt_1', new Date())).toEqual({ day: 6, month: 6 });
    expect(await c.traceSpend('tr_1')).toBe(6);
  });

  it('adds, once, the cost of a hold made before the restart and settled after the rebuild', async () => {
    const db = { day: 2, traceCost: 2 };
    const [a, b] = nodes(2, db, { count: 0 });
    await a.seed({ now: new Date(), agents: [{ agentId: 'agt_1', day: 2, month: 2 }], traces: [{ traceId: 'tr_1', cost: 2 }] });
    const held = await a.reserve(req({ amount: 3 }));
    if (!held.ok) throw new Error('refused');
    await redis.restartWithoutData();
    // The rebuild (on b) reads 2 from the usage rows: the held request has not finished yet.
    const after = await untilAnswering(() => b.reserve(req({ amount: 0.5 })));
    expect(after.ok).toBe(true);
    expect(await a.settle(held.reservationId, 2.5)).toBe(true);
    expect(await a.settle(held.reservationId, 2.5)).toBe(false);
    expect(await a.release(held.reservationId)).toBe(false);
    // 2 from the rows + 2.5 settled; the 0.5 of the new hold is reserved, not spent.
    expect(await b.spend('agt_1', new Date())).toEqual({ day: 4.5, month: 4.5 });
    // 4.5 spent + 0.5 held: exactly 5 of the 10 are left.
    expect(await b.reserve(req({ amount: 5.01 }))).toMatchObject({ ok: false, which: 'daily' });
    expect((await b.reserve(req({ amount: 5 }))).ok).toBe(true);
  });

  it('rebuild the tenant pool from the usage rows too: agents of the tenant cannot take it over after a restart', async () => {
    const prefix = `agwtest:${randomUUID()}:`;
    const rows = { acme: 0 };
    const loadSeed = async (): Promise<SeedRows> => ({ now: new Date(), agents: [], traces: [], tenants: [{ tenantId: 'acme', day: rows.acme, month: rows.acme }] });
    const [a, b] = [0, 1].map(() => {
      const c = new RedisCounters({ url: redis.url, prefix, loadSeed, rebuildWaitMs: 2_000 });
      opened.push(c);
      return c;
    });
    const pool = { tenantId: 'acme', dailyLimit: 10, monthlyLimit: null };
    await a!.seed(await loadSeed());
    for (let i = 0; i < 6; i++) {
      const r = await a!.reserve(req({ agentId: `agt_${i}`, traceId: null, dailyLimit: null, tenant: pool }));
      if (!r.ok) throw new Error('refused');
      await a!.settle(r.reservationId, 1);
    }
    rows.acme = 6;
    await redis.restartWithoutData();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => untilAnswering(() => [a, b][i % 2]!.reserve(req({ agentId: `agt_${i % 10}`, traceId: null, dailyLimit: null, tenant: pool })))),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(4);
    expect(results.filter((r) => !r.ok && r.which === 'tenant_daily')).toHaveLength(16);
    expect(await b!.tenantSpend('acme', new Date())).toEqual({ day: 6, month: 6 });
  });

  it('without a seed source, a new Redis starts empty and works as before', async () => {
    const c = new RedisCounters({ url: redis.url, prefix: `agwtest:${randomUUID()}:` });
    opened.push(c);
    const r = await c.reserve(req());
    expect(r.ok).toBe(true);
  });
});

describe('Redis counters while Redis is away', () => {
  it('refuse at once (CountersUnavailableError), reserve nothing for a request no limit applies to, and work again when it is back', async () => {
    const [c] = nodes(1, { day: 0, traceCost: 0 }, { count: 0 });
    await c!.seed({ now: new Date(), agents: [], traces: [] });
    const held = await c!.reserve(req());
    if (!held.ok) throw new Error('refused');
    await redis.stop();
    const started = performance.now();
    await expect(c!.reserve(req())).rejects.toBeInstanceOf(CountersUnavailableError);
    await expect(c!.rateLimit({ agentId: 'agt_1', rpm: 10, tpm: null, tokens: 1, now: new Date() })).rejects.toBeInstanceOf(CountersUnavailableError);
    await expect(c!.countRepeat({ key: 'k', windowSeconds: 10, now: new Date() })).rejects.toBeInstanceOf(CountersUnavailableError);
    await expect(c!.spend('agt_1', new Date())).rejects.toBeInstanceOf(CountersUnavailableError);
    await expect(c!.settle(held.reservationId, 1)).rejects.toBeInstanceOf(CountersUnavailableError);
    console.log(`5 refusals while Redis is down: ${(performance.now() - started).toFixed(1)} ms in all`);
    const free = await c!.reserve(req({ dailyLimit: null }));
    expect(free.ok).toBe(true);
    if (free.ok) expect(await c!.release(free.reservationId)).toBe(true);

    await redis.start();
    const back = await untilAnswering(() => c!.reserve(req()));
    expect(back.ok).toBe(true);
  });
});
