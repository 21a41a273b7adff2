import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryCounters } from './memory.js';
import { MAX_COMPACT_WINDOW_MS } from './repeat-tracker.js';
import { MAX_REPEATS_TRACKED } from './spec.js';

const T0 = Date.parse('2025-06-01T00:00:00Z');
const at = (ms: number) => new Date(T0 + ms);
const DAY = 86_400_000;

/**
 * The previous MemoryCounters.countRepeat (a map of time lists and its once-a-minute sweep), with an entry per key and
 * window rounded up to whole ms, the identity the compact tracker uses. The reference for exact equality.
 */
class Reference {
  private readonly repeats = new Map<string, { windowMs: number; times: number[] }>();
  private lastSweep = -Infinity;

  count(key: string, windowSeconds: number, now: number): number {
    const windowMs = windowSeconds * 1000;
    if (Math.abs(now - this.lastSweep) >= 60_000) {
      this.lastSweep = now;
      for (const [k, r] of this.repeats) {
        const last = r.times[r.times.length - 1];
        if (last === undefined || last <= now - r.windowMs) this.repeats.delete(k);
      }
    }
    const compact = windowMs > 0 && windowMs <= MAX_COMPACT_WINDOW_MS && Number.isFinite(now);
    const k = `${compact ? Math.ceil(windowMs) : windowMs}|${key}`;
    let r = this.repeats.get(k);
    if (!r) {
      r = { windowMs, times: [] };
      this.repeats.set(k, r);
    }
    r.windowMs = windowMs;
    const cutoff = now - windowMs;
    let drop = 0;
    while (drop < r.times.length && r.times[drop] <= cutoff) drop++;
    if (drop > 0) r.times.splice(0, drop);
    r.times.push(now);
    if (r.times.length > MAX_REPEATS_TRACKED) r.times.splice(0, r.times.length - MAX_REPEATS_TRACKED);
    return r.times.length;
  }

  get size(): number {
    return this.repeats.size;
  }
}

