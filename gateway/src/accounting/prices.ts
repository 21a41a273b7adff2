import { z } from 'zod';

/** Prices of one model: USD per million tokens, plus the limits that bound a request's worst case. */
export interface ModelPrice {
  /** USD per million prompt tokens not served from a cache. */
  input: number;
  /** USD per million completion tokens (reasoning tokens included). */
  output: number;
  /** USD per million prompt tokens read from the provider's prompt cache; `input` when absent. */
  cached_input?: number;
  /** USD per million prompt tokens written to the prompt cache (Anthropic, 5-minute cache); `input` when absent. */
  cache_write_input?: number;
  /** USD per million prompt tokens written to the 1-hour prompt cache (Anthropic); `cache_write_input` when absent. */
  cache_write_1h_input?: number;
  /** Most completion tokens the model can produce in one response. */
  max_output_tokens?: number;
  /** Most tokens (prompt + completion) the model accepts. */
  context_window?: number;
  /** USD per web search the provider runs itself (Anthropic's web search tool, OpenAI's web_search); WEB_SEARCH_USD when absent. */
  web_search_per_call?: number;
  /** Higher rates for the whole request once the prompt passes a size (Gemini 2.5 Pro, Claude Sonnet with 1M context). */
  long_context?: {
    above_prompt_tokens: number;
    input: number;
    output: number;
    cached_input?: number;
    cache_write_input?: number;
    cache_write_1h_input?: number;
  };
}

/** Used for worst-case cost when neither the request nor the price table bounds the output. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 32_768;

/** What Anthropic and OpenAI bill per web search their models run (USD 10 per 1,000), unless a price says otherwise. */
export const WEB_SEARCH_USD = 0.01;

const anthropic = {
  'claude-opus-4-1': { input: 15, output: 75, cached_input: 1.5, cache_write_input: 18.75, cache_write_1h_input: 30, max_output_tokens: 32_000, context_window: 200_000 },
  'claude-opus-4': { input: 15, output: 75, cached_input: 1.5, cache_write_input: 18.75, cache_write_1h_input: 30, max_output_tokens: 32_000, context_window: 200_000 },
  'claude-sonnet-4-5': {
    input: 3, output: 15, cached_input: 0.3, cache_write_input: 3.75, cache_write_1h_input: 6, max_output_tokens: 64_000, context_window: 1_000_000,
    long_context: { above_prompt_tokens: 200_000, input: 6, output: 22.5, cached_input: 0.6, cache_write_input: 7.5, cache_write_1h_input: 12 },
  },
  'claude-sonnet-4': {
    input: 3, output: 15, cached_input: 0.3, cache_write_input: 3.75, cache_write_1h_input: 6, max_output_tokens: 64_000, context_window: 1_000_000,
    long_context: { above_prompt_tokens: 200_000, input: 6, output: 22.5, cached_input: 0.6, cache_write_input: 7.5, cache_write_1h_input: 12 },
  },
  'claude-3-7-sonnet': { input: 3, output: 15, cached_input: 0.3, cache_write_input: 3.75, cache_write_1h_input: 6, max_output_tokens: 64_000, context_window: 200_000 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cached_input: 0.08, cache_write_input: 1, cache_write_1h_input: 1.6, max_output_tokens: 8_192, context_window: 200_000 },
  'claude-haiku-4-5': { input: 1, output: 5, cached_input: 0.1, cache_write_input: 1.25, cache_write_1h_input: 2, max_output_tokens: 64_000, context_window: 200_000 },
} satisfies Record<string, ModelPrice>;

const MOCK_PRICE: ModelPrice = { input: 0.5, output: 1.5, cached_input: 0.25, max_output_tokens: 4_096, context_window: 128_000 };

/**
 * The built-in price table, keyed by upstream model id (list prices, standard tier, late 2025).
 * Dated and versioned ids resolve to these keys (see PriceTable.lookup); `provider/*` keys price every model of a provider.
 */
