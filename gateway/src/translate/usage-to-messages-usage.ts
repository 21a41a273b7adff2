// The gateway's Usage -> Anthropic's usage, whose input_tokens leave out cache reads and writes (prompt_tokens includes them).
import type { Usage } from '../providers/spec.js';
import type { MessagesUsage } from './messages-api.js';

export function usageToMessagesUsage(usage: Usage): MessagesUsage {
  const cacheRead = usage.cached_prompt_tokens ?? 0;
  const cacheWrite = usage.cache_write_prompt_tokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.prompt_tokens - cacheRead - cacheWrite),
    output_tokens: usage.completion_tokens,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
}
