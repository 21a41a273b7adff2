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

  it('assumes the dearest prompt rate (cache writes) and the long-context tier', () => {
    expect(worstCaseCost(p['claude-sonnet-4-5'], 1000, 0)).toBe(0.00375);
    expect(worstCaseCost(p['gemini-2.5-pro'], 300_000, 0)).toBe(0.75);
  });

  it('is never below the cost of any usage within the bounds', () => {
    const price = p['claude-sonnet-4-5'];
    for (const [prompt, cached, written, completion] of [
      [1000, 0, 0, 100],
      [1000, 1000, 0, 100],
      [1000, 0, 1000, 100],
      [250_000, 0, 250_000, 64_000],
    ]) {
      const actual = costOf(price, { prompt_tokens: prompt, cached_tokens: cached, cache_write_tokens: written, completion_tokens: completion });
      expect(worstCaseCost(price, prompt, completion)).toBeGreaterThanOrEqual(actual);
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
