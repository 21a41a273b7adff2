// The compact memory of trace ids whose spend left the in-memory counters (issue 23, item 10).
import { describe, expect, it } from 'vitest';
import { EvictedTraces } from './evicted-traces.js';

const T0 = Date.UTC(2026, 2, 10, 12, 0, 0);

describe('EvictedTraces', () => {
  it('no false negatives, about 1 % false positives, memory within its cap, forgotten after rememberMs', () => {
    const f = new EvictedTraces(7 * 86_400_000, 2 * 1024 * 1024);
    for (let i = 0; i < 300_000; i++) f.add(`acme:${i}`, T0 + i);
    for (let i = 0; i < 300_000; i += 7) expect(f.has(`acme:${i}`, T0 + 300_000)).toBe(true);
    let fp = 0;
    for (let i = 0; i < 100_000; i++) if (f.has(`acme:new-${i}`, T0 + 300_000)) fp++;
    expect(fp / 100_000).toBeLessThan(0.03);
    expect(f.stats().bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(f.has('acme:5', T0 + 8 * 86_400_000)).toBe(false);
    expect(f.stats().generations).toBe(0);
  });

  it('at its memory cap it keeps every id (false positives rise instead)', () => {
    const f = new EvictedTraces(86_400_000, 64 * 1024);
    for (let i = 0; i < 200_000; i++) f.add(`x:${i}`, T0);
    expect(f.stats().bytes).toBeLessThanOrEqual(64 * 1024);
    for (let i = 0; i < 200_000; i += 13) expect(f.has(`x:${i}`, T0 + 1)).toBe(true);
  });
});
