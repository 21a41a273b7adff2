// Conversions between the gateway's Usage and the usage object of OpenAI bodies.
import type { OpenAIUsage } from '../openai-format.js';
import type { Usage } from '../spec.js';

export function toOpenAIUsage(usage: Usage): OpenAIUsage {
  const out: OpenAIUsage = {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
  if (usage.cached_prompt_tokens !== undefined) out.prompt_tokens_details = { cached_tokens: usage.cached_prompt_tokens };
  return out;
}

/** Usage of an OpenAI-format body, when it carries one with numbers. */
export function fromOpenAIUsage(usage: unknown): Usage | null {
  if (!usage || typeof usage !== 'object') return null;
  const u = usage as Partial<OpenAIUsage>;
  if (typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return null;
  const out: Usage = { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, estimated: false };
  const cached = u.prompt_tokens_details?.cached_tokens;
  if (typeof cached === 'number') out.cached_prompt_tokens = cached;
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') out.reasoning_tokens = reasoning;
  return out;
}
