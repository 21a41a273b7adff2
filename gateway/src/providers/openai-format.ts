// OpenAI Chat Completions and Embeddings wire types: the one format clients speak to the gateway.

export type OpenAIFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface OpenAITextPart {
  type: 'text';
  text: string;
}

export interface OpenAIImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

export interface OpenAIAudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: string };
}

export interface OpenAIFilePart {
  type: 'file';
  file: { file_data?: string; file_id?: string; filename?: string };
}

export type OpenAIContentPart = OpenAITextPart | OpenAIImagePart | OpenAIAudioPart | OpenAIFilePart;

export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /** Gemini's thoughtSignature of the call, where Google's OpenAI-compatible API puts it; given back to Gemini only. */
  extra_content?: GeminiExtraContent;
}

export type GeminiExtraContent = { google?: { thought_signature?: string } };

export interface OpenAISystemMessage {
  role: 'system' | 'developer';
  content: string | OpenAITextPart[];
  name?: string;
}

export interface OpenAIUserMessage {
  role: 'user';
  content: string | OpenAIContentPart[];
  name?: string;
}

export interface OpenAIAssistantMessage {
  role: 'assistant';
  content?: string | OpenAITextPart[] | null;
  tool_calls?: OpenAIToolCall[] | null;
  refusal?: string | null;
  name?: string;
  /** Claude's thinking as it came (signed), given back to an Anthropic target (LiteLLM's field); other targets never get it. */
  thinking_blocks?: ThinkingBlock[];
}

/** One of Anthropic's thinking blocks, carried in chat messages as `thinking_blocks` (see translate/carried-thinking.ts). */
export type ThinkingBlock = { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string };

/** A streamed piece of a thinking block: its signature when the block ends (its text came as reasoning_content), or a redacted block. */
export type ThinkingBlockDelta = { type: 'thinking'; signature: string } | { type: 'redacted_thinking'; data: string };

export interface OpenAIToolMessage {
  role: 'tool';
  content: string | OpenAITextPart[];
  tool_call_id: string;
}

export type OpenAIChatMessage = OpenAISystemMessage | OpenAIUserMessage | OpenAIAssistantMessage | OpenAIToolMessage;

export interface OpenAITool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export type OpenAIToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

/**
 * Chat Completions' web search: the model may search the web before it answers. Targets with a web search of their own
 * (Anthropic's web search tool, Gemini's Google Search) run theirs; others ignore it. Read it defensively: clients
 * send any JSON object here.
 */
export interface OpenAIWebSearchOptions {
  search_context_size?: 'low' | 'medium' | 'high';
  user_location?: { type: 'approximate'; approximate: OpenAIApproximateLocation } | null;
}

/** Where the user roughly is, to localise search results; every field optional. */
export interface OpenAIApproximateLocation {
  city?: string;
  /** Two-letter ISO country code. */
  country?: string;
  region?: string;
  /** IANA time zone, such as America/Los_Angeles. */
  timezone?: string;
}

export type OpenAIResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null };
    };

export interface OpenAIChatRequest {
  model: string;
  messages: OpenAIChatMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  n?: number | null;
  stop?: string | string[] | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  seed?: number | null;
  user?: string;
  tools?: OpenAITool[];
  tool_choice?: OpenAIToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: OpenAIResponseFormat;
  web_search_options?: OpenAIWebSearchOptions;
}

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export interface OpenAIChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      tool_calls?: OpenAIToolCall[];
      refusal?: string | null;
      /** The model's reasoning text (DeepSeek's and vLLM's field; Claude's thinking). */
      reasoning_content?: string;
      thinking_blocks?: ThinkingBlock[];
    };
    finish_reason: OpenAIFinishReason | null;
    logprobs?: unknown;
  }>;
  usage?: OpenAIUsage;
  system_fingerprint?: string | null;
}

export interface OpenAIToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
  extra_content?: GeminiExtraContent;
}

export interface OpenAIChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      tool_calls?: OpenAIToolCallDelta[];
      refusal?: string | null;
      reasoning_content?: string;
      thinking_blocks?: ThinkingBlockDelta[];
    };
    finish_reason: OpenAIFinishReason | null;
  }>;
  usage?: OpenAIUsage | null;
}

export interface OpenAIEmbeddingsRequest {
  model: string;
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
}

export interface OpenAIEmbeddingsResponse {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}
