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
  // Of those writes, the ones kept an hour (a cachePoint with ttl "1h"): billed at the 1-hour cache-write rate.
  if (Array.isArray(usage.cacheDetails) && usage.cacheDetails.length > 0) {
    let hour = 0;
    for (const d of usage.cacheDetails) if (d?.ttl === '1h' && typeof d.inputTokens === 'number') hour += d.inputTokens;
    out.cache_write_1h_prompt_tokens = hour;
  }
  return out;
}
