import { describe, expect, it } from 'vitest';
import { costOf, maxOutputTokensFor, roundUsd, worstCaseCost } from './cost.js';
import { BUILTIN_PRICES, DEFAULT_MAX_OUTPUT_TOKENS } from './prices.js';

const p = BUILTIN_PRICES;

describe('costOf', () => {
  it('prices prompt and completion tokens per million', () => {
    expect(costOf(p['gpt-4o'], { prompt_tokens: 1000, completion_tokens: 500 })).toBe(0.0075);
    expect(costOf(p['gpt-4o-mini'], { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 })).toBe(0.75);
    expect(costOf(p['claude-opus-4-1'], { prompt_tokens: 12_345, completion_tokens: 678 })).toBe(0.236025);
  });

  it('bills cached prompt tokens at the cached rate', () => {
    expect(costOf(p['gpt-4o'], { prompt_tokens: 1000, cached_tokens: 400, completion_tokens: 0 })).toBe(0.002);
    expect(costOf(p['gpt-5'], { prompt_tokens: 10_000, cached_tokens: 8_000, completion_tokens: 1_000 })).toBe(0.0135);
  });

  it('bills cache writes at the cache-write rate', () => {
    // 500 x 3 + 200 x 0.3 + 300 x 3.75 + 100 x 15 = 4185 micro-USD
    expect(costOf(p['claude-sonnet-4-5'], { prompt_tokens: 1000, cached_tokens: 200, cache_write_tokens: 300, completion_tokens: 100 })).toBe(0.004185);
  });

  it('bills 1-hour cache writes at the 1-hour rate, the other writes at the cache-write rate', () => {
    // 500 x 3 + 200 x 0.3 + 200 x 3.75 + 100 x 6 + 100 x 15 = 4410 micro-USD
    const usage = { prompt_tokens: 1000, cached_tokens: 200, cache_write_tokens: 300, cache_write_1h_tokens: 100, completion_tokens: 100 };
    expect(costOf(p['claude-sonnet-4-5'], usage)).toBe(0.00441);
    // Every write a 1-hour one: 700 x 3 + 300 x 6 = 3900 micro-USD
    expect(costOf(p['claude-sonnet-4-5'], { prompt_tokens: 1000, cache_write_tokens: 300, cache_write_1h_tokens: 300, completion_tokens: 0 })).toBe(0.0039);
    // Long-context tier: 200_000 x 6 + 50_000 x 7.5 + 50_000 x 12 = 2_175_000 micro-USD
    const long = { prompt_tokens: 300_000, cache_write_tokens: 100_000, cache_write_1h_tokens: 50_000, completion_tokens: 0 };
    expect(costOf(p['claude-sonnet-4-5'], long)).toBe(2.175);
  });

  it('prices 1-hour cache writes at 2x input for every built-in Claude model', () => {
    const claude = Object.entries(p).filter(([id]) => /^(?:anthropic\.)?claude-/.test(id));
    expect(claude.length).toBeGreaterThanOrEqual(14);
    for (const [id, price] of claude) {
      expect(price.cache_write_1h_input, id).toBe(price.input * 2);
      if (price.long_context) expect(price.long_context.cache_write_1h_input, id).toBe(price.long_context.input * 2);
    }
  });

  it('without a 1-hour rate, bills 1-hour writes at cache_write_input, then at input', () => {
    const usage = { prompt_tokens: 1000, cache_write_tokens: 400, cache_write_1h_tokens: 100, completion_tokens: 0 };
    const withWriteRate = { input: 2, output: 0, cache_write_input: 2.5 };
    // 600 x 2 + 400 x 2.5 = 2200 micro-USD; with a 1-hour rate of 4: 600 x 2 + 300 x 2.5 + 100 x 4 = 2350
    expect(costOf(withWriteRate, usage)).toBe(0.0022);
    expect(costOf({ ...withWriteRate, cache_write_1h_input: 4 }, usage)).toBe(0.00235);
    // No cache-write rates at all: every prompt token at input; with only a 1-hour rate of 4: 900 x 2 + 100 x 4 = 2200
    expect(costOf({ input: 2, output: 0 }, usage)).toBe(0.002);
    expect(costOf({ input: 2, output: 0, cache_write_1h_input: 4 }, usage)).toBe(0.0022);
    // A long-context tier without a 1-hour rate takes the model's: 200_000 x 6 + 50_000 x 7.5 + 50_000 x 9 = 2_025_000
    const tiered = { input: 3, output: 0, cache_write_input: 3.75, cache_write_1h_input: 9, long_context: { above_prompt_tokens: 200_000, input: 6, output: 0, cache_write_input: 7.5 } };
    expect(costOf(tiered, { prompt_tokens: 300_000, cache_write_tokens: 100_000, cache_write_1h_tokens: 50_000, completion_tokens: 0 })).toBe(2.025);
  });

  it('counts no more 1-hour writes than writes', () => {
    // 900 x 3 + 100 x 6 = 3300 micro-USD: the 1-hour count is capped by the write count
    expect(costOf(p['claude-sonnet-4-5'], { prompt_tokens: 1000, cache_write_tokens: 100, cache_write_1h_tokens: 500, completion_tokens: 0 })).toBe(0.0033);
    // 1-hour writes without a write count are not writes: 1000 x 3
    expect(costOf(p['claude-sonnet-4-5'], { prompt_tokens: 1000, cache_write_1h_tokens: 500, completion_tokens: 0 })).toBe(0.003);
  });

  it('uses the long-context rates above the threshold', () => {
    expect(costOf(p['gemini-2.5-pro'], { prompt_tokens: 200_000, completion_tokens: 1000 })).toBe(0.26);
    expect(costOf(p['gemini-2.5-pro'], { prompt_tokens: 250_000, completion_tokens: 1000 })).toBe(0.64);
  });

  it('leaves no float dust', () => {
    expect(costOf({ input: 0.1, output: 0.2 }, { prompt_tokens: 1, completion_tokens: 1 })).toBe(3e-7);
    expect(costOf({ input: 0.7, output: 0.1 }, { prompt_tokens: 3, completion_tokens: 0 })).toBe(2.1e-6);
    expect(roundUsd(0.1 + 0.2)).toBe(0.3);
  });

  it('clamps nonsense usage', () => {
    expect(costOf(p['gpt-4o'], { prompt_tokens: 100, cached_tokens: 500, completion_tokens: -3 })).toBe(0.000125);
    expect(costOf(p['gpt-4o'], { prompt_tokens: Number.NaN, completion_tokens: 0 })).toBe(0);
  });

  it('embeddings cost only input', () => {
    expect(costOf(p['text-embedding-3-small'], { prompt_tokens: 1_000_000, completion_tokens: 0 })).toBe(0.02);
  });
});