export const BUILTIN_PRICES: Readonly<Record<string, ModelPrice>> = {
  // OpenAI
  'gpt-4o': { input: 2.5, output: 10, cached_input: 1.25, max_output_tokens: 16_384, context_window: 128_000 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075, max_output_tokens: 16_384, context_window: 128_000 },
  'gpt-4.1': { input: 2, output: 8, cached_input: 0.5, max_output_tokens: 32_768, context_window: 1_047_576 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cached_input: 0.1, max_output_tokens: 32_768, context_window: 1_047_576 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cached_input: 0.025, max_output_tokens: 32_768, context_window: 1_047_576 },
  'o3': { input: 2, output: 8, cached_input: 0.5, max_output_tokens: 100_000, context_window: 200_000 },
  'o3-mini': { input: 1.1, output: 4.4, cached_input: 0.55, max_output_tokens: 100_000, context_window: 200_000 },
  'o4-mini': { input: 1.1, output: 4.4, cached_input: 0.275, max_output_tokens: 100_000, context_window: 200_000 },
  'gpt-5': { input: 1.25, output: 10, cached_input: 0.125, max_output_tokens: 128_000, context_window: 400_000 },
  'gpt-5-mini': { input: 0.25, output: 2, cached_input: 0.025, max_output_tokens: 128_000, context_window: 400_000 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cached_input: 0.005, max_output_tokens: 128_000, context_window: 400_000 },
  'text-embedding-3-small': { input: 0.02, output: 0, max_output_tokens: 0, context_window: 8_191 },
  'text-embedding-3-large': { input: 0.13, output: 0, max_output_tokens: 0, context_window: 8_191 },
  'text-embedding-ada-002': { input: 0.1, output: 0, max_output_tokens: 0, context_window: 8_191 },

  // Anthropic, and the same models on Bedrock (`anthropic.<id>-<date>-v1:0`)
  ...anthropic,
  ...Object.fromEntries(Object.entries(anthropic).map(([id, price]) => [`anthropic.${id}`, price])),

  // Gemini (API list prices; context-cache storage per hour is not billed per request and is left out)
  'gemini-2.5-pro': {
    input: 1.25, output: 10, cached_input: 0.125, max_output_tokens: 65_536, context_window: 1_048_576,
    long_context: { above_prompt_tokens: 200_000, input: 2.5, output: 15, cached_input: 0.25 },
  },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cached_input: 0.03, max_output_tokens: 65_536, context_window: 1_048_576 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4, cached_input: 0.01, max_output_tokens: 65_536, context_window: 1_048_576 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4, cached_input: 0.025, max_output_tokens: 8_192, context_window: 1_048_576 },
  // Free of charge on the Gemini API.
  'text-embedding-004': { input: 0, output: 0, max_output_tokens: 0, context_window: 2_048 },
  'gemini-embedding-001': { input: 0.15, output: 0, max_output_tokens: 0, context_window: 2_048 },

  // Mistral: keyed by family so both `-latest` and dated ids (`mistral-large-2411`) resolve; no separate output cap is published.
  'mistral-large': { input: 2, output: 6, max_output_tokens: 131_072, context_window: 131_072 },
  'mistral-small': { input: 0.1, output: 0.3, max_output_tokens: 131_072, context_window: 131_072 },
  'codestral': { input: 0.3, output: 0.9, max_output_tokens: 256_000, context_window: 256_000 },
  'mistral-embed': { input: 0.1, output: 0, max_output_tokens: 0, context_window: 8_192 },

  // Bedrock (on-demand, us-east-1)
  'amazon.nova-pro-v1:0': { input: 0.8, output: 3.2, cached_input: 0.2, max_output_tokens: 10_000, context_window: 300_000 },
  'amazon.nova-lite-v1:0': { input: 0.06, output: 0.24, cached_input: 0.015, max_output_tokens: 10_000, context_window: 300_000 },
  'meta.llama3-3-70b-instruct-v1:0': { input: 0.72, output: 0.72, max_output_tokens: 8_192, context_window: 128_000 },

  // DeepSeek (V3.2 prices; cached_input is the cache-hit rate)
  'deepseek-chat': { input: 0.28, output: 0.42, cached_input: 0.028, max_output_tokens: 8_192, context_window: 128_000 },
  'deepseek-reasoner': { input: 0.28, output: 0.42, cached_input: 0.028, max_output_tokens: 65_536, context_window: 128_000 },

  // Groq
  'llama-3.3-70b-versatile': { input: 0.59, output: 0.79, max_output_tokens: 32_768, context_window: 131_072 },

  // The offline mock provider: a small price so budgets can be tried without an upstream.
  'mock/*': MOCK_PRICE,
  'mock': MOCK_PRICE,
  'mock-1': MOCK_PRICE,
};

const usdPerMillion = z.number().finite().min(0, { message: 'must be >= 0' }).max(1e6, { message: 'must be at most 1e6' });
const tokenCount = z.number().int().min(0).max(1e9);

