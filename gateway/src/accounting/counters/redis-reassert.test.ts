// Redis losing its state while requests are in flight on several nodes: every node puts its holds back before a budgeted
// request passes, and settles (live, retried or replayed from a journal) count once. On a Redis of the test's own.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type OwnRedis, startOwnRedis } from '../../test-support/own-redis.js';
import { RedisCounters, type RedisCounterOptions } from './redis.js';
import { CountersUnavailableError, type NodeRegistry, type ReserveRequest, type SeedRows } from './spec.js';

let redis: OwnRedis;
let admin: Redis;
beforeAll(async () => {
  redis = await startOwnRedis();
  admin = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
  admin.on('error', () => undefined);
});
afterAll(async () => {
  admin?.disconnect();
  await redis?.cleanup();
});

const opened: RedisCounters[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
  if (!redis.running) await redis.start();
});

/** Nodes that know each other (as the database's node registry makes them), with usage rows in `db`. */
function cluster(n: number, db: { day: number }, over: Partial<RedisCounterOptions> = {}) {
  const prefix = `agwtest:${randomUUID()}:`;
  const alive = new Set<string>();
  const loadSeed = async (): Promise<SeedRows> => ({ now: new Date(), agents: [{ agentId: 'agt_1', day: db.day, month: db.day }], traces: [], tenants: [{ tenantId: 'acme', day: db.day, month: db.day }] });
  const nodes = Array.from({ length: n }, (_, i) => {
    const self = `node${i}-${randomUUID().slice(0, 4)}`;
    alive.add(self);
    const registry: NodeRegistry = { self, live: async () => [...alive] };
    const c = new RedisCounters({ url: redis.url, prefix, loadSeed, nodes: registry, rebuildWaitMs: 3_000, syncMs: 50, ...over });
    opened.push(c);
    return { c, self };
  });
  return { nodes, alive, prefix };
}

