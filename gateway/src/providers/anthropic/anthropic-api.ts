// Wire types of Anthropic's Messages API (POST /v1/messages), request, response and stream events.

/** A prompt-cache breakpoint: the prefix up to and including the block that carries it is cached. */
export interface AnthropicCacheControl {
  type: 'ephemeral';
  /** Absent: Anthropic's default, 5 minutes. */
  ttl?: '5m' | '1h';
}

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicDocumentBlock {
  type: 'document';
  source: { type: 'base64'; media_type: string; data: string };
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
  is_error?: boolean;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicThinkingBlock {
  type: 'thinking' | 'redacted_thinking';
  thinking?: string;
  signature?: string;
  data?: string;
  cache_control?: AnthropicCacheControl;
}

export type AnthropicRequestBlock =
  | AnthropicThinkingBlock
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicRequestBlock[];
}

/** A tool the client runs: Claude answers a call of it with a tool_use block. */
export interface AnthropicClientTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
}

/**
 * Anthropic's own web search, a server tool: Anthropic runs the searches within the call, and the answer carries them
 * as server_tool_use and web_search_tool_result blocks around the text.
 */
export interface AnthropicWebSearchTool {
  type: 'web_search_20250305';
  name: 'web_search';
  max_uses?: number;
  allowed_domains?: string[];
  blocked_domains?: string[];
  user_location?: AnthropicUserLocation;
  cache_control?: AnthropicCacheControl;
}

/** Where the user roughly is, to localise search results. */
export interface AnthropicUserLocation {
  type: 'approximate';
  city?: string;
  region?: string;
  /** Two-letter ISO country code. */
  country?: string;
  /** IANA time zone, such as America/New_York. */
  timezone?: string;
}

export type AnthropicTool = AnthropicClientTool | AnthropicWebSearchTool;

export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'none' }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  /** A string, or text blocks when some of the system prompt carries a cache breakpoint. */
  system?: string | AnthropicTextBlock[];
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  stream?: boolean;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  metadata?: { user_id?: string };
  /** Extended thinking: budget_tokens (at least 1024) counts inside max_tokens. */
  thinking?: { type: 'enabled'; budget_tokens: number };
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
}

export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** The split of cache_creation_input_tokens by cache lifetime (5-minute and 1-hour writes are priced apart). */
  cache_creation?: AnthropicCacheCreation | null;
  /** Tools Anthropic ran itself and bills per use (web search: USD 10 per 1,000 searches). */
  server_tool_use?: { web_search_requests?: number | null; web_fetch_requests?: number | null } | null;
}

export interface AnthropicCacheCreation {
  ephemeral_5m_input_tokens?: number | null;
  ephemeral_1h_input_tokens?: number | null;
}

/** A call of a server tool (web_search, ...) that Anthropic ran itself: no call for the client to answer. */
export interface AnthropicServerToolUseBlock {
  type: 'server_tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** What a web search found (web_search_result items, encrypted), or { type: "web_search_tool_result_error", error_code }. */
export interface AnthropicWebSearchToolResultBlock {
  type: 'web_search_tool_result';
  tool_use_id: string;
  content: unknown;
}

export type AnthropicResponseBlock =
  | (AnthropicTextBlock & { citations?: unknown[] | null })
  | AnthropicToolUseBlock
  | AnthropicThinkingBlock
  | AnthropicServerToolUseBlock
  | AnthropicWebSearchToolResultBlock;

export interface AnthropicResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicResponseBlock[];
  stop_reason: string | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

export type AnthropicStreamEvent =
  | { type: 'message_start'; message: Omit<AnthropicResponse, 'content'> & { content: AnthropicResponseBlock[] } }
  | { type: 'content_block_start'; index: number; content_block: AnthropicResponseBlock }
  | {
      type: 'content_block_delta';
      index: number;
      delta:
        | { type: 'text_delta'; text: string }
        | { type: 'input_json_delta'; partial_json: string }
        | { type: 'thinking_delta'; thinking: string }
        | { type: 'signature_delta'; signature: string }
        | { type: 'citations_delta'; citation: unknown };
    }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: string | null; stop_sequence?: string | null }; usage: AnthropicUsage }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };
