// Issue 23, item 10: memory that follows the number of distinct traces. Every table of the memory counters stays under its
// bound however many traces pass through, and a trace whose spend left memory still meets its limit when it comes back.
import { describe, expect, it } from 'vitest';
import { MemoryCounters } from './memory.js';
import { RepeatTracker } from './repeat-tracker.js';
import { CountersUnavailableError, type ReserveRequest } from './spec.js';

const T0 = Date.UTC(2026, 2, 10, 12, 0, 0);

/** Entries of every Map and Set the counters keep (whatever their names), so the bound covers tables added later too. */
function tableEntries(counters: object): number {
  let n = 0;
  for (const v of Object.values(counters)) if (v instanceof Map || v instanceof Set) n += v.size;
  return n;
}

/** A stand-in for the usage rows: what settled, per trace, and how often it was read. */
function usageRows() {
  const cost = new Map<string, number>();
  const reads: string[] = [];
  return {
    cost,
    reads,
    load: async (traceId: string) => {
      reads.push(traceId);
      await new Promise((r) => setTimeout(r, 1));
      return cost.get(traceId) ?? 0;
    },
  };
}

function request(traceId: string | null, at: number, over: Partial<ReserveRequest> = {}): ReserveRequest {
  return { agentId: 'a1', traceId, amount: 0.01, dailyLimit: null, monthlyLimit: null, traceLimit: 1, now: new Date(at), ...over };
}

/** One step of a trace: reserve, settle at `cost`, and the usage row the data plane writes. */
async function step(c: MemoryCounters, rows: ReturnType<typeof usageRows>, traceId: string, at: number, cost = 0.01, over: Partial<ReserveRequest> = {}) {
  const r = await c.reserve(request(traceId, at, over));
  if (!r.ok) return r;
  await c.settle(r.reservationId, cost);
  rows.cost.set(traceId, (rows.cost.get(traceId) ?? 0) + cost);
  return r;
}

describe('memory counters: bounded under many distinct traces', () => {
  it('100,000 traces of 3 steps each, 150 new a second: trace state never passes its bound', async () => {
    const rows = usageRows();
    const c = new MemoryCounters({ loadTraceSpend: rows.load, traceIdleMs: 60_000, maxTraces: 20_000 });
    let peakTables = 0;
    for (let i = 0; i < 100_000; i++) {
      const at = T0 + Math.floor(i * (1000 / 150));
      const id = `tenant:trace-${i}`;
      for (let s = 0; s < 3; s++) {
        const r = await step(c, rows, id, at + s);
        expect(r.ok).toBe(true);
      }
      if (i % 1000 === 999) peakTables = Math.max(peakTables, tableEntries(c));
    }
    // 150 traces a second idle for 60 s: about 9,000 in memory at a time, under maxTraces; everything else (agent
    // windows, holds, rates, reads under way) is a handful.
    expect(peakTables).toBeLessThan(9_200);
    expect(c.memoryStats().traces).toBeLessThanOrEqual(9_100);
    // Not one trace came back, so (false positives aside) no trace was read from the database.
    expect(rows.reads.length).toBeLessThan(100_000 * 0.02);
    expect(c.memoryStats().evictedBytes).toBeLessThan(1024 * 1024);
  }, 60_000);

  it('maxTraces holds even when every trace is still within its idle time', async () => {
    const rows = usageRows();
    const c = new MemoryCounters({ loadTraceSpend: rows.load, traceIdleMs: 3_600_000, maxTraces: 1_000 });
    for (let i = 0; i < 20_000; i++) {
      await step(c, rows, `t:${i}`, T0 + i);
      if (i % 100 === 0) expect(tableEntries(c)).toBeLessThan(1_010);
    }
    expect(c.memoryStats().traces).toBeLessThanOrEqual(1_000);
  });

  it('without a way to read traces back, maxTraces still bounds them', async () => {
    const c = new MemoryCounters({ maxTraces: 500 });
    for (let i = 0; i < 5_000; i++) {
      const r = await c.reserve(request(`t:${i}`, T0 + i));
      if (r.ok) await c.settle(r.reservationId, 0.01);
    }
    expect(tableEntries(c)).toBeLessThan(600);
  });

  it('retry-block entries stay under maxRepeatEntries with a 24 h window, and a loop is still caught', async () => {
    const c = new MemoryCounters({ maxRepeatEntries: 20_000 });
    let loop = 0;
    for (let i = 0; i < 200_000; i++) {
      const now = new Date(T0 + i * 10);
      await c.countRepeat({ key: `t:${i}:86400:distinct-${i}`, windowSeconds: 86_400, now });
      if (i % 5_000 === 0) {
        const seen = await c.countRepeat({ key: 't:stuck:86400:same', windowSeconds: 86_400, now });
        expect(seen).toBe(++loop);
      }
    }
    expect(c.repeatEntries()).toBeLessThanOrEqual(20_000);
    // 12-byte slots at load 0.5-0.8, about 20,000 entries.
    expect(c.repeatStats().slots * 12).toBeLessThan(1024 * 1024);
  });

  it('RepeatTracker alone: entries bounded, sightings in a shard that is not full are exact', () => {
    const t = new RepeatTracker(4096);
    for (let i = 0; i < 100_000; i++) t.count(`k${i}`, 3_600_000, T0 + i);
    expect(t.entries()).toBeLessThanOrEqual(4096);
    expect(t.trimmed()).toBeGreaterThan(90_000);
    const fresh = new RepeatTracker(4096);
    for (let i = 0; i < 10; i++) expect(fresh.count('same', 60_000, T0 + i)).toBe(i + 1);
  });
});

