import { describe, expect, it } from 'vitest';
import { BUILTIN_PRICES, PriceOverrides, PriceTable } from './prices.js';

describe('PriceTable.lookup', () => {
  const table = new PriceTable();

  it('finds models by their upstream id', () => {
    expect(table.lookup('openai', 'gpt-4o')).toMatchObject({ input: 2.5, output: 10, cached_input: 1.25, max_output_tokens: 16_384 });
    expect(table.lookup('anthropic', 'claude-sonnet-4-5')).toMatchObject({ input: 3, output: 15 });
    expect(table.lookup('groq', 'llama-3.3-70b-versatile')).toMatchObject({ input: 0.59, output: 0.79 });
    expect(table.lookup('deepseek', 'deepseek-reasoner')).toMatchObject({ input: 0.28, output: 0.42 });
  });

  it.each([
    ['openai', 'gpt-4o-2024-08-06', 'gpt-4o'],
    ['openai', 'gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['openai', 'gpt-4.1-nano-2025-04-14', 'gpt-4.1-nano'],
    ['openai', 'o3-mini-2025-01-31', 'o3-mini'],
    ['openai', 'gpt-5-2025-08-07', 'gpt-5'],
    ['anthropic', 'claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
    ['anthropic', 'claude-opus-4-1-20250805', 'claude-opus-4-1'],
    ['anthropic', 'claude-opus-4-20250514', 'claude-opus-4'],
    ['anthropic', 'claude-3-7-sonnet-latest', 'claude-3-7-sonnet'],
    ['vertex', 'claude-sonnet-4-5@20250929', 'claude-sonnet-4-5'],
    ['bedrock', 'anthropic.claude-sonnet-4-5-20250929-v1:0', 'anthropic.claude-sonnet-4-5'],
    ['bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'anthropic.claude-sonnet-4-5'],
    ['bedrock', 'global.anthropic.claude-haiku-4-5-20251001-v1:0', 'anthropic.claude-haiku-4-5'],
    ['bedrock', 'us.amazon.nova-pro-v1:0', 'amazon.nova-pro-v1:0'],
    ['gemini', 'gemini-2.0-flash-001', 'gemini-2.0-flash'],
    ['gemini', 'models/gemini-2.5-pro', 'gemini-2.5-pro'],
    ['gemini', 'gemini-2.5-flash-preview-09-2025', 'gemini-2.5-flash'],
    ['gemini', 'gemini-2.5-flash-lite-preview-06-17', 'gemini-2.5-flash-lite'],
    ['mistral', 'mistral-large-latest', 'mistral-large'],
    ['mistral', 'mistral-large-2411', 'mistral-large'],
    ['mistral', 'codestral-latest', 'codestral'],
    ['mistral', 'mistral-small-latest', 'mistral-small'],
    ['mock', 'mock-1', 'mock/*'],
    ['mock', 'anything', 'mock/*'],
    ['offline', 'mock-1', 'mock-1'],
  ])('%s/%s resolves to %s', (provider, model, key) => {
    expect(table.lookup(provider, model)).toBe(BUILTIN_PRICES[key]);
  });

  it.each([
    ['openai', 'gpt-4o-audio-preview'],
    ['openai', 'o3-pro'],
    ['openai', 'gpt-5-pro'],
    ['openai', 'gpt-5.1'],
    ['anthropic', 'claude-sonnet-4-5x'],
    ['openai', 'unknown-model'],
    ['gemini', 'gemini-2.5-flash-image'],
  ])('%s/%s, a different model, has no price', (provider, model) => {
    expect(table.lookup(provider, model)).toBeUndefined();
  });

  it('prefers the longest matching key', () => {
    expect(table.lookup('openai', 'gpt-4.1-mini-2025-04-14')).toBe(BUILTIN_PRICES['gpt-4.1-mini']);
    expect(table.lookup('anthropic', 'claude-sonnet-4-20250514')).toBe(BUILTIN_PRICES['claude-sonnet-4']);
  });

  it('gives every built-in entry valid prices and limits', () => {
    for (const [key, p] of Object.entries(BUILTIN_PRICES)) {
      expect(p.input, key).toBeGreaterThanOrEqual(0);
      expect(p.output, key).toBeGreaterThanOrEqual(0);
      expect(p.max_output_tokens, key).toBeTypeOf('number');
      expect(p.context_window, key).toBeGreaterThan(0);
      if (p.cached_input !== undefined) expect(p.cached_input, key).toBeLessThanOrEqual(p.input);
    }
  });
});

describe('PriceTable overrides', () => {
  it('replaces a built-in price and keeps its limits', () => {
    const table = new PriceTable({ 'gpt-4o': { input: 5, output: 15 } });
    const p = table.lookup('openai', 'gpt-4o-2024-11-20');
    expect(p).toEqual({ input: 5, output: 15, max_output_tokens: 16_384, context_window: 128_000 });
    expect(table.lookup('openai', 'gpt-4o-mini')).toBe(BUILTIN_PRICES['gpt-4o-mini']);
  });

  it('applies provider/model overrides to that provider only', () => {
    const table = new PriceTable({ 'azure/gpt-4o': { input: 2.75, output: 11, cached_input: 1.375 } });
    expect(table.lookup('azure', 'gpt-4o')).toMatchObject({ input: 2.75, output: 11, cached_input: 1.375, max_output_tokens: 16_384 });
    expect(table.lookup('azure', 'gpt-4o-2024-08-06')).toMatchObject({ input: 2.75 });
    expect(table.lookup('openai', 'gpt-4o')).toBe(BUILTIN_PRICES['gpt-4o']);
  });

  it('adds unknown models and provider-wide prices', () => {
    const table = new PriceTable({
      'my-finetune': { input: 1, output: 2, max_output_tokens: 1000 },
      'local/*': { input: 0, output: 0 },
    });
    expect(table.lookup('openai', 'my-finetune')).toEqual({ input: 1, output: 2, max_output_tokens: 1000 });
    expect(table.lookup('local', 'llama-anything')).toEqual({ input: 0, output: 0 });
    expect(table.lookup('other', 'llama-anything')).toBeUndefined();
  });

  it('prefers an exact model over a provider-wide price', () => {
    const table = new PriceTable({ 'openai/*': { input: 9, output: 9 } });
    expect(table.lookup('openai', 'gpt-4o')).toBe(BUILTIN_PRICES['gpt-4o']);
    expect(table.lookup('openai', 'gpt-9')).toEqual({ input: 9, output: 9 });
  });

  it('takes cache-write rates, 5-minute and 1-hour, validated like the others', () => {
    const overrides = { 'anthropic/claude-sonnet-4-5': { input: 3.3, output: 16.5, cache_write_input: 4.125, cache_write_1h_input: 6.6 } };
    expect(PriceOverrides.parse(overrides)).toEqual(overrides);
    const table = new PriceTable(PriceOverrides.parse(overrides));
    expect(table.lookup('anthropic', 'claude-sonnet-4-5-20250929')).toEqual({ ...overrides['anthropic/claude-sonnet-4-5'], max_output_tokens: 64_000, context_window: 1_000_000 });
    expect(PriceOverrides.safeParse({ m: { input: 1, output: 2, cache_write_1h_input: -1 } }).success).toBe(false);
    expect(PriceOverrides.safeParse({ m: { input: 1, output: 2, cache_write_1h_input: 2e6 } }).success).toBe(false);
    expect(PriceOverrides.safeParse({ m: { input: 1, output: 2, cache_write_1h_input: Number.POSITIVE_INFINITY } }).success).toBe(false);
  });

  it('validates the configuration shape', () => {
    expect(PriceOverrides.safeParse({ 'gpt-4o': { input: 1, output: 2, cached_input: 0.5, max_output_tokens: 10 } }).success).toBe(true);
    expect(PriceOverrides.safeParse({ 'gpt-4o': { input: -1, output: 2 } }).success).toBe(false);
    expect(PriceOverrides.safeParse({ 'gpt-4o': { input: 1, output: 2, typo: 1 } }).success).toBe(false);
  });
});
