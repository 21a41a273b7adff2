// An OpenAI chat completion -> an Anthropic Messages response.
import { AgentgwError } from '../contract/errors.js';
import type { AnthropicTextBlock, AnthropicToolUseBlock } from '../providers/anthropic/anthropic-api.js';
import type { OpenAIChatCompletion } from '../providers/openai-format.js';
import type { Usage } from '../providers/spec.js';
import { mapChatFinishToStopReason } from './map-chat-finish-to-stop-reason.js';
import type { MessagesResponse } from './messages-api.js';
import { usageToMessagesUsage } from './usage-to-messages-usage.js';

export function chatCompletionToMessage(c: OpenAIChatCompletion, opts: { model: string; usage: Usage }): MessagesResponse {
  const choice = c.choices?.[0];
  if (!choice || !choice.message) throw new AgentgwError('upstream_bad_response', 'The upstream answered without a choice.');
  const { message } = choice;
  const content: Array<AnthropicTextBlock | AnthropicToolUseBlock> = [];
  // A refusal is what the model said: Anthropic has no separate field for it.
  const text = (message.content ?? '') + (message.refusal ?? '');
  if (text) content.push({ type: 'text', text });
  for (const call of message.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments, call.function.name) });
  }
  return {
    id: messageId(c.id, String(c.created ?? 0)),
    type: 'message',
    role: 'assistant',
    model: opts.model,
    content,
    stop_reason: mapChatFinishToStopReason(choice.finish_reason, content.length > 0 && content[content.length - 1].type === 'tool_use'),
    stop_sequence: null,
    usage: usageToMessagesUsage(opts.usage),
  };
}

/** `msg_` + the upstream's id without OpenAI's `chatcmpl-` prefix. */
export function messageId(upstreamId: string | undefined, fallback: string): string {
  const id = upstreamId || fallback;
  return `msg_${id.startsWith('chatcmpl-') ? id.slice('chatcmpl-'.length) : id}`;
}

/** Arguments are a JSON string in OpenAI format; Anthropic's tool_use input is an object. */
export function toolInput(args: string | undefined, name: string): Record<string, unknown> {
  if (args == null || args.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw new AgentgwError('upstream_bad_response', `The upstream called tool "${name}" with arguments that are not valid JSON.`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AgentgwError('upstream_bad_response', `The upstream called tool "${name}" with arguments that are not a JSON object.`);
  }
  return value as Record<string, unknown>;
}
