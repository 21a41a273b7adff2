// Gemini usageMetadata -> the gateway's usage; thinking tokens are billed as output, as OpenAI counts reasoning tokens.
import type { ReportedUsage } from '../shared/stream-meter.js';
import type { GeminiUsageMetadata } from './gemini-api.js';

export function geminiUsage(meta: GeminiUsageMetadata | undefined): ReportedUsage {
  if (!meta) return {};
  const out: ReportedUsage = {};
  if (typeof meta.promptTokenCount === 'number') out.prompt_tokens = meta.promptTokenCount + (meta.toolUsePromptTokenCount ?? 0);
  if (typeof meta.candidatesTokenCount === 'number' || typeof meta.thoughtsTokenCount === 'number') {
    out.completion_tokens = (meta.candidatesTokenCount ?? 0) + (meta.thoughtsTokenCount ?? 0);
  } else if (out.prompt_tokens !== undefined) {
    // An answer with no candidates (blocked prompt) produced no output.
    out.completion_tokens = 0;
  }
  if (typeof meta.cachedContentTokenCount === 'number') out.cached_prompt_tokens = meta.cachedContentTokenCount;
  if (typeof meta.thoughtsTokenCount === 'number') out.reasoning_tokens = meta.thoughtsTokenCount;
  return out;
}
