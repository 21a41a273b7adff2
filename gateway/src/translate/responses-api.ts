// Client-facing wire types of OpenAI's Responses API (POST /v1/responses), as the openai SDK (src/resources/responses)
// and Codex (codex-rs/codex-api) send and read them. Wide on input, because a client may send anything OpenAI documents.

// ---------------------------------------------------------------------------------------------------------------------
// Content parts

export interface ResponsesInputText {
  type: 'input_text';
  text: string;
  prompt_cache_breakpoint?: unknown;
}

export interface ResponsesInputImage {
  type: 'input_image';
  /** A URL or a `data:` URL. */
  image_url?: string | null;
  /** An id of OpenAI's Files API. */
  file_id?: string | null;
  detail?: 'low' | 'high' | 'auto' | 'original';
  prompt_cache_breakpoint?: unknown;
}

export interface ResponsesInputFile {
  type: 'input_file';
  /** A `data:<media type>;base64,...` URL. */
  file_data?: string;
  file_id?: string | null;
  file_url?: string;
  filename?: string;
  detail?: 'auto' | 'low' | 'high';
  prompt_cache_breakpoint?: unknown;
}

export type ResponsesInputContent = ResponsesInputText | ResponsesInputImage | ResponsesInputFile;

export interface ResponsesOutputText {
  type: 'output_text';
  text: string;
  /** Citations (url_citation, file_citation, ...): always present on the wire, empty when none. */
  annotations: unknown[];
  logprobs?: unknown[];
}

export interface ResponsesRefusal {
  type: 'refusal';
  refusal: string;
}

export type ResponsesOutputContent = ResponsesOutputText | ResponsesRefusal;

// ---------------------------------------------------------------------------------------------------------------------
// Items (input and output share them: an earlier response's output items are sent back as input)

export type ResponsesItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** A message: EasyInputMessage (no type, string content), an input message, or an earlier output message. */
export interface ResponsesMessageItem {
  type?: 'message';
  id?: string;
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | Array<ResponsesInputContent | ResponsesOutputContent>;
  status?: ResponsesItemStatus;
  /** gpt-5.x: "commentary" (preamble) or "final_answer". */
  phase?: 'commentary' | 'final_answer' | null;
}

export interface ResponsesOutputMessage {
  type: 'message';
  id: string;
  role: 'assistant';
  status: ResponsesItemStatus;
  content: ResponsesOutputContent[];
  phase?: 'commentary' | 'final_answer' | null;
}

export interface ResponsesFunctionCall {
  type: 'function_call';
  /** The item id (`fc_...`); optional on input. */
  id?: string;
  /** The id a function_call_output answers (`call_...`). */
  call_id: string;
  name: string;
  /** A JSON text. */
  arguments: string;
  /** The namespace tool the function belongs to, if any. */
  namespace?: string;
  status?: ResponsesItemStatus;
}

export interface ResponsesFunctionCallOutput {
  type: 'function_call_output';
  id?: string | null;
  call_id: string;
  output: string | ResponsesInputContent[];
  status?: ResponsesItemStatus | null;
}

/** A call of a `custom` tool: free-form text input instead of JSON arguments (Codex's apply_patch). */
export interface ResponsesCustomToolCall {
  type: 'custom_tool_call';
  id?: string;
  call_id: string;
  name: string;
  input: string;
  namespace?: string;
}

export interface ResponsesCustomToolCallOutput {
  type: 'custom_tool_call_output';
  id?: string;
  call_id: string;
  output: string | ResponsesInputContent[];
}

export interface ResponsesSummaryText {
  type: 'summary_text';
  text: string;
}

export interface ResponsesReasoningText {
  type: 'reasoning_text';
  text: string;
}

export interface ResponsesReasoningItem {
  type: 'reasoning';
  id: string;
  summary: ResponsesSummaryText[];
  /** Raw reasoning text, from models that show it. */
  content?: ResponsesReasoningText[];
  /** Opaque reasoning state, returned when `include` asks for `reasoning.encrypted_content` (store: false). */
  encrypted_content?: string | null;
  status?: ResponsesItemStatus;
}

