// The member names the data-plane dialects define: fixed words of the wire formats, never a client's text.

/**
 * Member names the dialects define (OpenAI Chat Completions and Responses, Anthropic Messages, MCP results and resource
 * contents). A key among them is a fixed word, not the client's text, and is not visited; any other key is (objects the
 * client names, such as tool arguments, carry text in their keys too). Also the names whose case variants are refused
 * (data-plane/key-case.ts).
 */
export const DIALECT_MEMBERS: ReadonlySet<string> = new Set([
  // request top levels
  'model', 'messages', 'tools', 'tool_choice', 'functions', 'function_call', 'temperature', 'top_p', 'top_k', 'n', 'stream',
  'stream_options', 'stop', 'stop_sequences', 'max_tokens', 'max_completion_tokens', 'max_output_tokens', 'max_tool_calls',
  'presence_penalty', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'user', 'seed', 'response_format',
  'parallel_tool_calls', 'service_tier', 'store', 'metadata', 'modalities', 'audio', 'prediction', 'reasoning_effort',
  'web_search_options', 'verbosity', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'system', 'thinking',
  'container', 'mcp_servers', 'context_management', 'output_format', 'output_config', 'input', 'instructions',
  'previous_response_id', 'conversation', 'include', 'reasoning', 'text', 'truncation', 'background', 'prompt',
  'include_usage', 'encoding_format', 'dimensions', 'user_id', 'betas', 'inference_geo', 'anthropic_beta', 'anthropic_version',
  // messages, content blocks, parts, items
  'role', 'content', 'name', 'tool_calls', 'tool_call_id', 'refusal', 'annotations', 'type', 'source', 'media_type', 'data',
  'url', 'file_id', 'id', 'tool_use_id', 'is_error', 'cache_control', 'ttl', 'citations', 'title', 'context', 'signature',
  'image_url', 'detail', 'file', 'file_data', 'filename', 'file_url', 'input_audio', 'format', 'call_id', 'arguments', 'output',
  'status', 'summary', 'encrypted_content', 'action', 'operation', 'server_label', 'error', 'approval_request_id', 'approve',
  'reason', 'acknowledged_safety_checks', 'pending_safety_checks', 'results', 'queries', 'outputs', 'container_id', 'code',
  'result', 'function', 'effort', 'budget_tokens', 'schema', 'json_schema', 'strict', 'description', 'parameters',
  'input_schema', 'max_uses', 'allowed_domains', 'blocked_domains', 'user_location', 'disable_parallel_tool_use',
  'resource', 'contents', 'uri', 'mimetype', 'mimeType', 'blob', 'structuredContent', 'isError', '_meta',
  // Claude's signed thinking blocks on a chat assistant message (LiteLLM's name; translate/carried-thinking.ts)
  'thinking_blocks', 'reasoning_content',
]);

/**
 * Members whose value the client (or a tool) names and shapes freely: tool inputs and arguments, schemas, metadata,
 * structured results. Nothing in them is a dialect's block, so nothing in them is skipped as one: an object there that
 * looks like an image or a thinking block is read like any other.
 */
export const CLIENT_NAMED: ReadonlySet<string> = new Set([
  'parameters', 'input_schema', 'schema', 'arguments', 'metadata', 'logit_bias', 'headers', 'variables', 'env', 'properties',
  'output_schema', 'structuredContent', '_meta',
]);

/** Blocks whose `input` is the tool's own arguments. */
export const TOOL_INPUT_BLOCKS: ReadonlySet<unknown> = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/**
 * True when the value of `holder[key]` is shaped by the client, not by a dialect: a member no dialect defines, one of
 * CLIENT_NAMED, or a tool block's `input`. The walk reads everything below such a member.
 */
export function clientShaped(holder: unknown, key: string | number): boolean {
  if (typeof key === 'number') return false;
  if (!DIALECT_MEMBERS.has(key) || CLIENT_NAMED.has(key)) return true;
  return key === 'input' && TOOL_INPUT_BLOCKS.has((holder as Record<string, unknown>).type);
}
