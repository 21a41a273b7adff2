// Anthropic counts cached prompt tokens apart from input_tokens; OpenAI's prompt_tokens includes them.
import type { ReportedUsage } from '../shared/stream-meter.js';
import type { AnthropicUsage } from './anthropic-api.js';

export function anthropicPromptUsage(usage: AnthropicUsage): ReportedUsage {
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const out: ReportedUsage = {};
  if (typeof usage.input_tokens === 'number') out.prompt_tokens = usage.input_tokens + cacheRead + cacheWrite;
  if (usage.cache_read_input_tokens != null) out.cached_prompt_tokens = cacheRead;
  return out;
}