/** Context compacted by OpenAI (`/responses/compact`, context_management): opaque to every other model. */
export interface ResponsesCompactionItem {
  type: 'compaction';
  id?: string;
  encrypted_content: string;
}

/** An item of a stored response, by id. */
export interface ResponsesItemReference {
  type: 'item_reference';
  id: string;
}

/** Item types of tools OpenAI runs itself: their outcome is already in the messages that follow them. */
export const SERVER_TOOL_ITEM_TYPES = [
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'tool_search_call',
  'tool_search_output',
  'additional_tools',
  'program',
  'program_output',
] as const;

/** Item types of built-in tools the client runs (computer use, local shell, shell, apply_patch) and their outputs. */
export const CLIENT_BUILT_IN_ITEM_TYPES = [
  'computer_call',
  'computer_call_output',
  'local_shell_call',
  'local_shell_call_output',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
] as const;

/** A call (or call output) of a built-in tool: web_search_call, computer_call, local_shell_call, mcp_call, ... */
export interface ResponsesBuiltInToolItem {
  type: (typeof SERVER_TOOL_ITEM_TYPES)[number] | (typeof CLIENT_BUILT_IN_ITEM_TYPES)[number];
  id?: string;
  [key: string]: unknown;
}

export type ResponsesInputItem =
  | ResponsesMessageItem
  | ResponsesFunctionCall
  | ResponsesFunctionCallOutput
  | ResponsesCustomToolCall
  | ResponsesCustomToolCallOutput
  | ResponsesReasoningItem
  | ResponsesCompactionItem
  | ResponsesItemReference
  | ResponsesBuiltInToolItem;

/** What agentgw puts in `output` when it translates: messages, function and custom tool calls, reasoning. */
export type ResponsesOutputItem =
  | ResponsesOutputMessage
  | (ResponsesFunctionCall & { id: string; status: ResponsesItemStatus })
  | (ResponsesCustomToolCall & { id: string; status?: ResponsesItemStatus })
  | ResponsesReasoningItem;

// ---------------------------------------------------------------------------------------------------------------------
// Tools

export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
  /** Hints for OpenAI's tool search and programmatic calling. */
  defer_loading?: boolean;
  allowed_callers?: string[] | null;
  output_schema?: Record<string, unknown> | null;
}

export type ResponsesCustomToolFormat =
  | { type: 'text' }
  | { type: 'grammar'; syntax: 'lark' | 'regex'; definition: string };

/** A client tool whose input is free text (optionally constrained by a grammar) rather than JSON. */
export interface ResponsesCustomTool {
  type: 'custom';
  name: string;
  description?: string;
  format?: ResponsesCustomToolFormat;
  defer_loading?: boolean;
  allowed_callers?: string[] | null;
}

/** A group of client tools under one name (the model calls `<namespace>.<tool>`). */
export interface ResponsesNamespaceTool {
  type: 'namespace';
  name: string;
  description: string;
  tools: Array<ResponsesFunctionTool | ResponsesCustomTool>;
}

export interface ResponsesWebSearchTool {
  type: 'web_search' | 'web_search_2025_08_26' | 'web_search_preview' | 'web_search_preview_2025_03_11';
  search_context_size?: 'low' | 'medium' | 'high';
  user_location?: { type: 'approximate'; city?: string | null; country?: string | null; region?: string | null; timezone?: string | null } | null;
  filters?: { allowed_domains?: string[] | null } | null;
  search_content_types?: Array<'text' | 'image'>;
  /** Codex: "cached" or "live". */
  external_web_access?: boolean;
}

export interface ResponsesFileSearchTool {
  type: 'file_search';
  vector_store_ids: string[];
  max_num_results?: number;
  filters?: unknown;
  ranking_options?: unknown;
}

export interface ResponsesCodeInterpreterTool {
  type: 'code_interpreter';
  container: string | { type: 'auto'; file_ids?: string[]; memory_limit?: string | null };
}