describe('worstCaseCost', () => {
  it('is prompt bound x input + max output x output', () => {
    expect(worstCaseCost(p['gpt-4o'], 1000, 500)).toBe(0.0075);
    expect(worstCaseCost(p['gpt-4o-mini'], 2000, 16_384)).toBe(0.0101304);
  });

  it('assumes the dearest prompt rate (1-hour cache writes) and the long-context tier', () => {
    expect(worstCaseCost(p['claude-sonnet-4-5'], 1000, 0)).toBe(0.006);
    expect(worstCaseCost(p['claude-sonnet-4-5'], 300_000, 0)).toBe(3.6);
    expect(worstCaseCost(p['gemini-2.5-pro'], 300_000, 0)).toBe(0.75);
    // Without a 1-hour rate: the cache-write rate.
    expect(worstCaseCost({ input: 3, output: 15, cache_write_input: 3.75 }, 1000, 0)).toBe(0.00375);
  });

  it('is never below the cost of any usage within the bounds', () => {
    const price = p['claude-sonnet-4-5'];
    for (const [prompt, cached, written, written1h, completion] of [
      [1000, 0, 0, 0, 100],
      [1000, 1000, 0, 0, 100],
      [1000, 0, 1000, 0, 100],
      [1000, 0, 1000, 1000, 100],
      [250_000, 0, 250_000, 0, 64_000],
      [250_000, 0, 250_000, 250_000, 64_000],
    ]) {
      const usage = { prompt_tokens: prompt, cached_tokens: cached, cache_write_tokens: written, cache_write_1h_tokens: written1h, completion_tokens: completion };
      expect(worstCaseCost(price, prompt, completion)).toBeGreaterThanOrEqual(costOf(price, usage));
    }
  });
});

describe('maxOutputTokensFor', () => {
  it('caps the request by the model', () => {
    expect(maxOutputTokensFor(p['gpt-4o'], null)).toBe(16_384);
    expect(maxOutputTokensFor(p['gpt-4o'], 100)).toBe(100);
    expect(maxOutputTokensFor(p['gpt-4o'], 1e9)).toBe(16_384);
    expect(maxOutputTokensFor({ input: 1, output: 1 }, undefined)).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
  });
});
