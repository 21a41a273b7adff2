import { describe, expect, it } from 'vitest';
import { randomHex } from './random-hex.js';

describe('randomHex', () => {
  it('gives hex of the length asked, never the same bytes twice, across many refills of its pool', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const bytes = [8, 12, 16, 24][i % 4]!;
      const hex = randomHex(bytes);
      expect(hex).toMatch(new RegExp(`^[0-9a-f]{${bytes * 2}}$`));
      seen.add(hex);
    }
    expect(seen.size).toBe(20_000);
    expect(randomHex(5000)).toMatch(/^[0-9a-f]{10000}$/);
  });

  it('spreads its digits evenly (no byte of the pool left unfilled)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) for (const c of randomHex(24)) counts.set(c, (counts.get(c) ?? 0) + 1);
    // 192,000 digits, 12,000 expected per digit: a zeroed or reused stretch would skew this far past 5%.
    expect(counts.size).toBe(16);
    for (const n of counts.values()) expect(Math.abs(n - 12_000)).toBeLessThan(600);
  });
});
