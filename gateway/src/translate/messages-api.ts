// Client-facing wire types of Anthropic's Messages API: wider than the upstream ones in providers/anthropic/anthropic-api.ts,
// because a client may send anything Anthropic documents (thinking blocks, server tools, text documents, ...).
import type { AnthropicCacheControl, AnthropicTextBlock, AnthropicToolUseBlock } from '../providers/anthropic/anthropic-api.js';

export interface MessagesTextBlock {
  type: 'text';
  text: string;
  cache_control?: AnthropicCacheControl | null;
  citations?: unknown[] | null;
}

export type MessagesImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }
  | { type: 'file'; file_id: string };

export interface MessagesImageBlock {
  type: 'image';
  source: MessagesImageSource;
  cache_control?: AnthropicCacheControl | null;
}

export type MessagesDocumentSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'text'; media_type: 'text/plain'; data: string }
  | { type: 'content'; content: string | Array<MessagesTextBlock | MessagesImageBlock> }
  | { type: 'url'; url: string }
  | { type: 'file'; file_id: string };

export interface MessagesDocumentBlock {
  type: 'document';
  source: MessagesDocumentSource;
  title?: string | null;
  context?: string | null;
  citations?: { enabled?: boolean } | null;
  cache_control?: AnthropicCacheControl | null;
}

export interface MessagesToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  cache_control?: AnthropicCacheControl | null;
}

export interface MessagesToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<MessagesTextBlock | MessagesImageBlock | { type: string }>;
  is_error?: boolean;
  cache_control?: AnthropicCacheControl | null;
}

export interface MessagesThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface MessagesRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** Blocks run by Anthropic itself (server_tool_use, web_search_tool_result, ...), search results, container uploads. */
export interface MessagesOtherBlock {
  type: string;
  [key: string]: unknown;
}

export type MessagesContentBlock =
  | MessagesTextBlock
  | MessagesImageBlock
  | MessagesDocumentBlock
  | MessagesToolUseBlock
  | MessagesToolResultBlock
  | MessagesThinkingBlock
  | MessagesRedactedThinkingBlock;

export interface MessagesMessage {
  role: 'user' | 'assistant' | 'system';
  content: string | Array<MessagesContentBlock | MessagesOtherBlock>;
}

/** A client tool (`type` absent or "custom"); any other `type` names a server tool (web_search_20250305, bash_20250124, ...). */
export interface MessagesTool {
  type?: string | null;
  name: string;
  description?: string;
  input_schema?: Record<string, unknown>;
  strict?: boolean;
  cache_control?: AnthropicCacheControl | null;
  [key: string]: unknown;
}

export type MessagesToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'none' }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

export type MessagesThinkingConfig =
  | { type: 'enabled'; budget_tokens: number; display?: string | null }
  | { type: 'adaptive'; display?: string | null }
  | { type: 'disabled' }
  | { type: string };

export type MessagesEffort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface MessagesRequest {
  model: string;
  messages: MessagesMessage[];
  max_tokens: number;
  system?: string | MessagesTextBlock[];
  stop_sequences?: string[];
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: MessagesTool[];
  tool_choice?: MessagesToolChoice;
  metadata?: { user_id?: string | null } | null;
  thinking?: MessagesThinkingConfig;
  service_tier?: string;
  context_management?: unknown;
  output_config?: { effort?: MessagesEffort | null; format?: { type: 'json_schema'; schema: Record<string, unknown> } | null } | null;
  container?: unknown;
  mcp_servers?: unknown;
  [key: string]: unknown;
}

export type MessagesStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: Array<AnthropicTextBlock | AnthropicToolUseBlock>;
  stop_reason: MessagesStopReason;
  stop_sequence: string | null;
  usage: MessagesUsage;
}