export interface ResponsesComputerUseTool {
  type: 'computer_use_preview';
  display_width: number;
  display_height: number;
  environment: 'windows' | 'mac' | 'linux' | 'ubuntu' | 'browser';
}

export interface ResponsesImageGenerationTool {
  type: 'image_generation';
  [key: string]: unknown;
}

export interface ResponsesLocalShellTool {
  type: 'local_shell';
}

export interface ResponsesMcpTool {
  type: 'mcp';
  server_label: string;
  server_url?: string;
  connector_id?: string;
  allowed_tools?: string[] | { tool_names?: string[]; read_only?: boolean } | null;
  require_approval?: 'always' | 'never' | Record<string, unknown> | null;
  headers?: Record<string, string> | null;
  authorization?: string;
  server_description?: string;
}

/** Any other built-in tool type (computer, shell, apply_patch, tool_search, programmatic_tool_calling, ...). */
export interface ResponsesOtherBuiltInTool {
  type: string;
  [key: string]: unknown;
}

export type ResponsesTool =
  | ResponsesFunctionTool
  | ResponsesCustomTool
  | ResponsesNamespaceTool
  | ResponsesWebSearchTool
  | ResponsesFileSearchTool
  | ResponsesCodeInterpreterTool
  | ResponsesComputerUseTool
  | ResponsesImageGenerationTool
  | ResponsesLocalShellTool
  | ResponsesMcpTool
  | ResponsesOtherBuiltInTool;

export type ResponsesToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string }
  | { type: 'custom'; name: string }
  | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: Array<Record<string, unknown>> }
  | { type: 'mcp'; server_label: string; name?: string | null }
  /** A built-in tool: file_search, web_search_preview, computer_use_preview, code_interpreter, image_generation, ... */
  | { type: string };

// ---------------------------------------------------------------------------------------------------------------------
// Request

export type ResponsesTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean | null };

export interface ResponsesTextConfig {
  format?: ResponsesTextFormat;
  verbosity?: 'low' | 'medium' | 'high' | null;
}

export type ResponsesReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface ResponsesReasoningConfig {
  effort?: ResponsesReasoningEffort | null;
  summary?: 'auto' | 'concise' | 'detailed' | null;
  /** Deprecated spelling of summary. */
  generate_summary?: 'auto' | 'concise' | 'detailed' | null;
}

export type ResponsesIncludable =
  | 'file_search_call.results'
  | 'web_search_call.results'
  | 'web_search_call.action.sources'
  | 'message.input_image.image_url'
  | 'computer_call_output.output.image_url'
  | 'code_interpreter_call.outputs'
  | 'reasoning.encrypted_content'
  | 'message.output_text.logprobs';

export interface ResponsesRequest {
  model: string;
  input?: string | ResponsesInputItem[];
  instructions?: string | null;
  tools?: ResponsesTool[];
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean | null;
  text?: ResponsesTextConfig;
  reasoning?: ResponsesReasoningConfig | null;
  max_output_tokens?: number | null;
  max_tool_calls?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  top_logprobs?: number | null;
  stream?: boolean | null;
  stream_options?: { include_obfuscation?: boolean } | null;
  /** Whether agentgw keeps the response (default true). */
  store?: boolean | null;
  previous_response_id?: string | null;
  include?: ResponsesIncludable[] | null;
  prompt_cache_key?: string | null;
  prompt_cache_retention?: 'in_memory' | '24h' | null;
  metadata?: Record<string, string> | null;
  user?: string;
  safety_identifier?: string | null;
  service_tier?: 'auto' | 'default' | 'flex' | 'scale' | 'priority' | null;
  truncation?: 'auto' | 'disabled' | null;
  background?: boolean | null;
  conversation?: string | { id: string } | null;
  prompt?: { id: string; version?: string | null; variables?: Record<string, unknown> | null } | null;
  [key: string]: unknown;
}

// ---------------------------------------------------------------------------------------------------------------------
// Response

