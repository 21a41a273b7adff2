// An OpenAI chat request -> the body of POST /v1/messages.
import { AgentgwError } from '../../contract/errors.js';
import type { OpenAIChatRequest } from '../openai-format.js';
import { maxOutputTokens, stopSequences } from '../shared/message-content.js';
import type { AnthropicRequest } from './anthropic-api.js';
import { type PromptCaching, placeAnthropicCacheBreakpoints } from './auto-cache.js';
import { type Breakpoint, checkBreakpointCount, checkTtlOrder } from './cache-control.js';
import { convertToAnthropicMessages } from './convert-to-anthropic-messages.js';
import { prepareAnthropicTools } from './prepare-anthropic-tools.js';
import { anthropicThinkingBudget, claudeThinks, isEffortLevel, thinkingBudgetOfEffort } from '../../translate/reasoning-budget.js';

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
  promptCaching: PromptCaching = 'auto',
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
  // Breakpoints the client set are its choice; without any, the gateway places its own (auto-cache.ts).
  if (promptCaching === 'auto' && marks.length === 0) placeAnthropicCacheBreakpoints(model, request);
  if (body.temperature != null) request.temperature = body.temperature;
  if (body.top_p != null) request.top_p = body.top_p;
  const stop = stopSequences(body.stop);
  if (stop) request.stop_sequences = stop;
  if (body.user) request.metadata = { user_id: body.user };
  // json_schema maps to structured outputs; json_object has no Anthropic counterpart and is left to the prompt.
  if (body.response_format?.type === 'json_schema' && body.response_format.json_schema.schema) {
    request.output_config = { format: { type: 'json_schema', schema: body.response_format.json_schema.schema } };
  }
  const budget = thinkingBudget(model, body, request);
  if (budget !== undefined) {
    request.thinking = { type: 'enabled', budget_tokens: budget };
    // Anthropic refuses other sampling settings with thinking: the model samples its thinking its own way.
    if (request.temperature !== undefined && request.temperature !== 1) delete request.temperature;
    if (request.top_p !== undefined && request.top_p < 0.95) delete request.top_p;
  }
  if (stream) request.stream = true;
  return request;
}

/**
 * reasoning_effort -> the budget of Anthropic's extended thinking, inside max_tokens; undefined where Claude cannot think
 * for this request: a model without extended thinking, a required tool (Anthropic thinks only when the model may choose),
 * or a conversation whose last tool call comes back without the thinking that led to it (an answer of another family).
 */
function thinkingBudget(model: string, body: OpenAIChatRequest, request: AnthropicRequest): number | undefined {
  const effort = (body as { reasoning_effort?: unknown }).reasoning_effort;
  if (effort == null || effort === 'none') return undefined;
  if (!isEffortLevel(effort)) {
    throw new AgentgwError('validation_failed', 'Field "reasoning_effort": reasoning_effort must be "none", "minimal", "low", "medium", "high", "xhigh" or "max".', { param: 'reasoning_effort' });
  }
  if (!claudeThinks(model)) return undefined;
  const choice = request.tool_choice?.type;
  if (choice === 'any' || choice === 'tool') return undefined;
  const last = request.messages.findLast((m) => m.role === 'assistant');
  if (last && last.content.some((b) => b.type === 'tool_use') && last.content[0]?.type !== 'thinking' && last.content[0]?.type !== 'redacted_thinking') return undefined;
  return anthropicThinkingBudget(thinkingBudgetOfEffort(effort)!, request.max_tokens);
}