describe('MemoryCounters.countRepeat (compact tracker)', () => {
  it('counts sightings within the window and forgets them exactly when they leave it', async () => {
    const c = new MemoryCounters();
    const count = (ms: number, key = 'k') => c.countRepeat({ key, windowSeconds: 10, now: at(ms) });
    expect(await count(0)).toBe(1);
    expect(await count(1)).toBe(2);
    expect(await count(9_999)).toBe(3);
    // The sighting at 0 leaves the window at 10 s exactly; the one at 1 ms a millisecond later.
    expect(await count(10_000)).toBe(3);
    expect(await count(10_001)).toBe(3);
    expect(await count(10_002)).toBe(4);
    // Long after: back to one sighting, and back to a compact slot.
    expect(await count(100_000)).toBe(1);
    expect(c.repeatStats()).toMatchObject({ entries: 1, multi: 0 });
    expect(await count(100_500)).toBe(2);
    expect(c.repeatStats()).toMatchObject({ entries: 1, multi: 1 });
    await c.close();
  });

  it('counts a key seen once exactly at the window edge, for fractional windows too', async () => {
    const c = new MemoryCounters();
    expect(await c.countRepeat({ key: 'k', windowSeconds: 1.5005, now: at(0) })).toBe(1);
    // 1500.5 ms: a sighting 1500 ms ago is inside, 1501 ms ago is not.
    expect(await c.countRepeat({ key: 'k', windowSeconds: 1.5005, now: at(1500) })).toBe(2);
    expect(await c.countRepeat({ key: 'k', windowSeconds: 1.5005, now: at(3001) })).toBe(1);
    await c.close();
  });

  it('keeps different keys and different windows apart', async () => {
    const c = new MemoryCounters();
    for (let i = 0; i < 3; i++) {
      expect(await c.countRepeat({ key: 'same', windowSeconds: 60, now: at(i) })).toBe(i + 1);
      expect(await c.countRepeat({ key: 'same', windowSeconds: 300, now: at(i) })).toBe(i + 1);
      expect(await c.countRepeat({ key: `other-${i}`, windowSeconds: 60, now: at(i) })).toBe(1);
    }
    // The 60 s sightings leave their window; the 300 s ones do not.
    expect(await c.countRepeat({ key: 'same', windowSeconds: 60, now: at(61_000) })).toBe(1);
    expect(await c.countRepeat({ key: 'same', windowSeconds: 300, now: at(61_000) })).toBe(4);
    // Keys as admission builds them, window included.
    expect(await c.countRepeat({ key: 'a:agt_1:60:abc', windowSeconds: 60, now: at(62_000) })).toBe(1);
    expect(await c.countRepeat({ key: 'a:agt_1:300:abc', windowSeconds: 300, now: at(62_000) })).toBe(1);
    await c.close();
  });

  it('caps the count at MAX_REPEATS_TRACKED', async () => {
    const c = new MemoryCounters();
    let last = 0;
    for (let i = 0; i < MAX_REPEATS_TRACKED + 50; i++) {
      last = await c.countRepeat({ key: 'hot', windowSeconds: 300, now: at(i) });
      if (i < MAX_REPEATS_TRACKED) expect(last).toBe(i + 1);
    }
    expect(last).toBe(MAX_REPEATS_TRACKED);
    expect(await c.countRepeat({ key: 'hot', windowSeconds: 300, now: at(MAX_REPEATS_TRACKED + 50) })).toBe(MAX_REPEATS_TRACKED);
    await c.close();
  });

  it('keeps a steady count for a key retried every second for an hour', async () => {
    const c = new MemoryCounters();
    for (let s = 0; s < 3600; s++) {
      expect(await c.countRepeat({ key: 'loop', windowSeconds: 100, now: at(s * 1000) })).toBe(Math.min(s + 1, 100));
    }
    await c.close();
  });

  it('holds 200,000 distinct keys and gives the memory back once their window has passed', async () => {
    const c = new MemoryCounters();
    const empty = c.repeatStats().slots;
    const n = 200_000;
    for (let i = 0; i < n; i++) {
      expect(await c.countRepeat({ key: `t:agt_1:trace-${i}:300:${i.toString(36).padStart(32, 'x')}`, windowSeconds: 300, now: at(i / 10) })).toBe(1);
    }
    const full = c.repeatStats();
    expect(full.entries).toBe(n);
    expect(full.multi).toBe(0);
    expect(full.slots).toBeGreaterThanOrEqual(n / 0.8);
    expect(full.slots).toBeLessThanOrEqual(n / 0.2);
    // Still there just before the first one's window ends (a sweep ran: it dropped none)...
    expect(await c.countRepeat({ key: `t:agt_1:trace-0:300:${'0'.padStart(32, 'x')}`, windowSeconds: 300, now: at(299_000) })).toBe(2);
    expect(c.repeatEntries()).toBe(n);
    // ...and all gone once every window has passed: the next sweep drops them and shrinks the tables.
    expect(await c.countRepeat({ key: 'after', windowSeconds: 300, now: at(299_000 + 300_000) })).toBe(1);
    expect(c.repeatEntries()).toBe(1);
    expect(c.repeatStats().slots).toBe(empty);
    await c.close();
  });

  it('close() forgets every sighting', async () => {
    const c = new MemoryCounters();
    await c.countRepeat({ key: 'k', windowSeconds: 60, now: at(0) });
    await c.countRepeat({ key: 'k', windowSeconds: 60, now: at(1) });
    await c.countRepeat({ key: 'k', windowSeconds: 1e6, now: at(1) });
    await c.close();
    expect(c.repeatEntries()).toBe(0);
    expect(await c.countRepeat({ key: 'k', windowSeconds: 60, now: at(2) })).toBe(1);
  });

  it('handles windows the compact table does not hold like before', async () => {
    const c = new MemoryCounters();
    const long = MAX_COMPACT_WINDOW_MS / 1000 + 1;
    expect(await c.countRepeat({ key: 'k', windowSeconds: long, now: at(0) })).toBe(1);
    expect(await c.countRepeat({ key: 'k', windowSeconds: long, now: at(2 * DAY) })).toBe(2);
    expect(await c.countRepeat({ key: 'k', windowSeconds: 0, now: at(5 * DAY) })).toBe(1);
    expect(await c.countRepeat({ key: 'k', windowSeconds: 0, now: at(5 * DAY) })).toBe(1);
    await c.close();
  });

  it('survives the clock jumping weeks ahead and days back', async () => {
    const c = new MemoryCounters();
    expect(await c.countRepeat({ key: 'k', windowSeconds: 86_400, now: at(0) })).toBe(1);
    expect(await c.countRepeat({ key: 'k', windowSeconds: 86_400, now: at(30 * DAY) })).toBe(1);
    expect(await c.countRepeat({ key: 'j', windowSeconds: 86_400, now: at(30 * DAY) })).toBe(1);
    expect(await c.countRepeat({ key: 'j', windowSeconds: 86_400, now: at(30 * DAY + 1000) })).toBe(2);
    // Back 10 days: the sightings at 30 days are in the future, still within the window.
    expect(await c.countRepeat({ key: 'j', windowSeconds: 86_400, now: at(20 * DAY) })).toBe(3);
    expect(await c.countRepeat({ key: 'k', windowSeconds: 86_400, now: at(20 * DAY) })).toBe(2);
    await c.close();
  });

  it('drops what a sweep drops before any later call reads it, even when the clock then steps back', async () => {
    const c = new MemoryCounters();
    await c.countRepeat({ key: 'first', windowSeconds: 10, now: at(0) });
    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    for (const key of keys) await c.countRepeat({ key, windowSeconds: 10, now: at(45_000) });
    // 100 s: the sweep drops every k (their windows ended at 55 s); the clock then steps back 50 s (no new sweep).
    await c.countRepeat({ key: 'trigger', windowSeconds: 10, now: at(100_000) });
    for (const key of keys) expect(await c.countRepeat({ key, windowSeconds: 10, now: at(50_000) }), key).toBe(1);
    await c.close();
  });

  it('matches the previous implementation exactly on random sequences', async () => {
    const windows = [0.0004, 0.001, 0.5, 1, 2.5, 10, 60, 300, 86_400, 0, -1, MAX_COMPACT_WINDOW_MS / 1000 + 10, Number.NaN];
    const steps = [0, 0, 1, 1, 7, 400, 999, 1000, 1001, 9_999, 10_000, 30_000, 61_000, 300_000, DAY, -1, -700, -70_000, 3 * DAY, 20 * DAY, -7 * DAY];
    const op = fc.record({ key: fc.nat({ max: 5 }), window: fc.nat({ max: windows.length - 1 }), step: fc.nat({ max: steps.length - 1 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 300 }), async (ops) => {
        const c = new MemoryCounters();
        const ref = new Reference();
        let now = T0;
        let latest = T0;
        for (const o of ops) {
          // The clock may step back, but not more than 10 days behind the latest time seen.
          now = Math.max(now + steps[o.step], latest - 10 * DAY);
          latest = Math.max(latest, now);
          const req = { key: `key-${o.key}`, windowSeconds: windows[o.window], now: new Date(now) };
          expect(await c.countRepeat(req)).toBe(ref.count(req.key, req.windowSeconds, now));
          expect(c.repeatEntries()).toBe(ref.size);
        }
        await c.close();
      }),
      { numRuns: 300 },
    );
  });

  it('matches the previous implementation with many keys, hot and cold, across sweeps', async () => {
    const c = new MemoryCounters();
    const ref = new Reference();
    let seed = 12345;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    let now = T0;
    for (let i = 0; i < 200_000; i++) {
      now += rand(40);
      const hot = rand(10) < 3;
      const key = hot ? `hot-${rand(50)}` : `cold-${rand(100_000)}`;
      const windowSeconds = [5, 60, 300][rand(3)];
      const got = await c.countRepeat({ key, windowSeconds, now: new Date(now) });
      const want = ref.count(key, windowSeconds, now);
      if (got !== want) expect({ i, key, windowSeconds, got }).toEqual({ i, key, windowSeconds, got: want });
    }
    expect(c.repeatEntries()).toBe(ref.size);
    await c.close();
  });
});