describe('memory counters: a trace whose spend left memory comes back with it', () => {
  it('idle trace leaves memory, is read back once (shared by concurrent requests), and its limit holds', async () => {
    const rows = usageRows();
    const c = new MemoryCounters({ loadTraceSpend: rows.load, traceIdleMs: 1_000 });
    const limit = { traceLimit: 0.05, amount: 0.01 };
    for (let s = 0; s < 3; s++) expect((await step(c, rows, 'acme:run-1', T0 + s, 0.01, limit)).ok).toBe(true);
    // Another trace, later: run-1 is idle and leaves memory.
    await step(c, rows, 'acme:run-2', T0 + 5_000, 0.01, limit);
    expect(c.memoryStats().traces).toBe(1);
    expect(rows.reads).toEqual([]);
    // run-1 comes back with 5 requests at once: it has 0.02 left, so exactly 2 are admitted, after one read.
    const back = await Promise.all(Array.from({ length: 5 }, () => c.reserve(request('acme:run-1', T0 + 6_000, limit))));
    expect(back.filter((r) => r.ok)).toHaveLength(2);
    const refused = back.find((r) => !r.ok);
    expect(refused).toMatchObject({ ok: false, which: 'trace' });
    expect(rows.reads).toEqual(['acme:run-1']);
    expect(await c.traceSpend('acme:run-1')).toBeCloseTo(0.03, 9);
  });

  it('idle counts from the end of a step: a step longer than traceIdleMs keeps its trace in memory for the next one', async () => {
    const rows = usageRows();
    const c = new MemoryCounters({ loadTraceSpend: rows.load, traceIdleMs: 50 });
    const r = await c.reserve(request('acme:long', T0, { amount: 0.5 }));
    expect(r.ok).toBe(true);
    // The answer takes longer than the idle time (a slower machine only makes it longer); the next step follows it at once.
    await new Promise((done) => setTimeout(done, 120));
    if (r.ok) await c.settle(r.reservationId, 0.4);
    rows.cost.set('acme:long', 0.4);
    expect(await c.reserve(request('acme:long', T0 + 120, { amount: 0.7 }))).toMatchObject({ ok: false, which: 'trace', used: 0.4 });
    expect(rows.reads).toEqual([]);
    // Idle for longer than traceIdleMs after its last step: it left memory, and is read back once.
    expect(await c.reserve(request('acme:long', T0 + 10_000, { amount: 0.7 }))).toMatchObject({ ok: false, which: 'trace', used: 0.4 });
    expect(rows.reads).toEqual(['acme:long']);
  });

  it('a trace kept for a step settled before its usage row (a call held for approval) stays in memory past its idle time', async () => {
    const rows = usageRows();
    const c = new MemoryCounters({ loadTraceSpend: rows.load, traceIdleMs: 50 });
    const limit = { traceLimit: 0.05 };
    // keepTrace and its end read the clock: the steps run on it too.
    const now = Date.now();
    const r = await c.reserve(request('acme:held', now, { ...limit, amount: 0.01 }));
    expect(r.ok).toBe(true);
    const letGo = c.keepTrace('acme:held');
    // Settled before the wait; the usage row is not written yet.
    if (r.ok) await c.settle(r.reservationId, 0.04);
    // Long past the idle time, other traces run the eviction: the held trace stays, with the step's cost.
    await step(c, rows, 'acme:other', now + 10_000, 0.001, limit);
    expect(await c.reserve(request('acme:held', now + 10_000, { ...limit, amount: 0.02 }))).toMatchObject({ ok: false, which: 'trace', used: 0.04 });
    expect(rows.reads).toEqual([]);
    // Recorded and let go: it may leave memory once idle, and is read back from its rows.
    rows.cost.set('acme:held', 0.04);
    letGo();
    letGo();
    await step(c, rows, 'acme:other', Date.now() + 20_000, 0.001, limit);
    expect(await c.reserve(request('acme:held', Date.now() + 20_000, { ...limit, amount: 0.02 }))).toMatchObject({ ok: false, which: 'trace', used: 0.04 });
    expect(rows.reads.filter((t) => t === 'acme:held')).toHaveLength(1);
    // A trace not in memory is not made up empty by keepTrace (that would hide its read-back).
    c.keepTrace('acme:never')();
    expect(await c.traceSpend('acme:never')).toBe(0);
  });

  it('seeded traces are read back on their next request only', async () => {
    const rows = usageRows();
    rows.cost.set('acme:old', 0.95);
    const c = new MemoryCounters({ loadTraceSpend: rows.load });
    await c.seed({ now: new Date(T0), agents: [], traces: [{ traceId: 'acme:old', cost: 0.95 }] });
    expect(c.memoryStats().traces).toBe(0);
    expect(await c.reserve(request('acme:old', T0 + 1, { amount: 0.1, traceLimit: 1 }))).toMatchObject({ ok: false, which: 'trace' });
    expect((await c.reserve(request('acme:new', T0 + 2, { amount: 0.1, traceLimit: 1 }))).ok).toBe(true);
    expect(rows.reads).toEqual(['acme:old']);
  });

  it('a failed read refuses a request with a trace limit (fail closed) and counts one without in the usage rows only', async () => {
    let fail = true;
    const c = new MemoryCounters({
      traceIdleMs: 1_000,
      loadTraceSpend: async () => {
        if (fail) throw new Error('database away');
        return 0.5;
      },
    });
    const r = await c.reserve(request('acme:t', T0));
    expect(r.ok).toBe(true);
    if (r.ok) await c.settle(r.reservationId, 0.5);
    await c.reserve(request('acme:other', T0 + 5_000));
    await expect(c.reserve(request('acme:t', T0 + 6_000))).rejects.toBeInstanceOf(CountersUnavailableError);
    expect((await c.reserve(request('acme:t', T0 + 6_001, { traceLimit: null }))).ok).toBe(true);
    expect(c.memoryStats().traces).toBe(1);
    fail = false;
    expect(await c.reserve(request('acme:t', T0 + 6_002, { amount: 0.6, traceLimit: 1 }))).toMatchObject({ ok: false, which: 'trace' });
  });

  it('a settle that arrives after its trace left memory is read back with the rest', async () => {
    const rows = usageRows();
    const c = new MemoryCounters({ loadTraceSpend: rows.load, traceIdleMs: 1_000, reservationTtlMs: 500 });
    const r = await c.reserve(request('acme:slow', T0, { amount: 0.1 }));
    // The hold lapses, the trace goes idle and leaves memory; then the answer's cost arrives.
    await c.reserve(request('acme:other', T0 + 5_000));
    expect(c.memoryStats().traces).toBe(1);
    if (r.ok) await c.settle(r.reservationId, 0.9);
    rows.cost.set('acme:slow', 0.9);
    expect(await c.reserve(request('acme:slow', T0 + 6_000, { amount: 0.2, traceLimit: 1 }))).toMatchObject({ ok: false, which: 'trace' });
    expect(rows.reads).toEqual(['acme:slow']);
  });
});
