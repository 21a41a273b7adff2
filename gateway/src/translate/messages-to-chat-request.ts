// An Anthropic Messages request -> an OpenAI Chat Completions request, for upstreams that speak only chat.
import type { OpenAIChatRequest } from '../providers/openai-format.js';
import { convertMessages, convertSystem } from './convert-messages-content.js';
import { convertToolChoice, convertTools } from './convert-messages-tools.js';
import { invalidField, isObject } from './invalid-field.js';
import { type ReasoningEffort, reasoningEffortOf } from './map-thinking-to-reasoning-effort.js';
import type { MessagesRequest } from './messages-api.js';
import { CARRIED_FIELDS, DROPPED_FIELDS, NOT_CARRYABLE_FIELDS } from './messages-request-fields.js';

export { DROPPED_MESSAGES_HINTS } from './messages-request-fields.js';

/** OpenAIChatRequest has no reasoning_effort; reasoning targets take it. */
export type TranslatedChatRequest = OpenAIChatRequest & { reasoning_effort?: ReasoningEffort };

export interface MessagesToChatOptions {
  /** The target's model id. */
  model: string;
  /** The output limit field the target takes (OpenAI's reasoning models refuse max_tokens). */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Whether the target model reasons, so that thinking and effort become reasoning_effort. */
  reasons: boolean;
}

// OpenAI's limit on `stop`.
const MAX_STOP_SEQUENCES = 4;

export function messagesToChatRequest(body: MessagesRequest, opts: MessagesToChatOptions): TranslatedChatRequest {
  checkTopLevelFields(body);

  const messages = [...convertSystem(body.system), ...convertMessages(body.messages)];
  const out: TranslatedChatRequest = { model: opts.model, messages };

  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 0) {
    throw invalidField('max_tokens', 'max_tokens must be a non-negative integer: the most tokens the answer may take.');
  }
  out[opts.maxTokensField] = body.max_tokens;

  if (body.temperature != null) out.temperature = number(body.temperature, 'temperature');
  if (body.top_p != null) out.top_p = number(body.top_p, 'top_p');

  const stop = stopSequences(body.stop_sequences);
  if (stop) out.stop = stop;

  if (body.stream === true) {
    out.stream = true;
    // Usage comes only in a last chunk that must be asked for; billing and message_delta need it.
    out.stream_options = { include_usage: true };
  }

  const tools = convertTools(body.tools);
  if (tools) out.tools = tools;
  Object.assign(out, convertToolChoice(body.tool_choice, tools !== undefined));

  const outputConfig = body.output_config;
  if (outputConfig != null && !isObject(outputConfig)) throw invalidField('output_config', 'output_config must be an object.');
  for (const key of Object.keys(outputConfig ?? {})) {
    if (key !== 'effort' && key !== 'format') throw invalidField(`output_config.${key}`, `Unknown field "output_config.${key}": output_config takes effort and format; remove it.`);
  }
  const effort = reasoningEffortOf(body.thinking, outputConfig?.effort);
  if (effort && opts.reasons) out.reasoning_effort = effort;
  const format = outputConfig?.format;
  if (format != null) {
    if (!isObject(format) || format.type !== 'json_schema' || !isObject(format.schema)) {
      throw invalidField('output_config.format', 'output_config.format must be {"type": "json_schema", "schema": {...}}.');
    }
    out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema, strict: true } };
  }
  return out;
}

function checkTopLevelFields(body: MessagesRequest): void {
  if (!isObject(body)) throw invalidField('body', 'The request body must be a JSON object.');
  for (const field of Object.keys(body)) {
    if (CARRIED_FIELDS.has(field) || DROPPED_FIELDS.has(field)) continue;
    const why = NOT_CARRYABLE_FIELDS[field];
    if (why !== undefined) {
      // null is how SDKs spell "not set".
      if (body[field] == null) continue;
      throw invalidField(field, `${field} cannot be carried over to the target provider: ${why}.`);
    }
    throw invalidField(field, `Unknown field "${field}": Anthropic's Messages API has no such field; remove it.`);
  }
}

function number(value: unknown, param: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidField(param, `${param} must be a number.`);
  return value;
}

function stopSequences(value: unknown): string[] | undefined {
  if (value == null) return undefined;
  if (!Array.isArray(value) || value.some((s) => typeof s !== 'string')) {
    throw invalidField('stop_sequences', 'stop_sequences must be an array of strings.');
  }
  if (value.length > MAX_STOP_SEQUENCES) {
    throw invalidField('stop_sequences', `stop_sequences has ${value.length} entries; the target provider takes at most ${MAX_STOP_SEQUENCES}: keep the ${MAX_STOP_SEQUENCES} that matter most.`);
  }
  return value.length > 0 ? (value as string[]) : undefined;
}
