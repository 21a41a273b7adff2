// Anthropic counts cache reads and writes apart from input_tokens; OpenAI's prompt_tokens includes them.
// cache_creation splits the writes by cache lifetime: 1-hour writes cost more than 5-minute ones. server_tool_use counts
// the web searches Anthropic ran, billed per search.
import type { ReportedUsage } from '../shared/stream-meter.js';
import type { AnthropicCacheCreation, AnthropicUsage } from './anthropic-api.js';

export function anthropicPromptUsage(usage: AnthropicUsage): ReportedUsage {
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const out: ReportedUsage = {};
  if (typeof usage.input_tokens === 'number') out.prompt_tokens = usage.input_tokens + cacheRead + cacheWrite;
  if (usage.cache_read_input_tokens != null) out.cached_prompt_tokens = cacheRead;
  if (usage.cache_creation_input_tokens != null) out.cache_write_prompt_tokens = cacheWrite;
  const cacheWrite1h = usage.cache_creation?.ephemeral_1h_input_tokens;
  if (cacheWrite1h != null) out.cache_write_1h_prompt_tokens = cacheWrite1h;
  const searches = usage.server_tool_use?.web_search_requests;
  if (searches != null) out.web_search_calls = searches;
  return out;
}

/**
 * The prompt counts of a stream: message_start's, updated by those a later event (message_delta, whose counts are
 * cumulative) repeats. A count it leaves out or sends as null keeps its earlier value.
 */
export function mergeAnthropicPromptCounts(earlier: AnthropicUsage, later: AnthropicUsage): AnthropicUsage {
  const merged: AnthropicUsage = {
    input_tokens: later.input_tokens ?? earlier.input_tokens,
    cache_creation_input_tokens: later.cache_creation_input_tokens ?? earlier.cache_creation_input_tokens,
    cache_read_input_tokens: later.cache_read_input_tokens ?? earlier.cache_read_input_tokens,
  };
  const split: AnthropicCacheCreation = {
    ephemeral_5m_input_tokens: later.cache_creation?.ephemeral_5m_input_tokens ?? earlier.cache_creation?.ephemeral_5m_input_tokens,
    ephemeral_1h_input_tokens: later.cache_creation?.ephemeral_1h_input_tokens ?? earlier.cache_creation?.ephemeral_1h_input_tokens,
  };
  if (split.ephemeral_5m_input_tokens != null || split.ephemeral_1h_input_tokens != null) merged.cache_creation = split;
  // Cumulative too: the searches run so far.
  const searches = later.server_tool_use?.web_search_requests ?? earlier.server_tool_use?.web_search_requests;
  if (searches != null) merged.server_tool_use = { web_search_requests: searches };
  return merged;
}
