import { describe, expect, it } from 'vitest';
import { anthropicPromptUsage, mergeAnthropicPromptCounts } from './convert-anthropic-usage.js';

describe('anthropic usage conversion', () => {
  it('reports the 1-hour share of the cache writes from cache_creation', () => {
    const usage = {
      input_tokens: 21,
      cache_creation_input_tokens: 1873,
      cache_read_input_tokens: 2048,
      cache_creation: { ephemeral_5m_input_tokens: 349, ephemeral_1h_input_tokens: 1524 },
    };
    expect(anthropicPromptUsage(usage)).toEqual({
      prompt_tokens: 3942,
      cached_prompt_tokens: 2048,
      cache_write_prompt_tokens: 1873,
      cache_write_1h_prompt_tokens: 1524,
    });
    // Older API versions send no split: no 1-hour count, every write at the 5-minute rate.
    expect(anthropicPromptUsage({ input_tokens: 21, cache_creation_input_tokens: 1873 })).toEqual({ prompt_tokens: 1894, cache_write_prompt_tokens: 1873 });
  });

  it('keeps the split of message_start when a later event repeats the counts without it', () => {
    const start = {
      input_tokens: 21,
      cache_creation_input_tokens: 1873,
      cache_read_input_tokens: 2048,
      cache_creation: { ephemeral_5m_input_tokens: 349, ephemeral_1h_input_tokens: 1524 },
    };
    const merged = mergeAnthropicPromptCounts(mergeAnthropicPromptCounts({}, start), { input_tokens: 21, cache_creation_input_tokens: 1873, output_tokens: 9 });
    expect(merged.cache_creation).toEqual({ ephemeral_5m_input_tokens: 349, ephemeral_1h_input_tokens: 1524 });
    expect(anthropicPromptUsage(merged).cache_write_1h_prompt_tokens).toBe(1524);
    // A split the later event does send wins, count by count.
    const later = mergeAnthropicPromptCounts(merged, { cache_creation: { ephemeral_1h_input_tokens: 1600, ephemeral_5m_input_tokens: null } });
    expect(later.cache_creation).toEqual({ ephemeral_5m_input_tokens: 349, ephemeral_1h_input_tokens: 1600 });
  });
});
