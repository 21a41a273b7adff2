import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MemoryCounters } from './memory.js';
import { RedisCounters } from './redis.js';
import type { CounterOptions, Counters, ReserveRequest } from './spec.js';

const REDIS_URL = process.env.AGENTGW_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Redis tests skip only when no URL was given and the default server is not there. */
async function redisReachable(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  try {
    await probe.connect();
    await probe.ping();
    return true;
  } catch {
    // The Redis implementation is tested against a real server, never skipped.
    throw new Error(`Redis at ${REDIS_URL} is not reachable: start it or set AGENTGW_TEST_REDIS_URL`);
  } finally {
    probe.disconnect();
  }
}
const haveRedis = await redisReachable();

const admin = haveRedis ? new Redis(REDIS_URL) : undefined;
const opened: Counters[] = [];
const prefixes: string[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
  for (const prefix of prefixes.splice(0)) {
    const keys = await admin!.keys(`${prefix}*`);
    if (keys.length) await admin!.del(...keys);
  }
});
afterAll(async () => {
  await admin?.quit();
});

interface Impl {
  name: string;
  /** Counters on one shared state; `nodes` > 1 gives separate clients (Redis) to mimic several gateway nodes. */
  make(options?: CounterOptions, nodes?: number): Counters[];
}

const memory: Impl = {
  name: 'memory',
  make(options) {
    const c = new MemoryCounters(options);
    opened.push(c);
    return [c];
  },
};

const redis: Impl = {
  name: 'redis',
  make(options, nodes = 1) {
    const prefix = `agwtest:${randomUUID()}:`;
    prefixes.push(prefix);
    return Array.from({ length: nodes }, () => {
      const c = new RedisCounters({ ...options, url: REDIS_URL, prefix });
      opened.push(c);
      return c;
    });
  },
};

const impls = haveRedis ? [memory, redis] : [memory];

const T0 = new Date('2025-01-31T12:00:00Z');
const minutes = (n: number, from = T0) => new Date(from.getTime() + n * 60_000);
const seconds = (n: number, from = T0) => new Date(from.getTime() + n * 1000);

function request(over: Partial<ReserveRequest> = {}): ReserveRequest {
  return { agentId: 'agt_1', traceId: 'tr_1', amount: 0.1, dailyLimit: 1, monthlyLimit: 10, traceLimit: null, now: T0, ...over };
}

async function reserveId(c: Counters, over: Partial<ReserveRequest> = {}): Promise<string> {
  const r = await c.reserve(request(over));
  if (!r.ok) throw new Error(`expected a reservation, got ${JSON.stringify(r)}`);
  return r.reservationId;
}