export interface ResponsesUsage {
  /** Includes cached_tokens (unlike Anthropic's input_tokens). */
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  /** Includes reasoning_tokens. */
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponsesStatus = 'completed' | 'failed' | 'in_progress' | 'cancelled' | 'queued' | 'incomplete';

export interface ResponsesError {
  /** server_error, rate_limit_exceeded, invalid_prompt, ... (Codex also reads context_length_exceeded, insufficient_quota). */
  code: string;
  message: string;
}

/**
 * The response object. `output_text` is not on the wire: the SDKs compute it from `output` (ResponsesParser.addOutputText).
 */
export interface ResponsesResponse {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponsesStatus;
  completed_at: number | null;
  error: ResponsesError | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | ResponsesInputItem[] | null;
  max_output_tokens: number | null;
  model: string;
  output: ResponsesOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: ResponsesReasoningEffort | null; summary: string | null };
  store: boolean;
  temperature: number;
  text: ResponsesTextConfig;
  tool_choice: ResponsesToolChoice;
  tools: ResponsesTool[];
  top_p: number;
  presence_penalty: number;
  frequency_penalty: number;
  top_logprobs: number;
  max_tool_calls: number | null;
  truncation: 'auto' | 'disabled';
  usage: ResponsesUsage | null;
  user: string | null;
  metadata: Record<string, string>;
  background: boolean;
  service_tier: string | null;
  prompt_cache_key: string | null;
  safety_identifier: string | null;
}

/** The request fields a response object repeats, as the client sent them. */
export type ResponsesEcho = Pick<
  ResponsesRequest,
  | 'instructions'
  | 'tools'
  | 'tool_choice'
  | 'parallel_tool_calls'
  | 'text'
  | 'reasoning'
  | 'max_output_tokens'
  | 'temperature'
  | 'top_p'
  | 'presence_penalty'
  | 'frequency_penalty'
  | 'top_logprobs'
  | 'max_tool_calls'
  | 'store'
  | 'previous_response_id'
  | 'prompt_cache_key'
  | 'metadata'
  | 'user'
  | 'safety_identifier'
  | 'service_tier'
  | 'truncation'
>;

// ---------------------------------------------------------------------------------------------------------------------
// Stream events (each carries `sequence_number`, from 0, one more per event)

export type ResponsesStreamEvent =
  | { type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed'; sequence_number: number; response: ResponsesResponse }
  | { type: 'response.output_item.added' | 'response.output_item.done'; sequence_number: number; output_index: number; item: ResponsesOutputItem }
  | { type: 'response.content_part.added' | 'response.content_part.done'; sequence_number: number; item_id: string; output_index: number; content_index: number; part: ResponsesOutputContent }
  | { type: 'response.output_text.delta'; sequence_number: number; item_id: string; output_index: number; content_index: number; delta: string; logprobs: unknown[] }
  | { type: 'response.output_text.done'; sequence_number: number; item_id: string; output_index: number; content_index: number; text: string; logprobs: unknown[] }
  | { type: 'response.refusal.delta'; sequence_number: number; item_id: string; output_index: number; content_index: number; delta: string }
  | { type: 'response.refusal.done'; sequence_number: number; item_id: string; output_index: number; content_index: number; refusal: string }
  | { type: 'response.function_call_arguments.delta'; sequence_number: number; item_id: string; output_index: number; delta: string }
  | { type: 'response.function_call_arguments.done'; sequence_number: number; item_id: string; output_index: number; name: string; arguments: string }
  | { type: 'response.custom_tool_call_input.delta'; sequence_number: number; item_id: string; output_index: number; delta: string }
  | { type: 'response.custom_tool_call_input.done'; sequence_number: number; item_id: string; output_index: number; input: string }
  | { type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done'; sequence_number: number; item_id: string; output_index: number; summary_index: number; part: ResponsesSummaryText }
  | { type: 'response.reasoning_summary_text.delta'; sequence_number: number; item_id: string; output_index: number; summary_index: number; delta: string }
  | { type: 'response.reasoning_summary_text.done'; sequence_number: number; item_id: string; output_index: number; summary_index: number; text: string }
  | { type: 'error'; sequence_number: number; code: string | null; message: string; param: string | null };
