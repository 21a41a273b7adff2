// The adapter interface the request pipeline calls: OpenAI format in, OpenAI format out, whatever the upstream speaks.
import type { ProviderType } from '../contract/system.js';
import type {
  OpenAIChatCompletion,
  OpenAIChatRequest,
  OpenAIEmbeddingsRequest,
  OpenAIEmbeddingsResponse,
} from './openai-format.js';

export type * from './openai-format.js';

/** Token counts for billing. `estimated` is true when any part was counted locally (o200k_base) instead of reported upstream. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Prompt tokens served from the provider's prompt cache (included in prompt_tokens). */
  cached_prompt_tokens?: number;
  /**
   * Prompt tokens written to the provider's prompt cache (included in prompt_tokens; billed at the cache-write rate).
   * For billing only: OpenAI's usage object has no field for it, so clients never see it.
   */
  cache_write_prompt_tokens?: number;
  /**
   * Of cache_write_prompt_tokens, those written to Anthropic's 1-hour cache (billed at the 1-hour cache-write rate).
   * For billing only, like cache_write_prompt_tokens.
   */
  cache_write_1h_prompt_tokens?: number;
  /** Of completion_tokens, those spent reasoning, when the provider reports it. */
  reasoning_tokens?: number;
  /** Web searches the provider ran itself and bills per search (Anthropic's web search tool, OpenAI's web_search calls). */
  web_search_calls?: number;
  estimated: boolean;
}

/**
 * How a call learns that its caller went away. An AbortSignal is one; the data plane passes a lighter one of its own
 * (an AbortSignal per request was a measurable share of the gateway's work). undici takes either.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface CallContext {
  /** Upstream model id, without the `provider/` prefix (for Azure: the model name, mapped to its deployment by the adapter). */
  model: string;
  /** Aborting it cancels the upstream request (client disconnect, deadline). */
  signal: CancelSignal;
  requestId: string;
  /**
   * Streams only: emit the final usage chunk to the client. Defaults to `body.stream_options.include_usage`.
   * Usage is always captured for billing, whatever this says.
   */
  includeUsage?: boolean;
}

export interface ChatResult {
  /** The completion in OpenAI format (`model` is the upstream's model id). */
  body: OpenAIChatCompletion;
  usage: Usage;
  /** The upstream's own JSON text of `body`, when nothing was changed: sent on as is, not serialised again. */
  raw?: string;
}

/**
 * A streamed completion. Iterate it once: each value is one complete SSE frame, `data: {chat.completion.chunk}\n\n`,
 * yielded as soon as it is parsed; the final `data: [DONE]\n\n` is never yielded (the caller writes it).
 * Iteration throws an AgentgwError when the upstream fails mid-stream; it ends quietly when ctx.signal aborts.
 * Breaking out of the loop (or aborting ctx.signal) releases the upstream connection.
 */
export interface ChatStream extends AsyncIterable<string> {
  /** After iteration ends, fails or is aborted: what the upstream reported, else estimated from what was streamed so far. */
  usage(): Usage;
  /** The finish_reason seen so far (null until the upstream sends one). */
  finishReason(): string | null;
  /**
   * Optional: every frame already parsed and waiting, joined, taken out of the stream (null when none waits), so a caller
   * can send what one upstream read produced in one write. The frames are not yielded again.
   */
  takeReady?(): string | null;
}

export interface EmbeddingsResult {
  body: OpenAIEmbeddingsResponse;
  usage: Usage;
  /** As ChatResult.raw: the upstream's own JSON text of `body`, when nothing was changed (vectors are costly to serialise). */
  raw?: string;
}

/** A call of Anthropic's Messages API sent natively: the body as the client wrote it (with the target's model). */
export interface MessagesCallContext extends CallContext {
  /** anthropic-version and anthropic-beta as the client sent them; the adapter's configured version when absent. */
  clientHeaders: Record<string, string>;
  /** `?beta=true` when the client asked for it, else ''. */
  query: string;
  /** Counts the prompt when the upstream reports no usage. */
  estimatePromptTokens: () => number;
}

export interface MessagesResult {
  /** The upstream's JSON text of the message, passed on as it is. */
  text: string;
  usage: Usage;
}

/**
 * The Messages API of an upstream that speaks it: request and answer pass through as sent. Its stream's frames are the
 * upstream's own SSE events (`event: ...\ndata: ...\n\n`), unchanged.
 */