describe.each(impls.map((impl) => [impl.name, impl] as const))('%s counters', (_name, impl) => {
  describe('budgets', () => {
    it('records the actual cost on settle, not the reservation', async () => {
      const [c] = impl.make();
      const id = await reserveId(c, { amount: 0.5 });
      expect(await c.spend('agt_1', T0)).toEqual({ day: 0, month: 0 });
      expect(await c.settle(id, 0.2)).toBe(true);
      expect(await c.spend('agt_1', T0)).toEqual({ day: 0.2, month: 0.2 });
      expect(await c.traceSpend('tr_1')).toBe(0.2);
      expect(await c.spend('agt_2', T0)).toEqual({ day: 0, month: 0 });
      expect(await c.traceSpend('tr_other')).toBe(0);
    });

    it('records a cost above the reservation', async () => {
      const [c] = impl.make();
      await c.settle(await reserveId(c, { amount: 0.1 }), 0.7);
      expect(await c.spend('agt_1', T0)).toEqual({ day: 0.7, month: 0.7 });
      expect((await c.reserve(request({ amount: 0.3 }))).ok).toBe(true);
      expect(await c.reserve(request({ amount: 0.0000000001 }))).toMatchObject({ ok: false, which: 'daily' });
    });

    it('counts open reservations against the limit until released', async () => {
      const [c] = impl.make();
      const first = await reserveId(c, { amount: 0.6 });
      expect(await c.reserve(request({ amount: 0.6 }))).toMatchObject({ ok: false, which: 'daily', limit: 1, used: 0.6 });
      expect(await c.release(first)).toBe(true);
      expect((await c.reserve(request({ amount: 0.6 }))).ok).toBe(true);
      expect(await c.spend('agt_1', T0)).toEqual({ day: 0, month: 0 });
    });

    it('settles and releases once', async () => {
      const [c] = impl.make();
      const id = await reserveId(c, { amount: 0.5 });
      expect(await c.settle(id, 0.3)).toBe(true);
      expect(await c.settle(id, 0.3)).toBe(false);
      expect(await c.release(id)).toBe(false);
      expect(await c.spend('agt_1', T0)).toEqual({ day: 0.3, month: 0.3 });
      const other = await reserveId(c, { amount: 0.5 });
      expect(await c.release(other)).toBe(true);
      expect(await c.release(other)).toBe(false);
      expect(await c.settle(other, 1)).toBe(false);
      expect(await c.settle('no-such-reservation', 1)).toBe(false);
      // 0.3 spent, nothing held: exactly 0.7 is left.
      expect((await c.reserve(request({ amount: 0.7 }))).ok).toBe(true);
    });

    it('checks daily, then monthly, then trace limits', async () => {
      const [c] = impl.make();
      expect(await c.reserve(request({ amount: 2, dailyLimit: 1, monthlyLimit: 1, traceLimit: 1 }))).toEqual({
        ok: false,
        which: 'daily',
        resetAt: new Date('2025-02-01T00:00:00Z'),
        limit: 1,
        used: 0,
      });
      expect(await c.reserve(request({ amount: 2, dailyLimit: null, monthlyLimit: 1, traceLimit: 1 }))).toMatchObject({
        ok: false,
        which: 'monthly',
        resetAt: new Date('2025-02-01T00:00:00Z'),
      });
      expect(await c.reserve(request({ amount: 2, dailyLimit: null, monthlyLimit: null, traceLimit: 1 }))).toMatchObject({
        ok: false,
        which: 'trace',
        resetAt: null,
      });
      expect((await c.reserve(request({ amount: 2, dailyLimit: null, monthlyLimit: null, traceLimit: null }))).ok).toBe(true);
    });

    it('keeps traces apart and skips trace accounting without a trace', async () => {
      const [c] = impl.make();
      await c.settle(await reserveId(c, { traceId: 'tr_a', amount: 0.4, traceLimit: 0.5 }), 0.4);
      expect(await c.reserve(request({ traceId: 'tr_a', amount: 0.2, traceLimit: 0.5 }))).toMatchObject({ ok: false, which: 'trace' });
      expect((await c.reserve(request({ traceId: 'tr_b', amount: 0.2, traceLimit: 0.5 }))).ok).toBe(true);
      await c.settle(await reserveId(c, { traceId: null, amount: 0.1 }), 0.1);
      expect(await c.traceSpend('tr_a')).toBe(0.4);
      expect(await c.spend('agt_1', T0)).toEqual({ day: 0.5, month: 0.5 });
    });

    it('applies the trace limit to a trace of one request', async () => {
      const [c] = impl.make();
      expect(await c.reserve(request({ traceId: null, amount: 0.6, traceLimit: 0.5 }))).toEqual({ ok: false, which: 'trace', resetAt: null, limit: 0.5, used: 0 });
      expect(await c.reserve(request({ traceId: null, amount: 2, traceLimit: 0.5 }))).toMatchObject({ ok: false, which: 'daily' });
      await c.settle(await reserveId(c, { traceId: null, amount: 0.5, traceLimit: 0.5 }), 0.5);
      expect((await c.reserve(request({ traceId: null, amount: 0.5, traceLimit: 0.5 }))).ok).toBe(true);
    });

    it('treats a zero limit as nothing allowed and sums money exactly', async () => {
      const [c] = impl.make();
      expect(await c.reserve(request({ amount: 0.01, dailyLimit: 0 }))).toMatchObject({ ok: false, which: 'daily' });
      for (const cost of [0.1, 0.2]) await c.settle(await reserveId(c, { amount: cost, dailyLimit: 0.3 }), cost);
      expect(await c.spend('agt_1', T0)).toEqual({ day: 0.3, month: 0.3 });
      expect((await c.reserve(request({ amount: 0, dailyLimit: 0.3 }))).ok).toBe(true);
      expect(await c.reserve(request({ amount: 1e-10, dailyLimit: 0.3 }))).toMatchObject({ ok: false, which: 'daily' });
    });

    it('rejects negative or non-finite amounts', async () => {
      const [c] = impl.make();
      await expect(c.reserve(request({ amount: -1 }))).rejects.toThrow(RangeError);
      await expect(c.reserve(request({ amount: Number.NaN }))).rejects.toThrow(RangeError);
    });

    it('starts a new day at UTC midnight and a new month on the 1st', async () => {
      const [c] = impl.make();
      const lastMinute = new Date('2025-01-31T23:59:00Z');
      await c.settle(await reserveId(c, { amount: 1, now: lastMinute, monthlyLimit: 1.5 }), 1);
      expect(await c.reserve(request({ amount: 0.1, now: lastMinute, monthlyLimit: 1.5 }))).toMatchObject({
        ok: false,
        which: 'daily',
        resetAt: new Date('2025-02-01T00:00:00Z'),
      });
      const nextDay = new Date('2025-02-01T00:00:01Z');
      expect(await c.spend('agt_1', nextDay)).toEqual({ day: 0, month: 0 });
      await c.settle(await reserveId(c, { amount: 1, now: nextDay, monthlyLimit: 1.5 }), 1);
      expect(await c.spend('agt_1', nextDay)).toEqual({ day: 1, month: 1 });
      expect(await c.spend('agt_1', lastMinute)).toEqual({ day: 1, month: 1 });

      // Within one month the monthly limit carries across days.
      const feb2 = new Date('2025-02-02T10:00:00Z');
      expect(await c.reserve(request({ amount: 0.6, now: feb2, monthlyLimit: 1.5 }))).toMatchObject({
        ok: false,
        which: 'monthly',
        resetAt: new Date('2025-03-01T00:00:00Z'),
      });
      expect((await c.reserve(request({ amount: 0.5, now: feb2, monthlyLimit: 1.5 }))).ok).toBe(true);
    });

    it('charges a reservation made before midnight to the day it was made', async () => {
      const [c] = impl.make();
      const before = new Date('2025-03-31T23:59:59Z');
      const id = await reserveId(c, { amount: 0.5, now: before });
      expect((await c.reserve(request({ amount: 1, now: new Date('2025-04-01T00:00:01Z') }))).ok).toBe(true);
      await c.settle(id, 0.4);
      expect(await c.spend('agt_1', before)).toEqual({ day: 0.4, month: 0.4 });
      expect(await c.spend('agt_1', new Date('2025-04-01T12:00:00Z'))).toEqual({ day: 0, month: 0 });
    });

    it('expires reservations nobody settles, and still records a late settle once', async () => {
      const [c] = impl.make();
      const stale = await reserveId(c, { amount: 0.8 });
      expect(await c.reserve(request({ amount: 0.5, now: minutes(5) }))).toMatchObject({ ok: false, which: 'daily' });
      expect(await c.reserve(request({ amount: 0.5, now: minutes(9.9) }))).toMatchObject({ ok: false, which: 'daily' });
      const fresh = await reserveId(c, { amount: 0.5, now: minutes(10) });
      expect(await c.settle(stale, 0.3)).toBe(true);
      expect(await c.settle(stale, 0.3)).toBe(false);
      expect(await c.spend('agt_1', T0)).toEqual({ day: 0.3, month: 0.3 });
      // 0.3 spent + 0.5 held: exactly 0.2 left, and the expired hold is not taken off twice.
      expect((await c.reserve(request({ amount: 0.2, now: minutes(11) }))).ok).toBe(true);
      expect(await c.reserve(request({ amount: 1e-10, now: minutes(11) }))).toMatchObject({ ok: false, which: 'daily' });
      await c.release(fresh);
    });

    it('takes the hold lifetime from the options', async () => {
      const [c] = impl.make({ reservationTtlMs: 1000 });
      await reserveId(c, { amount: 1 });
      expect((await c.reserve(request({ amount: 1, now: seconds(0.5) }))).ok).toBe(false);
      expect((await c.reserve(request({ amount: 1, now: seconds(1) }))).ok).toBe(true);
    });

    it('restores spend from seed rows', async () => {
      const [c] = impl.make();
      await c.seed({ now: T0, agents: [{ agentId: 'agt_1', day: 0.4, month: 2 }], traces: [{ traceId: 'tr_1', cost: 0.25 }] });
      expect(await c.spend('agt_1', T0)).toEqual({ day: 0.4, month: 2 });
      expect(await c.traceSpend('tr_1')).toBe(0.25);
      expect(await c.reserve(request({ amount: 0.2, dailyLimit: 0.5 }))).toMatchObject({ ok: false, which: 'daily', used: 0.4 });
      expect(await c.reserve(request({ amount: 0.1, dailyLimit: null, monthlyLimit: 2.05 }))).toMatchObject({ ok: false, which: 'monthly' });
      expect(await c.reserve(request({ amount: 0.3, dailyLimit: null, traceLimit: 0.5 }))).toMatchObject({ ok: false, which: 'trace' });
    });

    it('grants exactly the budget to concurrent reservations', async () => {
      const nodes = impl.make(undefined, 2);
      const results = await Promise.all(
        Array.from({ length: 500 }, (_, i) => nodes[i % nodes.length].reserve(request({ amount: 0.01, dailyLimit: 0.5, traceId: null }))),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(50);
      expect(results.filter((r) => !r.ok && r.which === 'daily')).toHaveLength(450);
    });

    it('settles concurrently without losing spend', async () => {
      const nodes = impl.make(undefined, 2);
      const ids = await Promise.all(Array.from({ length: 200 }, (_, i) => reserveId(nodes[i % nodes.length], { amount: 0.01, dailyLimit: 5 })));
      await Promise.all(ids.map((id, i) => nodes[(i + 1) % nodes.length].settle(id, 0.005)));
      expect(await nodes[0].spend('agt_1', T0)).toEqual({ day: 1, month: 1 });
      expect(await nodes[0].traceSpend('tr_1')).toBe(1);
      // Nothing is held any more: 4 of 5 are left.
      expect((await nodes[0].reserve(request({ amount: 4, dailyLimit: 5 }))).ok).toBe(true);
    });
  });

  describe('tenant pool', () => {
    // One pool shared by every agent of the tenant, on top of each agent's own budgets (CONTRACT "Tenant budgets").
    const pool = (dailyLimit: number | null, monthlyLimit: number | null = null, tenantId = 'acme') => ({ tenantId, dailyLimit, monthlyLimit });
    const agentOf = (i: number) => `agt_${i}`;

    it('is shared by the agents of a tenant and refuses with the tenant window, its limit and what is used', async () => {
      const [c] = impl.make();
      await c.settle(await reserveId(c, { agentId: agentOf(1), amount: 0.4, tenant: pool(1, 10) }), 0.4);
      await reserveId(c, { agentId: agentOf(2), amount: 0.5, tenant: pool(1, 10) });
      // Each agent is far from its own daily limit of 1; together they have used 0.9 of the tenant's 1.
      expect(await c.reserve(request({ agentId: agentOf(3), amount: 0.2, tenant: pool(1, 10) }))).toEqual({
        ok: false,
        which: 'tenant_daily',
        resetAt: new Date('2025-02-01T00:00:00Z'),
        limit: 1,
        used: 0.9,
      });
      expect(await c.reserve(request({ agentId: agentOf(3), amount: 0.2, tenant: pool(null, 0.95) }))).toMatchObject({
        ok: false,
        which: 'tenant_monthly',
        resetAt: new Date('2025-02-01T00:00:00Z'),
        limit: 0.95,
      });
      expect((await c.reserve(request({ agentId: agentOf(3), amount: 0.1, tenant: pool(1, 10) }))).ok).toBe(true);
      // Another tenant has a pool of its own.
      expect((await c.reserve(request({ agentId: agentOf(4), amount: 0.9, tenant: pool(1, 10, 'globex') }))).ok).toBe(true);
      expect(await c.tenantSpend('acme', T0)).toEqual({ day: 0.4, month: 0.4 });
      expect(await c.tenantSpend('globex', T0)).toEqual({ day: 0, month: 0 });
    });

    it('is checked after the agent daily, monthly and trace limits (CONTRACT order), tenant daily before monthly', async () => {
      const [c] = impl.make();
      const all = { amount: 2, dailyLimit: 1, monthlyLimit: 1, traceLimit: 1, tenant: pool(1, 1) };
      expect(await c.reserve(request(all))).toMatchObject({ ok: false, which: 'daily' });
      expect(await c.reserve(request({ ...all, dailyLimit: null }))).toMatchObject({ ok: false, which: 'monthly' });
      expect(await c.reserve(request({ ...all, dailyLimit: null, monthlyLimit: null }))).toMatchObject({ ok: false, which: 'trace' });
      // A trace of one request: its limit applies to it alone, still before the tenant's.
      expect(await c.reserve(request({ ...all, dailyLimit: null, monthlyLimit: null, traceId: null }))).toMatchObject({ ok: false, which: 'trace' });
      expect(await c.reserve(request({ ...all, dailyLimit: null, monthlyLimit: null, traceLimit: null }))).toMatchObject({ ok: false, which: 'tenant_daily' });
      expect(await c.reserve(request({ ...all, dailyLimit: null, monthlyLimit: null, traceLimit: null, tenant: pool(null, 1) }))).toMatchObject({
        ok: false,
        which: 'tenant_monthly',
        resetAt: new Date('2025-02-01T00:00:00Z'),
      });
      expect((await c.reserve(request({ amount: 2, dailyLimit: null, monthlyLimit: null, traceLimit: null, tenant: pool(null, null) }))).ok).toBe(true);
    });

    it('a refusal by any window holds nothing in the others', async () => {
      const [c] = impl.make();
      expect(await c.reserve(request({ amount: 0.6, dailyLimit: 0.5, tenant: pool(1) }))).toMatchObject({ ok: false, which: 'daily' });
      expect(await c.reserve(request({ agentId: agentOf(2), amount: 0.6, dailyLimit: 5, tenant: pool(0.5) }))).toMatchObject({ ok: false, which: 'tenant_daily' });
      // Neither refusal left a hold behind: the whole pool and the first agent's whole day are still there.
      expect((await c.reserve(request({ amount: 0.5, dailyLimit: 0.5, tenant: pool(0.5) }))).ok).toBe(true);
    });

    it('records spend without limits, releases holds, settles once, and expires holds nobody settles', async () => {
      const [c] = impl.make({ reservationTtlMs: 60_000 });
      // No limit at all (Redis makes no round trip to reserve): the cost still reaches the tenant at settle.
      await c.settle(await reserveId(c, { amount: 0.3, dailyLimit: null, monthlyLimit: null, tenant: pool(null) }), 0.25);
      expect(await c.tenantSpend('acme', T0)).toEqual({ day: 0.25, month: 0.25 });
      const released = await reserveId(c, { agentId: agentOf(2), amount: 0.5, tenant: pool(1) });
      expect(await c.release(released)).toBe(true);
      const settled = await reserveId(c, { agentId: agentOf(3), amount: 0.5, tenant: pool(1) });
      expect(await c.settle(settled, 0.5)).toBe(true);
      expect(await c.settle(settled, 0.5)).toBe(false);
      expect(await c.tenantSpend('acme', T0)).toEqual({ day: 0.75, month: 0.75 });
      // 0.75 spent: a hold of 0.25 fills the pool until it expires.
      await reserveId(c, { agentId: agentOf(4), amount: 0.25, tenant: pool(1) });
      expect(await c.reserve(request({ agentId: agentOf(5), amount: 1e-10, tenant: pool(1) }))).toMatchObject({ ok: false, which: 'tenant_daily', used: 1 });
      expect((await c.reserve(request({ agentId: agentOf(5), amount: 0.25, tenant: pool(1), now: minutes(1) }))).ok).toBe(true);
    });

    it('keeps a tenant and an agent of the same id apart', async () => {
      const [c] = impl.make();
      await c.settle(await reserveId(c, { agentId: 'twin', amount: 0.5, tenant: pool(null, null, 'other') }), 0.5);
      await c.settle(await reserveId(c, { agentId: 'agt_9', amount: 0.2, tenant: pool(null, null, 'twin') }), 0.2);
      expect(await c.spend('twin', T0)).toEqual({ day: 0.5, month: 0.5 });
      expect(await c.tenantSpend('twin', T0)).toEqual({ day: 0.2, month: 0.2 });
    });

    it('starts a new day at UTC midnight and a new month on the 1st; a hold counts in the day it was made', async () => {
      const [c] = impl.make();
      const lastMinute = new Date('2025-01-31T23:59:00Z');
      const held = await reserveId(c, { amount: 0.5, now: lastMinute, tenant: pool(1, 1.5) });
      const nextDay = new Date('2025-02-01T00:00:01Z');
      expect((await c.reserve(request({ agentId: agentOf(2), amount: 1, now: nextDay, tenant: pool(1, 1.5) }))).ok).toBe(true);
      await c.settle(held, 0.4);
      expect(await c.tenantSpend('acme', lastMinute)).toEqual({ day: 0.4, month: 0.4 });
      expect(await c.tenantSpend('acme', nextDay)).toEqual({ day: 0, month: 0 });
    });

    it('restores tenant spend from seed rows', async () => {
      const [c] = impl.make();
      await c.seed({ now: T0, agents: [], traces: [], tenants: [{ tenantId: 'acme', day: 0.7, month: 3 }] });
      expect(await c.tenantSpend('acme', T0)).toEqual({ day: 0.7, month: 3 });
      expect(await c.reserve(request({ agentId: agentOf(2), amount: 0.4, tenant: pool(1) }))).toMatchObject({ ok: false, which: 'tenant_daily', used: 0.7 });
      expect(await c.reserve(request({ agentId: agentOf(2), amount: 0.1, tenant: pool(null, 3.05) }))).toMatchObject({ ok: false, which: 'tenant_monthly' });
      expect((await c.reserve(request({ agentId: agentOf(2), amount: 0.3, tenant: pool(1) }))).ok).toBe(true);
    });

    it('grants exactly the pool to 500 concurrent reservations from 10 agents (2 nodes for Redis)', async () => {
      const nodes = impl.make(undefined, 2);
      const results = await Promise.all(
        Array.from({ length: 500 }, (_, i) =>
          nodes[i % nodes.length].reserve(request({ agentId: agentOf(i % 10), traceId: null, amount: 0.01, dailyLimit: 5, monthlyLimit: null, tenant: pool(0.5) })),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(50);
      expect(results.filter((r) => !r.ok && r.which === 'tenant_daily')).toHaveLength(450);
      const ids = results.flatMap((r) => (r.ok ? [r.reservationId] : []));
      await Promise.all(ids.map((id, i) => nodes[(i + 1) % nodes.length].settle(id, 0.01)));
      expect(await nodes[0].tenantSpend('acme', T0)).toEqual({ day: 0.5, month: 0.5 });
    });
  });

  describe('rate limits', () => {
    const limits = { agentId: 'agt_1', rpm: 3, tpm: null, tokens: 10 };

    it('allows rpm requests per minute and says when to retry', async () => {
      const [c] = impl.make();
      for (let i = 0; i < 3; i++) expect(await c.rateLimit({ ...limits, now: seconds(i) })).toEqual({ ok: true });
      const refused = await c.rateLimit({ ...limits, now: seconds(3) });
      expect(refused).toMatchObject({ ok: false, which: 'rpm' });
      if (refused.ok) throw new Error('unreachable');
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(120);
      // Refused requests are not counted; two minutes later the window is empty.
      expect((await c.rateLimit({ ...limits, now: minutes(2) })).ok).toBe(true);
      expect(await c.rateLimit({ ...limits, agentId: 'agt_2', now: seconds(3) })).toEqual({ ok: true });
    });

    it('slides: the previous minute weighs less as time passes', async () => {
      const [c] = impl.make();
      const start = new Date('2025-01-31T12:00:00Z');
      for (let i = 0; i < 3; i++) expect((await c.rateLimit({ ...limits, now: seconds(50 + i, start) })).ok).toBe(true);
      // 12:01:10: the previous minute counts 3 x 5/6 = 2.5, so a request does not fit.
      const refused = await c.rateLimit({ ...limits, now: seconds(70, start) });
      expect(refused).toMatchObject({ ok: false, which: 'rpm' });
      // It fits once the previous minute weighs 2, 20 s into the minute; the answer said so.
      if (!refused.ok) expect(refused.retryAfterSeconds).toBe(10);
      expect((await c.rateLimit({ ...limits, now: seconds(81, start) })).ok).toBe(true);
    });

    it('counts tokens per minute and accepts corrections', async () => {
      const [c] = impl.make();
      const tpm = { agentId: 'agt_1', rpm: null, tpm: 1000 };
      expect((await c.rateLimit({ ...tpm, tokens: 600, now: T0 })).ok).toBe(true);
      expect(await c.rateLimit({ ...tpm, tokens: 600, now: seconds(1) })).toMatchObject({ ok: false, which: 'tpm' });
      await c.addTokens('agt_1', -500, seconds(2));
      expect((await c.rateLimit({ ...tpm, tokens: 600, now: seconds(3) })).ok).toBe(true);
      await c.addTokens('agt_1', 10_000, seconds(4));
      expect(await c.rateLimit({ ...tpm, tokens: 1, now: seconds(5) })).toMatchObject({ ok: false, which: 'tpm' });
    });

    it('refuses a request larger than the whole tpm', async () => {
      const [c] = impl.make();
      expect(await c.rateLimit({ agentId: 'agt_1', rpm: null, tpm: 100, tokens: 101, now: T0 })).toEqual({ ok: false, which: 'tpm', retryAfterSeconds: 60 });
    });

    it('reports rpm before tpm and counts nothing when either refuses', async () => {
      const [c] = impl.make();
      const both = { agentId: 'agt_1', rpm: 1, tpm: 100 };
      expect((await c.rateLimit({ ...both, tokens: 50, now: T0 })).ok).toBe(true);
      expect(await c.rateLimit({ ...both, tokens: 80, now: seconds(1) })).toMatchObject({ ok: false, which: 'rpm' });
      const tpmOnly = { agentId: 'agt_1', rpm: 10, tpm: 100 };
      expect(await c.rateLimit({ ...tpmOnly, tokens: 80, now: seconds(2) })).toMatchObject({ ok: false, which: 'tpm' });
      // The refused 80 tokens were not added: 50 + 50 fits.
      expect((await c.rateLimit({ ...tpmOnly, tokens: 50, now: seconds(3) })).ok).toBe(true);
    });

    it('admits exactly rpm concurrent requests', async () => {
      const nodes = impl.make(undefined, 2);
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => nodes[i % nodes.length].rateLimit({ agentId: 'agt_1', rpm: 20, tpm: null, tokens: 1, now: T0 })),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(20);
    });
  });

  describe('retry blocking', () => {
    it('counts sightings of a key within the window', async () => {
      const [c] = impl.make();
      const key = 'a:agt_1:abc';
      expect(await c.countRepeat({ key, windowSeconds: 60, now: T0 })).toBe(1);
      expect(await c.countRepeat({ key, windowSeconds: 60, now: seconds(30) })).toBe(2);
      expect(await c.countRepeat({ key: 'other', windowSeconds: 60, now: seconds(30) })).toBe(1);
      expect(await c.countRepeat({ key, windowSeconds: 60, now: seconds(59) })).toBe(3);
      // The first sighting leaves the window at 60 s.
      expect(await c.countRepeat({ key, windowSeconds: 60, now: seconds(60) })).toBe(3);
      expect(await c.countRepeat({ key, windowSeconds: 60, now: seconds(200) })).toBe(1);
    });

    it('counts concurrent sightings exactly', async () => {
      const nodes = impl.make(undefined, 2);
      const counts = await Promise.all(Array.from({ length: 50 }, (_, i) => nodes[i % nodes.length].countRepeat({ key: 'k', windowSeconds: 300, now: T0 })));
      expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    });
  });
});

describe.runIf(haveRedis)('redis counters', () => {
  it('keeps no key without an expiry', async () => {
    const [c] = redis.make();
    const prefix = prefixes[prefixes.length - 1];
    const now = new Date();
    const id = await reserveId(c, { now });
    await c.settle(id, 0.05);
    await c.release(await reserveId(c, { now }));
    await c.rateLimit({ agentId: 'agt_1', rpm: 5, tpm: 100, tokens: 5, now });
    await c.addTokens('agt_1', 3, now);
    await c.countRepeat({ key: 'k', windowSeconds: 10, now });
    await c.seed({ now, agents: [{ agentId: 'agt_9', day: 1, month: 1 }], traces: [{ traceId: 'tr_9', cost: 1 }], tenants: [{ tenantId: 'globex', day: 1, month: 1 }] });
    await c.settle(await reserveId(c, { now, tenant: { tenantId: 'acme', dailyLimit: 5, monthlyLimit: null } }), 0.05);
    await c.settle(await reserveId(c, { now, dailyLimit: null, monthlyLimit: null, tenant: { tenantId: 'initech', dailyLimit: null, monthlyLimit: null } }), 0.05);
    const keys = await admin!.keys(`${prefix}*`);
    // The tenants' day and month spend (their holds went with the settles): acme reserved, globex seeded, initech had no limit.
    for (const tenant of ['acme', 'globex', 'initech']) expect(keys.filter((k) => /:spend:t[dm]:/.test(k) && k.endsWith(`:${tenant}`))).toHaveLength(2);
    expect(keys.length).toBeGreaterThan(5);
    for (const key of keys) expect(await admin!.pttl(key), key).toBeGreaterThan(0);
  });

  it('seeds only windows it has no record of', async () => {
    const [c] = redis.make();
    await c.settle(await reserveId(c, { amount: 0.3 }), 0.3);
    await c.seed({ now: T0, agents: [{ agentId: 'agt_1', day: 5, month: 5 }, { agentId: 'agt_2', day: 1, month: 2 }], traces: [] });
    expect(await c.spend('agt_1', T0)).toEqual({ day: 0.3, month: 0.3 });
    expect(await c.spend('agt_2', T0)).toEqual({ day: 1, month: 2 });
    await c.settle(await reserveId(c, { amount: 0.3, tenant: { tenantId: 'acme', dailyLimit: null, monthlyLimit: 9 } }), 0.3);
    await c.seed({ now: T0, agents: [], traces: [], tenants: [{ tenantId: 'acme', day: 5, month: 5 }, { tenantId: 'globex', day: 1, month: 2 }] });
    expect(await c.tenantSpend('acme', T0)).toEqual({ day: 0.3, month: 0.3 });
    expect(await c.tenantSpend('globex', T0)).toEqual({ day: 1, month: 2 });
  });

  it('ignores reservation ids it did not issue', async () => {
    const [c] = redis.make();
    expect(await c.settle('x.not-base64-json', 1)).toBe(false);
    expect(await c.release(`abc.${Buffer.from('[1,2]').toString('base64url')}`)).toBe(false);
  });
});
