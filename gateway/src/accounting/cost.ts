import { DEFAULT_MAX_OUTPUT_TOKENS, type ModelPrice, WEB_SEARCH_USD } from './prices.js';

/** Token usage of one request, as the provider reports it (OpenAI shape). */
export interface TokenUsage {
  /** All prompt tokens, cached and cache-written ones included. */
  prompt_tokens: number;
  /** All completion tokens, reasoning tokens included. */
  completion_tokens: number;
  /** Prompt tokens read from the prompt cache. */
  cached_tokens?: number;
  /** Prompt tokens written to the prompt cache (Anthropic `cache_creation_input_tokens`), 1-hour writes included. */
  cache_write_tokens?: number;
  /** Of `cache_write_tokens`, those written to the 1-hour cache (Anthropic `cache_creation.ephemeral_1h_input_tokens`). */
  cache_write_1h_tokens?: number;
  /** Web searches the provider ran itself, billed per search. */
  web_search_calls?: number;
}

/** Money is rounded to 1e-10 USD once, here, so sums of costs carry no float dust. */
/** `usd` rounded to the nearest 1e-10 USD. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e10) / 1e10 || 0;
}

/** The rates that apply to a request with `promptTokens` prompt tokens (long-context tiers raise all of them). */
function ratesFor(price: ModelPrice, promptTokens: number) {
  const tier = price.long_context && promptTokens > price.long_context.above_prompt_tokens ? price.long_context : undefined;
  const input = tier?.input ?? price.input;
  const cacheWrite = tier?.cache_write_input ?? price.cache_write_input ?? input;
  return {
    input,
    output: tier?.output ?? price.output,
    cached: tier?.cached_input ?? price.cached_input ?? input,
    cacheWrite,
    cacheWrite1h: tier?.cache_write_1h_input ?? price.cache_write_1h_input ?? cacheWrite,
  };
}

const count = (n: number | undefined) => (n !== undefined && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

/**
 * The cost in USD of a request that used `usage`: uncached prompt x input + cached x cached_input
 * + 5-minute cache writes x cache_write_input + 1-hour cache writes x cache_write_1h_input + completion x output
 * + web searches x web_search_per_call.
 */
export function costOf(price: ModelPrice, usage: TokenUsage): number {
  const prompt = count(usage.prompt_tokens);
  const cached = Math.min(count(usage.cached_tokens), prompt);
  const written = Math.min(count(usage.cache_write_tokens), prompt - cached);
  const written1h = Math.min(count(usage.cache_write_1h_tokens), written);
  const r = ratesFor(price, prompt);
  const micro =
    (prompt - cached - written) * r.input +
    cached * r.cached +
    (written - written1h) * r.cacheWrite +
    written1h * r.cacheWrite1h +
    count(usage.completion_tokens) * r.output;
  return roundUsd(micro / 1e6 + webSearchCost(price, usage.web_search_calls));
}

/** What `searches` web searches run by the provider cost (Anthropic and OpenAI bill each one). */
export function webSearchCost(price: ModelPrice, searches: number | undefined): number {
  return roundUsd(count(searches) * (price.web_search_per_call ?? WEB_SEARCH_USD));
}

/**
 * The most a request can cost: every prompt token at the highest prompt rate (cache writes, 1-hour ones most, cost more than plain input)
 * and `maxOutputTokens` completion tokens. Used for budget reservations and the per-request cost cap.
 */
export function worstCaseCost(price: ModelPrice, promptTokensUpperBound: number, maxOutputTokens: number): number {
  // No prompt the model accepts is longer than its context window.
  const prompt = count(Math.min(promptTokensUpperBound, price.context_window ?? Infinity));
  const r = ratesFor(price, prompt);
  const micro = prompt * Math.max(r.input, r.cacheWrite, r.cacheWrite1h) + count(maxOutputTokens) * r.output;
  return roundUsd(micro / 1e6);
}

/** The completion tokens to reserve for: what the request asks for, capped by what the model can produce. */
export function maxOutputTokensFor(price: ModelPrice, requested?: number | null): number {
  const cap = price.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  return requested === undefined || requested === null ? cap : Math.max(0, Math.min(Math.floor(requested), cap));
}