export interface NativeMessages {
  /** Whether the upstream model speaks the Messages API (on Bedrock, Claude models only). */
  serves(model: string): boolean;
  /** `body` is the client's request (ctx.model names the upstream model); the adapter writes it in its envelope. */
  create(ctx: MessagesCallContext, body: Record<string, unknown>): Promise<MessagesResult>;
  stream(ctx: MessagesCallContext, body: Record<string, unknown>): Promise<ChatStream>;
  /** POST /messages/count_tokens: the upstream's JSON text, `{"input_tokens": N}`. */
  countTokens(ctx: MessagesCallContext, body: Record<string, unknown>): Promise<string>;
}

/** A call of OpenAI's Responses API sent natively: the body as the client wrote it (with the target's model). */
export interface ResponsesCallContext extends CallContext {
  /** Counts the prompt when the upstream reports no usage. */
  estimatePromptTokens: () => number;
}

export interface ResponsesResult {
  /** The upstream's JSON text of the response object, passed on as it is. */
  text: string;
  /** The same, parsed. */
  value: Record<string, unknown>;
  usage: Usage;
}

/** A native Responses stream: frames are the upstream's own SSE events (`event: ...\ndata: ...\n\n`), unchanged. */
export interface ResponsesStream extends ChatStream {
  /**
   * After iteration: the response object of the terminal event (`response.completed`, `response.incomplete` or
   * `response.failed`), parsed; null when the stream ended without one.
   */
  finalResponse(): Record<string, unknown> | null;
}

/** OpenAI's Responses API of an upstream that speaks it: request and answer pass through as sent. */
export interface NativeResponses {
  /** `body` is the client's request (ctx.model names the upstream model); `stream` is set by the adapter. */
  create(ctx: ResponsesCallContext, body: Record<string, unknown>): Promise<ResponsesResult>;
  stream(ctx: ResponsesCallContext, body: Record<string, unknown>): Promise<ResponsesStream>;
}

/** A call of Gemini's generateContent sent natively: the body as the client wrote it (the model is in the path). */
export interface GeminiCallContext extends CallContext {
  /** Counts the prompt when the upstream reports no usage. */
  estimatePromptTokens: () => number;
}

export interface GeminiResult {
  /** The upstream's JSON text of the GenerateContentResponse, passed on as it is. */
  text: string;
  /** The same, parsed. */
  value: Record<string, unknown>;
  usage: Usage;
}

/**
 * Gemini's generateContent of an upstream that speaks it: request and answer pass through as sent. Its stream's frames
 * are the upstream's own `alt=sse` events (`data: {GenerateContentResponse}\n\n`), unchanged.
 */
export interface NativeGemini {
  generate(ctx: GeminiCallContext, body: Record<string, unknown>): Promise<GeminiResult>;
  stream(ctx: GeminiCallContext, body: Record<string, unknown>): Promise<ChatStream>;
  /** :countTokens: the upstream's JSON text, `{"totalTokens": N, ...}`. */
  countTokens(ctx: GeminiCallContext, body: Record<string, unknown>): Promise<string>;
}

/**
 * One configured upstream. Every method rejects with an AgentgwError for upstream problems:
 * `upstream_unavailable` / `upstream_timeout` are retryable (`err.isRetryable`: try the next fallback target),
 * `validation_failed` / `unknown_model` mean the request is wrong for this provider, `upstream_bad_response` means
 * the provider misbehaved or rejected the gateway's credentials. When ctx.signal aborts first, they reject with its reason.
 */
export interface ProviderAdapter {
  /** The name the configuration gives it (the `provider` of `provider/model`). */
  readonly name: string;
  readonly type: ProviderType;
  /** The upstream's base address; null for offline providers. Never carries a secret. */
  readonly baseUrl: string | null;
  /** Models it advertises (from configuration); other model ids are still passed to the upstream. */
  readonly models: readonly string[];
  /** False when credentials it needs are missing, so every call would fail. */
  readonly configured: boolean;
  readonly supportsEmbeddings: boolean;

  chat(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatResult>;
  /** Resolves once the upstream answered 2xx, so failures before the first byte can still fall back to the next target. */
  chatStream(ctx: CallContext, body: OpenAIChatRequest): Promise<ChatStream>;
  embeddings(ctx: CallContext, body: OpenAIEmbeddingsRequest): Promise<EmbeddingsResult>;
  /** Present when the upstream speaks Anthropic's Messages API natively. */
  readonly messages?: NativeMessages;
  /** Present when the upstream speaks OpenAI's Responses API natively. */
  readonly responses?: NativeResponses;
  /** Present when the upstream speaks Gemini's generateContent natively. */
  readonly gemini?: NativeGemini;
  /** Closes its connection pool; in-flight requests finish first. */
  close(): Promise<void>;
}
