import { createRequire } from 'node:module';

type O200k = typeof import('gpt-tokenizer/encoding/o200k_base');

const require = createRequire(import.meta.url);
let loaded: O200k | undefined;

/**
 * The o200k_base tokenizer, loaded on first use: its tables cost ~70 MB of memory, and a gateway whose upstreams
 * report usage never needs them.
 */
function o200k(): O200k {
  loaded ??= require('gpt-tokenizer/encoding/o200k_base') as O200k;
  return loaded;
}

/** Special-token markers in user text are ordinary text for the upstream: counted as text, never rejected. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** `text` cut to its first `max` tokens, or null when it has no more than that. */
export function truncateToTokens(text: string, max: number): string | null {
  const tokens = o200k().encode(text, AS_TEXT);
  return tokens.length > max ? o200k().decode(tokens.slice(0, max)) : null;
}

/** Tokens of `text` in o200k_base (GPT-4o, GPT-4.1, o-series, GPT-5). */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : o200k().countTokens(text, AS_TEXT);
}