const req = (over: Partial<ReserveRequest> = {}): ReserveRequest => ({
  agentId: 'agt_1',
  traceId: null,
  amount: 1,
  dailyLimit: 40,
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
      if (!(err instanceof CountersUnavailableError) || i > 300) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** 30 holds of $1 in flight (10 per node) beside $5 of usage rows, a $40 daily limit; Redis loses everything. */
async function lossWithHoldsInFlight(lose: () => Promise<unknown>, scope: Partial<ReserveRequest>) {
  const db = { day: 5 };
  const { nodes } = cluster(3, db);
  await nodes[0]!.c.seed(await (async () => ({ now: new Date(), agents: [{ agentId: 'agt_1', day: 5, month: 5 }], traces: [], tenants: [{ tenantId: 'acme', day: 5, month: 5 }] }))());
  const inFlight: Array<{ node: RedisCounters; id: string }> = [];
  for (let i = 0; i < 30; i++) {
    const node = nodes[i % 3]!.c;
    const r = await node.reserve(req({ ...scope, requestId: `req_inflight_${i}` }));
    if (!r.ok) throw new Error(`hold ${i} refused`);
    inFlight.push({ node, id: r.reservationId });
  }
  await lose();
  // Every node now tries to take what looks free: only what is left beside the 30 holds may pass.
  const results = await Promise.all(Array.from({ length: 30 }, (_, i) => untilAnswering(() => nodes[i % 3]!.c.reserve(req({ ...scope })))));
  const passed = results.filter((r) => r.ok).length;
  for (const { node, id } of inFlight) expect(await node.settle(id, 1)).toBe(true);
  for (const r of results) if (r.ok) await nodes[0]!.c.settle(r.reservationId, 1);
  return { passed, nodes };
}

describe('Redis loses its state while 30 holds are in flight on 3 nodes', () => {
  it('flushed: the holds are put back before anything passes; agent budget never passed, spend exact', async () => {
    const { passed, nodes } = await lossWithHoldsInFlight(() => admin.flushall(), {});
    expect(passed).toBe(5);
    expect(await nodes[1]!.c.spend('agt_1', new Date())).toEqual({ day: 40, month: 40 });
  });

  it('restarted without data: the same, for a tenant pool', async () => {
    const scope = { dailyLimit: null, tenant: { tenantId: 'acme', dailyLimit: 40, monthlyLimit: null } };
    const { passed, nodes } = await lossWithHoldsInFlight(() => redis.restartWithoutData(), scope);
    expect(passed).toBe(5);
    expect(await nodes[2]!.c.tenantSpend('acme', new Date())).toEqual({ day: 40, month: 40 });
  });

  it('flushed: the same for a trace limit', async () => {
    const scope = { dailyLimit: null, traceId: 'acme:tr_1', traceLimit: 35 };
    const db = { day: 0 };
    const { nodes } = cluster(3, db);
    await nodes[0]!.c.seed({ now: new Date(), agents: [], traces: [] });
    const held: Array<{ node: RedisCounters; id: string }> = [];
    for (let i = 0; i < 30; i++) {
      const r = await nodes[i % 3]!.c.reserve(req({ ...scope, requestId: `req_t${i}` }));
      if (!r.ok) throw new Error('refused');
      held.push({ node: nodes[i % 3]!.c, id: r.reservationId });
    }
    await admin.flushall();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => untilAnswering(() => nodes[i % 3]!.c.reserve(req(scope)))));
    expect(results.filter((r) => r.ok)).toHaveLength(5);
    expect(results.filter((r) => !r.ok && r.which === 'trace')).toHaveLength(15);
    for (const { node, id } of held) await node.settle(id, 1);
  });

  it('a node that is gone (not heard from) is not waited for; its holds go with it', async () => {
    const db = { day: 0 };
    const { nodes, alive } = cluster(3, db);
    await nodes[0]!.c.seed({ now: new Date(), agents: [], traces: [] });
    for (let i = 0; i < 10; i++) await nodes[2]!.c.reserve(req({ requestId: `req_gone_${i}` }));
    // Node 2 crashes: it says nothing more, and the registry stops listing it.
    await nodes[2]!.c.close();
    alive.delete(nodes[2]!.self);
    await admin.flushall();
    const r = await untilAnswering(() => nodes[0]!.c.reserve(req({ amount: 40 })));
    expect(r.ok).toBe(true);
  });

  it('a settle that finds Redis rebuilding waits for it and counts once; a second settle does nothing', async () => {
    const db = { day: 2 };
    const { nodes } = cluster(2, db);
    await nodes[0]!.c.seed({ now: new Date(), agents: [{ agentId: 'agt_1', day: 2, month: 2 }], traces: [] });
    const held = await nodes[0]!.c.reserve(req({ amount: 3, requestId: 'req_settle_1' }));
    if (!held.ok) throw new Error('refused');
    await admin.flushall();
    expect(await nodes[0]!.c.settle(held.reservationId, 2.5)).toBe(true);
    expect(await nodes[0]!.c.settle(held.reservationId, 2.5)).toBe(false);
    expect(await nodes[1]!.c.release(held.reservationId)).toBe(false);
    expect(await untilAnswering(() => nodes[1]!.c.spend('agt_1', new Date()))).toEqual({ day: 4.5, month: 4.5 });
  });
});

