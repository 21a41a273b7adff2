// Anthropic counts cache reads and writes apart from input_tokens; OpenAI's prompt_tokens includes them.
import type { ReportedUsage } from '../shared/stream-meter.js';
import type { AnthropicUsage } from './anthropic-api.js';

export function anthropicPromptUsage(usage: AnthropicUsage): ReportedUsage {
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const out: ReportedUsage = {};
  if (typeof usage.input_tokens === 'number') out.prompt_tokens = usage.input_tokens + cacheRead + cacheWrite;
  if (usage.cache_read_input_tokens != null) out.cached_prompt_tokens = cacheRead;
  if (usage.cache_creation_input_tokens != null) out.cache_write_prompt_tokens = cacheWrite;
  return out;
}

/**
 * The prompt counts of a stream: message_start's, updated by those a later event (message_delta, whose counts are
 * cumulative) repeats. A count it leaves out or sends as null keeps its earlier value.
 */
export function mergeAnthropicPromptCounts(earlier: AnthropicUsage, later: AnthropicUsage): AnthropicUsage {
  return {
    input_tokens: later.input_tokens ?? earlier.input_tokens,
    cache_creation_input_tokens: later.cache_creation_input_tokens ?? earlier.cache_creation_input_tokens,
    cache_read_input_tokens: later.cache_read_input_tokens ?? earlier.cache_read_input_tokens,
  };
}
