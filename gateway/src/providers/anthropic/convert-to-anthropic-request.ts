// An OpenAI chat request -> the body of POST /v1/messages.
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIChatRequest } from '../openai-format.js';
import { maxOutputTokens, stopSequences } from '../shared/message-content.js';
import type { AnthropicRequest } from './anthropic-api.js';
import { type Breakpoint, checkBreakpointCount, checkTtlOrder } from './cache-control.js';
import { convertToAnthropicMessages } from './convert-to-anthropic-messages.js';
import { prepareAnthropicTools } from './prepare-anthropic-tools.js';

type PreparedTools = ReturnType<typeof prepareAnthropicTools>;

/**
 * Anthropic refuses tool_use and tool_result blocks in a request that defines no tools. A conversation with earlier tool
 * calls sent without tools (Codex's compaction request) declares the tools it called, and may call none of them.
 */
function declareCalledTools(tools: PreparedTools, messages: AnthropicRequest['messages']): PreparedTools {
  if (tools.tools?.length) return tools;
  const called = new Set<string>();
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const block of m.content) if (block.type === 'tool_use') called.add(block.name);
  }
  if (called.size === 0) return tools;
  return { ...tools, tools: [...called].map((name) => ({ name, input_schema: { type: 'object' as const } })), tool_choice: { type: 'none' } };
}

export function convertToAnthropicRequest(
  provider: string,
  model: string,
  body: OpenAIChatRequest,
  defaultMaxTokens: number,
  stream: boolean,
): AnthropicRequest {
  if (body.n != null && body.n > 1) {
    throw new AgentgwError('validation_failed', `Provider "${provider}" returns one choice per request; send n = 1.`, { param: 'n' });
  }
  const { system, messages, breakpoints } = convertToAnthropicMessages(provider, body.messages);
  const tools = declareCalledTools(prepareAnthropicTools(provider, body), messages);
  // Anthropic reads the prompt as tools, then system, then messages; tools map one to one to the client's.
  const toolBreakpoints = (tools.tools ?? []).flatMap((tool, k): Breakpoint[] =>
    tool.cache_control ? [{ param: `tools[${k}].cache_control`, ttl: tool.cache_control.ttl }] : [],
  );
  const marks = [...toolBreakpoints, ...breakpoints];
  checkBreakpointCount(provider, marks);
  checkTtlOrder(provider, marks);
  const request: AnthropicRequest = {
    model,
    max_tokens: maxOutputTokens(body) ?? defaultMaxTokens,
    messages,
    ...tools,
  };
  if (system !== undefined) request.system = system;
  if (body.temperature != null) request.temperature = body.temperature;
  if (body.top_p != null) request.top_p = body.top_p;
  const stop = stopSequences(body.stop);
  if (stop) request.stop_sequences = stop;
  if (body.user) request.metadata = { user_id: body.user };
  // json_schema maps to structured outputs; json_object has no Anthropic counterpart and is left to the prompt.
  if (body.response_format?.type === 'json_schema' && body.response_format.json_schema.schema) {
    request.output_config = { format: { type: 'json_schema', schema: body.response_format.json_schema.schema } };
  }
  if (stream) request.stream = true;
  return request;
}
