import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { Usage } from '../providers/spec.js';
import { MAX_TOKEN_COUNT, checkedUsage } from './usage-counts.js';

describe('checkedUsage', () => {
  test('sound usage is returned as it is', () => {
    const usage: Usage = { prompt_tokens: 12, completion_tokens: 0, cached_prompt_tokens: 4, estimated: false };
    expect(checkedUsage(usage)).toBe(usage);
  });

  test('fractions are rounded up, nonsense is 0, huge counts stop at what a record holds; the usage is marked estimated', () => {
    const usage = {
      prompt_tokens: 1.5,
      completion_tokens: -3,
      cached_prompt_tokens: Number.NaN,
      cache_write_prompt_tokens: 1e308,
      cache_write_1h_prompt_tokens: Number.POSITIVE_INFINITY,
      estimated: false,
    };
    expect(checkedUsage(usage)).toEqual({
      prompt_tokens: 2,
      completion_tokens: 0,
      cached_prompt_tokens: 0,
      cache_write_prompt_tokens: MAX_TOKEN_COUNT,
      cache_write_1h_prompt_tokens: 0,
      estimated: true,
    });
    expect(usage.prompt_tokens).toBe(1.5);
  });

  test('property: every count comes out a whole number from 0 to MAX_TOKEN_COUNT, and sound counts are kept', () => {
    const count = fc.oneof(fc.nat(), fc.double(), fc.constant(undefined));
    fc.assert(
      fc.property(fc.nat(), fc.oneof(fc.nat(), fc.double()), count, count, count, (p, c, a, b, d) => {
        const usage = { prompt_tokens: p, completion_tokens: c, cached_prompt_tokens: a, cache_write_prompt_tokens: b, cache_write_1h_prompt_tokens: d, estimated: false };
        const out = checkedUsage(usage as Usage);
        for (const k of ['prompt_tokens', 'completion_tokens', 'cached_prompt_tokens', 'cache_write_prompt_tokens', 'cache_write_1h_prompt_tokens'] as const) {
          const before = usage[k];
          const after = out[k];
          if (before === undefined) expect(after).toBeUndefined();
          else {
            expect(Number.isInteger(after) && after! >= 0 && after! <= MAX_TOKEN_COUNT).toBe(true);
            if (Number.isInteger(before) && before >= 0 && before <= MAX_TOKEN_COUNT) expect(after).toBe(before);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
