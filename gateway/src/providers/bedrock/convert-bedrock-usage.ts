// Bedrock counts cache reads and writes apart from inputTokens; OpenAI's prompt_tokens includes them.
import type { ReportedUsage } from '../shared/stream-meter.js';
import type { BedrockUsage } from './bedrock-api.js';

export function bedrockUsage(usage: BedrockUsage | undefined): ReportedUsage {
  if (!usage) return {};
  const out: ReportedUsage = {};
  if (typeof usage.inputTokens === 'number') {
    out.prompt_tokens = usage.inputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheWriteInputTokens ?? 0);
  }
  if (typeof usage.outputTokens === 'number') out.completion_tokens = usage.outputTokens;
  if (typeof usage.cacheReadInputTokens === 'number') out.cached_prompt_tokens = usage.cacheReadInputTokens;
  if (typeof usage.cacheWriteInputTokens === 'number') out.cache_write_prompt_tokens = usage.cacheWriteInputTokens;
  return out;
}