/** One `prices` entry of the server configuration: overrides or adds a model's price. */
export const PriceOverride = z.strictObject({
  input: usdPerMillion,
  output: usdPerMillion,
  cached_input: usdPerMillion.optional(),
  cache_write_input: usdPerMillion.optional(),
  cache_write_1h_input: usdPerMillion.optional(),
  max_output_tokens: tokenCount.optional(),
  context_window: tokenCount.optional(),
  /** USD per web search the provider runs (default 0.01). */
  web_search_per_call: z.number().finite().min(0).max(100).optional(),
});
export type PriceOverride = z.infer<typeof PriceOverride>;

/** `prices` of the server configuration: `"<model>"`, `"<provider>/<model>"` or `"<provider>/*"` -> price. */
export const PriceOverrides = z.record(z.string().min(1).max(300), PriceOverride);
export type PriceOverrides = z.infer<typeof PriceOverrides>;

/**
 * What may follow a table key in a dated or versioned model id: dates (`-2024-08-06`, `-20250929`, `@20250929`),
 * revisions (`-001`, `-2411`, `-preview-05-20`), `-latest`, `-exp` and Bedrock versions (`-v1:0`).
 * Anything else (`-mini`, `-pro`, `-audio`) names a different model with a different price, so it does not match.
 */
const VERSION_SUFFIX = /^(?:[-@](?:\d{2,8}|latest|preview|exp|v\d+)|:\d+)+$/;

/** Bedrock cross-region inference profiles prefix the model id with a geography. */
const INFERENCE_PROFILE = /^(?:us|us-gov|eu|apac|jp|au|ca|global)\./;

const CACHE_LIMIT = 10_000;

/** The built-in table overlaid with the configuration's `prices`: the one place a model's price is decided. */
export class PriceTable {
  private readonly table = new Map<string, ModelPrice>();
  private readonly cache = new Map<string, ModelPrice | null>();

  constructor(overrides: PriceOverrides = {}, builtin: Readonly<Record<string, ModelPrice>> = BUILTIN_PRICES) {
    for (const [key, price] of Object.entries(builtin)) this.table.set(key, price);
    const builtinOnly = new Map(this.table);
    for (const [key, o] of Object.entries(overrides)) {
      // An override sets the prices; limits it leaves out come from the built-in model it replaces.
      const slash = key.indexOf('/');
      const base =
        resolve(builtinOnly, '', key) ?? (slash > 0 ? resolve(builtinOnly, key.slice(0, slash), key.slice(slash + 1)) : undefined);
      const price: ModelPrice = { input: o.input, output: o.output };
      if (o.cached_input !== undefined) price.cached_input = o.cached_input;
      if (o.cache_write_input !== undefined) price.cache_write_input = o.cache_write_input;
      if (o.cache_write_1h_input !== undefined) price.cache_write_1h_input = o.cache_write_1h_input;
      const maxOut = o.max_output_tokens ?? base?.max_output_tokens;
      if (maxOut !== undefined) price.max_output_tokens = maxOut;
      const ctx = o.context_window ?? base?.context_window;
      if (ctx !== undefined) price.context_window = ctx;
      const perSearch = o.web_search_per_call ?? base?.web_search_per_call;
      if (perSearch !== undefined) price.web_search_per_call = perSearch;
      this.table.set(key, price);
    }
  }

  /**
   * The price of `model` as served by the provider named `provider`, or undefined when unknown.
   * Most specific first: `provider/model`, `model`, then the longest key a dated variant extends, then `provider/*`.
   */
  lookup(provider: string, model: string): ModelPrice | undefined {
    const cacheKey = `${provider}\u0000${model}`;
    const hit = this.cache.get(cacheKey);
    if (hit !== undefined) return hit ?? undefined;
    const price = resolve(this.table, provider, model);
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(cacheKey, price ?? null);
    return price;
  }
}

function resolve(table: Map<string, ModelPrice>, provider: string, model: string): ModelPrice | undefined {
  const ids = [model];
  const bare = model.replace(/^models\//, '').replace(INFERENCE_PROFILE, '');
  if (bare !== model) ids.push(bare);
  const names = provider ? ids.flatMap((id) => [`${provider}/${id}`, id]) : ids;
  for (const name of names) {
    const price = table.get(name);
    if (price) return price;
  }
  for (const name of names) {
    const price = longestVersionedPrefix(table, name);
    if (price) return price;
  }
  return provider ? table.get(`${provider}/*`) : undefined;
}

function longestVersionedPrefix(table: Map<string, ModelPrice>, name: string): ModelPrice | undefined {
  for (let i = name.length - 1; i > 0; i--) {
    const c = name[i];
    if (c !== '-' && c !== '@' && c !== ':') continue;
    const price = table.get(name.slice(0, i));
    if (price && VERSION_SUFFIX.test(name.slice(i))) return price;
  }
  return undefined;
}
