// Which top-level fields of an Anthropic Messages request a Chat Completions upstream can take, and which are hints to drop.

/** Carried over to the chat request (see messages-to-chat-request.ts). */
export const CARRIED_FIELDS: ReadonlySet<string> = new Set([
  'model', 'messages', 'max_tokens', 'system', 'stop_sequences', 'stream', 'temperature', 'top_p', 'tools', 'tool_choice',
  'thinking', 'output_config',
]);

/** Pure hints: they change how Anthropic serves the request, not what the answer says. */
export const DROPPED_FIELDS: ReadonlySet<string> = new Set(['cache_control', 'metadata', 'service_tier', 'context_management', 'speed', 'diagnostics']);

/** Documented by Anthropic but with no equivalent upstream: a 400 naming the field, never a silent drop. */
export const NOT_CARRYABLE_FIELDS: Readonly<Record<string, string>> = {
  top_k: 'Chat Completions has no top-k sampling; remove top_k (temperature and top_p are carried over)',
  container: 'containers belong to Anthropic\'s code execution tool, which only Anthropic runs; remove container',
  mcp_servers: 'the MCP connector runs at Anthropic; remove mcp_servers, or give the agent the tools through the gateway\'s /mcp endpoint',
  inference_geo: 'the target provider cannot promise an inference region; remove inference_geo',
};

/** What a translated Messages request leaves out on purpose, for the README and the docs. */
export const DROPPED_MESSAGES_HINTS: ReadonlyArray<{ field: string; why: string }> = [
  { field: 'cache_control', why: 'prompt-cache breakpoints (top level, on blocks, on tools): the target caches prompts its own way, the answer is the same' },
  { field: 'metadata', why: 'metadata.user_id only helps Anthropic detect abuse' },
  { field: 'service_tier', why: 'chooses Anthropic\'s priority or standard capacity, not the answer' },
  { field: 'speed', why: 'Anthropic\'s fast mode changes latency, not the answer' },
  { field: 'diagnostics', why: 'asks Anthropic to explain prompt-cache misses' },
  { field: 'context_management', why: 'Anthropic-side trimming of old tool results and thinking; the target receives the whole conversation instead' },
  { field: 'thinking', why: 'dropped when disabled or when the target model does not reason; otherwise it becomes reasoning_effort' },
  { field: 'output_config.effort', why: 'dropped when the target model does not reason; otherwise it becomes reasoning_effort' },
  { field: 'messages.N.content (thinking, redacted_thinking)', why: 'earlier reasoning is signed by Anthropic and cannot be given back to another model' },
  { field: 'citations', why: 'citations of earlier text blocks and documents\' citations.enabled: the target answers with plain text, without citation blocks' },
  { field: 'tools.N (eager_input_streaming, defer_loading, allowed_callers, input_examples)', why: 'Anthropic-side tool streaming, loading and calling hints' },
];