describe('settles and the usage journal', () => {
  it('a tracked reservation settled live, then replayed by another node: counted once', async () => {
    const { nodes } = cluster(2, { day: 0 });
    const [a, b] = [nodes[0]!.c, nodes[1]!.c];
    await a.seed({ now: new Date(), agents: [], traces: [] });
    const r = await a.reserve(req({ requestId: 'req_live_1' }));
    if (!r.ok) throw new Error('refused');
    const link = a.tracker.track('req_live_1');
    expect(link).toBeDefined();
    expect(await a.settle(r.reservationId, 0.75)).toBe(true);
    await link!.settled;
    await b.tracker.replaySettle(link!.reservationId, 0.75);
    await b.tracker.replaySettle(link!.reservationId, 0.75);
    expect(await b.spend('agt_1', new Date())).toEqual({ day: 0.75, month: 0.75 });
  });

  it('a reservation whose node died before its settle is settled by the replay, once, and its hold is gone', async () => {
    const { nodes } = cluster(2, { day: 0 });
    const [a, b] = [nodes[0]!.c, nodes[1]!.c];
    await a.seed({ now: new Date(), agents: [], traces: [] });
    const r = await a.reserve(req({ amount: 30, requestId: 'req_died_1' }));
    if (!r.ok) throw new Error('refused');
    const link = a.tracker.track('req_died_1')!;
    await b.tracker.replaySettle(link.reservationId, 1.25);
    await b.tracker.replaySettle(link.reservationId, 1.25);
    expect(await b.spend('agt_1', new Date())).toEqual({ day: 1.25, month: 1.25 });
    // The hold of 30 is gone: 38.75 of the 40 are left.
    expect((await b.reserve(req({ amount: 38.75 }))).ok).toBe(true);
  });

  it('a request no limit applies to: its cost is added once, by its settle or by the replay, never both', async () => {
    const { nodes } = cluster(2, { day: 0 });
    const [a, b] = [nodes[0]!.c, nodes[1]!.c];
    await a.seed({ now: new Date(), agents: [], traces: [] });
    const free = { dailyLimit: null };
    const settled = await a.reserve(req({ ...free, requestId: 'req_free_1' }));
    const died = await a.reserve(req({ ...free, requestId: 'req_free_2' }));
    if (!settled.ok || !died.ok) throw new Error('refused');
    const l1 = a.tracker.track('req_free_1')!;
    const l2 = a.tracker.track('req_free_2')!;
    expect(l1.marker).toBe('req_free_1');
    await a.settle(settled.reservationId, 1);
    for (const l of [l1, l2, l1, l2]) await b.tracker.replaySettle(l.reservationId, 1);
    expect(await b.spend('agt_1', new Date())).toEqual({ day: 2, month: 2 });
    // Once the journal segment holding them is gone, the markers go too.
    a.tracker.forget([l1.marker!, l2.marker!]);
    await new Promise((r) => setTimeout(r, 50));
    expect(await admin.exists(`${(a as unknown as { keys: { prefix: string } }).keys.prefix}res:req_free_1`)).toBe(0);
  });

  it('a settle that fails while Redis is away is tried again once it answers, and counts once', async () => {
    const { nodes } = cluster(1, { day: 0 }, { breakerCooldownMs: 50 });
    const a = nodes[0]!.c;
    await a.seed({ now: new Date(), agents: [], traces: [] });
    const r = await a.reserve(req({ requestId: 'req_retry_1' }));
    if (!r.ok) throw new Error('refused');
    redis.pause();
    try {
      await expect(a.settle(r.reservationId, 0.5)).rejects.toBeInstanceOf(CountersUnavailableError);
    } finally {
      redis.resume();
    }
    let spend = { day: 0, month: 0 };
    // The spend can be read in Redis before the settle's reply has dropped the hold (one reply chunk, fewer awaits on
    // the reader's side, or the first settle run by Redis once it continued): wait for both.
    for (let i = 0; i < 100 && (spend.day === 0 || a.heldCount !== 0); i++) {
      await new Promise((res) => setTimeout(res, 50));
      spend = await a.spend('agt_1', new Date()).catch(() => spend);
    }
    expect(a.heldCount).toBe(0);
    // Read again once the hold is gone: the settle and its retry counted once between them.
    expect(await a.spend('agt_1', new Date())).toEqual({ day: 0.5, month: 0.5 });
    expect(spend).toEqual({ day: 0.5, month: 0.5 });
  });
});

describe('the command timeout', () => {
  it('is not tripped by event-loop lag: an answer that came while the loop was busy is read before the deadline is judged', async () => {
    const { nodes } = cluster(1, { day: 0 }, { commandTimeoutMs: 30, breakerFailures: 1 });
    const a = nodes[0]!.c;
    await a.seed({ now: new Date(), agents: [], traces: [] });
    for (let i = 0; i < 5; i++) {
      const pending = a.reserve(req());
      // The loop is blocked for 5 times the timeout while Redis answers.
      const until = Date.now() + 150;
      while (Date.now() < until);
      expect((await pending).ok).toBe(true);
    }
    expect(a.breakerOpen).toBe(false);
  });

  it('a Redis that hangs: refused after the timeout; the breaker opens after limits.redis_breaker_failures failures', async () => {
    const { nodes } = cluster(1, { day: 0 }, { commandTimeoutMs: 100, breakerFailures: 3, breakerCooldownMs: 60_000, syncMs: 600_000 });
    const a = nodes[0]!.c;
    await a.seed({ now: new Date(), agents: [], traces: [] });
    redis.pause();
    try {
      for (let i = 0; i < 2; i++) await expect(a.reserve(req())).rejects.toBeInstanceOf(CountersUnavailableError);
      expect(a.breakerOpen).toBe(false);
      await expect(a.reserve(req())).rejects.toBeInstanceOf(CountersUnavailableError);
      expect(a.breakerOpen).toBe(true);
    } finally {
      redis.resume();
    }
  });
});
