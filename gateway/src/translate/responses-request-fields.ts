// Which top-level fields of an OpenAI Responses request a Chat Completions upstream can take, which the gateway itself
// handles, which are hints to drop, and which cannot be honoured at all.

/** Carried over to the chat request (see responses-to-chat-request.ts). */
export const CARRIED_FIELDS: ReadonlySet<string> = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'text', 'reasoning', 'max_output_tokens',
  'temperature', 'top_p', 'stream', 'user', 'safety_identifier',
]);

/** Handled by agentgw around the upstream call (stored responses), never sent upstream. */
export const GATEWAY_FIELDS: ReadonlySet<string> = new Set(['store', 'previous_response_id']);

/** Pure hints: they change how OpenAI serves or bills the request, or what it keeps, not what the answer says. */
export const DROPPED_FIELDS: ReadonlySet<string> = new Set([
  'include', 'prompt_cache_key', 'prompt_cache_retention', 'prompt_cache_options', 'metadata', 'service_tier', 'truncation',
  'stream_options', 'context_management', 'client_metadata',
]);

/** Documented by OpenAI but with no equivalent on a translated call: a 400 naming the field when set, never a silent drop. */
export const NOT_CARRYABLE_FIELDS: Readonly<Record<string, string>> = {
  background: 'background responses run at OpenAI; send the request without background and wait for the answer (or stream it)',
  conversation: 'conversations live in OpenAI\'s Conversations API; chain turns with previous_response_id instead (agentgw keeps them)',
  prompt: 'prompt templates are stored at OpenAI; send the prompt\'s text as instructions and input instead',
  moderation: 'moderation runs at OpenAI; use agentgw policies (PII detection) instead',
  max_tool_calls: 'the target provider cannot cap built-in tool calls; remove max_tool_calls',
  top_logprobs: 'the target provider returns no log probabilities; remove top_logprobs',
};

/** What a translated Responses request leaves out on purpose, for the README and the docs. */
export const DROPPED_RESPONSES_HINTS: ReadonlyArray<{ field: string; why: string }> = [
  { field: 'include', why: 'asks OpenAI to add data to the output (reasoning.encrypted_content, web_search_call.results, logprobs, ...); a translated answer has no such data' },
  { field: 'prompt_cache_key, prompt_cache_retention, prompt_cache_options, input.N.content.N.prompt_cache_breakpoint', why: 'OpenAI prompt-cache routing; the target caches prompts its own way, the answer is the same' },
  { field: 'metadata', why: 'kept by agentgw with the stored response and echoed in it, not sent upstream' },
  { field: 'client_metadata', why: 'Codex\'s installation, window and turn ids for OpenAI\'s own telemetry' },
  { field: 'service_tier', why: 'chooses OpenAI\'s flex, priority or scale capacity, not the answer' },
  { field: 'truncation', why: '"auto" lets OpenAI drop the oldest items when the conversation outgrows the context window; the target receives the whole conversation and may refuse it instead' },
  { field: 'stream_options', why: 'include_obfuscation pads OpenAI\'s stream events against side channels' },
  { field: 'context_management', why: 'OpenAI-side compaction thresholds; the target receives the whole conversation instead' },
  { field: 'text.verbosity', why: 'a gpt-5 knob for answer length with no equivalent elsewhere' },
  { field: 'reasoning.summary, reasoning.generate_summary', why: 'OpenAI writes reasoning summaries; a target that streams its reasoning has it shown as the summary, others show none' },
  { field: 'reasoning.effort', why: 'dropped when the target model does not reason or the effort is "none"; otherwise it becomes reasoning_effort (minimal -> low, xhigh and max -> high), and for Claude a thinking budget (minimal 1024, low 2048, medium 8192, high 24576, xhigh and max 32768 tokens, at most three quarters of max_output_tokens)' },
  { field: 'input.N (reasoning)', why: 'earlier reasoning goes back only to the family that made it: OpenAI\'s (summary, encrypted_content) to OpenAI\'s models, Claude\'s signed thinking (carried in encrypted_content) to Claude; any other target gets the answer it led to' },
  { field: 'input.N (compaction)', why: 'context compacted by OpenAI is encrypted; only OpenAI can read it' },
  { field: 'input.N (web_search_call, file_search_call, code_interpreter_call, image_generation_call, mcp_*, tool_search_*)', why: 'records of tools OpenAI ran; their outcome is in the messages that follow them' },
  { field: 'input.N.phase', why: 'gpt-5.x commentary and final-answer labels of earlier messages' },
  { field: 'tools.N (web_search, file_search, code_interpreter, computer_use_preview, image_generation, local_shell, shell, apply_patch, mcp, tool_search, ...)', why: 'web search runs on the target\'s own search (Anthropic; Gemini when no client tools are sent); other built-in tools the target cannot run are left out and named in the x-agentgw-dropped-tools response header (a tool_choice that requires one is a 400)' },
  { field: 'tools.N (defer_loading, allowed_callers, output_schema)', why: 'OpenAI-side tool search and programmatic calling hints' },
  { field: 'input.N.content.N.detail (input_file), detail "original" (input_image)', why: 'OpenAI-only resolution choices; images keep low, high and auto' },
];
