// An OpenAI chat completion -> an OpenAI Responses response object.
import { AgentgwError } from '../contract/errors.js';
import type { OpenAIChatCompletion, OpenAIToolCall } from '../providers/openai-format.js';
import type { Usage } from '../providers/spec.js';
import type { ResponsesOutputContent, ResponsesOutputItem, ResponsesResponse } from './responses-api.js';
import { callId, itemId, type ResponsesObjectOptions, responsesObject, responsesUsage } from './responses-response-object.js';
import { type ClientToolIndex, responsesToolIndex } from './responses-tools.js';
import { encodeThinkingBlocks } from './carried-thinking.js';

export interface ChatToResponsesOptions extends ResponsesObjectOptions {
  usage: Usage;
  /** Unix seconds; now when absent. */
  completedAt?: number;
  /** The client tools by chat function name (from responsesToChatRequest); else read from request.tools. */
  tools?: ClientToolIndex;
}

/** Reasoning text some OpenAI-compatible servers add to the message (DeepSeek, vLLM: reasoning_content; others: reasoning). */
type WithReasoning = { reasoning_content?: unknown; reasoning?: unknown };

export function chatCompletionToResponse(c: OpenAIChatCompletion, opts: ChatToResponsesOptions): ResponsesResponse {
  const choice = c.choices?.[0];
  if (!choice || !choice.message) throw new AgentgwError('upstream_bad_response', 'The upstream answered without a choice.');
  const { message } = choice;
  const tools = opts.tools ?? responsesToolIndex(opts.request.tools);
  const output: ResponsesOutputItem[] = [];

  const reasoning = reasoningText(message as WithReasoning);
  const thinking = message.thinking_blocks;
  if (reasoning || thinking?.length) {
    const item: ResponsesOutputItem = { type: 'reasoning', id: itemId('rs', opts.id, output.length), summary: reasoning ? [{ type: 'summary_text', text: reasoning }] : [] };
    // Claude's signed thinking, for the next turn to give back to Claude (and to no other family).
    if (thinking?.length) item.encrypted_content = encodeThinkingBlocks(thinking);
    output.push(item);
  }
  const content: ResponsesOutputContent[] = [];
  if (message.content) content.push({ type: 'output_text', text: message.content, annotations: [] });
  if (message.refusal) content.push({ type: 'refusal', refusal: message.refusal });
  if (content.length > 0) {
    output.push({ type: 'message', id: itemId('msg', opts.id, output.length), status: 'completed', role: 'assistant', content });
  }
  for (const call of message.tool_calls ?? []) output.push(toolCallItem(call, tools, opts.id, output.length));

  const incompleteReason = choice.finish_reason === 'length' ? 'max_output_tokens' : choice.finish_reason === 'content_filter' ? 'content_filter' : null;
  // The item the limit or the filter cut short.
  const last = output.at(-1);
  if (incompleteReason && last && (last.type === 'message' || last.type === 'function_call')) last.status = 'incomplete';
  return responsesObject(opts, {
    status: incompleteReason ? 'incomplete' : 'completed',
    output,
    usage: responsesUsage(opts.usage),
    completedAt: incompleteReason ? null : (opts.completedAt ?? Math.floor(Date.now() / 1000)),
    incompleteReason,
  });
}

/** A chat tool call -> a function_call item, or a custom_tool_call item when it calls a custom tool. */
export function toolCallItem(call: OpenAIToolCall, tools: ClientToolIndex, responseId: string, n: number): ResponsesOutputItem {
  const chatName = call.function?.name ?? '';
  const args = call.function?.arguments ?? '';
  const ref = tools.get(chatName);
  const id = call.id || callId(responseId, n);
  if (ref?.kind === 'custom') {
    const item: ResponsesOutputItem = { type: 'custom_tool_call', id: itemId('ctc', responseId, n), call_id: id, name: ref.name, input: customInput(args) };
    if (ref.namespace) item.namespace = ref.namespace;
    return item;
  }
  const item: ResponsesOutputItem = { type: 'function_call', id: itemId('fc', responseId, n), call_id: id, name: ref?.name ?? chatName, arguments: args, status: 'completed' };
  if (ref?.namespace) item.namespace = ref.namespace;
  return item;
}

/** A custom tool was offered as a function of one string argument, `input`: its value, else the arguments as they came. */
export function customInput(args: string): string {
  try {
    const value: unknown = JSON.parse(args);
    if (value !== null && typeof value === 'object' && typeof (value as { input?: unknown }).input === 'string') return (value as { input: string }).input;
  } catch {
    // Not JSON: the model wrote the input itself.
  }
  return args;
}

export function reasoningText(m: WithReasoning): string {
  if (typeof m.reasoning_content === 'string') return m.reasoning_content;
  if (typeof m.reasoning === 'string') return m.reasoning;
  return '';
}
