import type { Usage } from '../providers/spec.js';

/** The largest token count a usage record holds (PostgreSQL's integer). */
export const MAX_TOKEN_COUNT = 2_147_483_647;

const COUNT_FIELDS = ['prompt_tokens', 'completion_tokens', 'cached_prompt_tokens', 'cache_write_prompt_tokens', 'cache_write_1h_prompt_tokens', 'reasoning_tokens', 'web_search_calls'] as const;

const validCount = (n: number | undefined) => n === undefined || (Number.isInteger(n) && n >= 0 && n <= MAX_TOKEN_COUNT);

/**
 * An upstream's token counts as the gateway bills and records them: whole numbers from 0 to MAX_TOKEN_COUNT. A count
 * that is not (a fraction, a negative or non-finite number, one too large to store) is rounded up, or taken as 0 when it
 * is no count at all, and the usage is marked estimated. Usage that is already sound is returned as it is.
 */
export function checkedUsage(usage: Usage): Usage {
  let out: Usage | undefined;
  for (const f of COUNT_FIELDS) {
    const n = usage[f];
    if (validCount(n)) continue;
    out ??= { ...usage, estimated: true };
    out[f] = typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.min(Math.ceil(n), MAX_TOKEN_COUNT) : 0;
  }
  return out ?? usage;
}
