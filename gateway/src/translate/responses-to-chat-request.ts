// An OpenAI Responses request -> an OpenAI Chat Completions request, for upstreams that speak only chat.
import { AgentgwError } from '../contract/errors.js';
import type { OpenAIChatRequest, OpenAIResponseFormat } from '../providers/openai-format.js';
import { invalidField, isObject } from './invalid-field.js';
import type { ReasoningEffort } from './map-thinking-to-reasoning-effort.js';
import type { ResponsesInputItem, ResponsesRequest } from './responses-api.js';
import { ChatMessagesBuilder } from './responses-input.js';
import { CARRIED_FIELDS, DROPPED_FIELDS, GATEWAY_FIELDS, NOT_CARRYABLE_FIELDS } from './responses-request-fields.js';
import { type ClientToolIndex, convertResponsesTools, type TargetWebSearch } from './responses-tools.js';

export { DROPPED_RESPONSES_HINTS } from './responses-request-fields.js';

/** OpenAIChatRequest has no reasoning_effort; reasoning targets take it. */
export type TranslatedChatRequest = OpenAIChatRequest & { reasoning_effort?: ReasoningEffort };

export interface ResponsesToChatOptions {
  /** The target's model id. */
  model: string;
  /** The output limit field the target takes (OpenAI's reasoning models refuse max_tokens). */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Whether the target model reasons, so that reasoning.effort becomes reasoning_effort. */
  reasons: boolean;
  /** Whether the target is Claude, which takes back the thinking of its earlier answers (reasoning items agentgw made). */
  carryThinking?: boolean;
  /** Items of earlier turns, rebuilt from previous_response_id (their inputs and outputs, in order): prepended to input. */
  history?: ResponsesInputItem[];
  /**
   * The web search the target runs itself (see TargetWebSearch): when it runs the request's web_search tool, the tool
   * becomes web_search_options; otherwise (false, the default) it is left out and named in droppedTools.
   */
  webSearch?: TargetWebSearch;
}

export interface ResponsesToChatResult {
  request: TranslatedChatRequest;
  /** Built-in tools left out of the upstream call, by type (for the x-agentgw-dropped-tools header). */
  droppedTools: string[];
  /** The request's client tools by chat function name, to turn the target's tool calls back into Responses items. */
  tools: ClientToolIndex;
}

export function responsesToChatRequest(body: ResponsesRequest, opts: ResponsesToChatOptions): ResponsesToChatResult {
  checkTopLevelFields(body);

  const builder = new ChatMessagesBuilder(opts.carryThinking === true);
  const instructions = body.instructions;
  if (instructions != null && typeof instructions !== 'string') throw invalidField('instructions', 'instructions must be a string.');
  // Instructions are this turn's: a previous response's instructions are not carried over (as OpenAI does).
  if (instructions) builder.out.push({ role: 'system', content: instructions });
  if (opts.history && opts.history.length > 0) {
    try {
      builder.add(opts.history, (i) => (i < 0 ? 'the earlier conversation' : `item ${i} of the earlier conversation`));
    } catch (e) {
      // Stored items cannot be edited: the field to change is previous_response_id.
      if (e instanceof AgentgwError) throw invalidField('previous_response_id', `The conversation of previous_response_id cannot continue on the target provider: ${e.message}`);
      throw e;
    }
  }
  const input = body.input;
  if (typeof input === 'string') {
    if (!input) throw invalidField('input', 'input is empty; send the user\'s text or a non-empty array of items.');
    builder.addText(input);
  } else if (Array.isArray(input)) {
    builder.add(input, (i) => (i < 0 ? 'input' : `input.${i}`));
  } else if (input != null) {
    throw invalidField('input', 'input must be a string or an array of items.');
  }
  const messages = builder.finish();
  if (!messages.some((m) => m.role !== 'system')) {
    throw invalidField('input', 'input is missing: send the user\'s text, or items (messages, function_call_output, ...) for the model to answer.');
  }

  const request: TranslatedChatRequest = { model: opts.model, messages };

  const max = body.max_output_tokens;
  if (max != null) {
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1) {
      throw invalidField('max_output_tokens', 'max_output_tokens must be a positive integer: the most tokens the answer (reasoning included) may take.');
    }
    request[opts.maxTokensField] = max;
  }
  if (body.temperature != null) request.temperature = number(body.temperature, 'temperature');
  if (body.top_p != null) request.top_p = number(body.top_p, 'top_p');

  if (body.stream != null && typeof body.stream !== 'boolean') throw invalidField('stream', 'stream must be true or false.');
  if (body.stream === true) {
    request.stream = true;
    // Usage comes only in a last chunk that must be asked for; billing and response.completed need it.
    request.stream_options = { include_usage: true };
  }

  const user = body.user ?? body.safety_identifier;
  if (user != null) {
    if (typeof user !== 'string') throw invalidField(body.user != null ? 'user' : 'safety_identifier', `${body.user != null ? 'user' : 'safety_identifier'} must be a string.`);
    if (user) request.user = user;
  }

  const tools = convertResponsesTools(withAdditionalTools(body.tools, opts.history, body.input), body.tool_choice, body.parallel_tool_calls, opts.webSearch ?? false);
  if (tools.tools) request.tools = tools.tools;
  if (tools.tool_choice !== undefined) request.tool_choice = tools.tool_choice;
  if (tools.parallel_tool_calls !== undefined) request.parallel_tool_calls = tools.parallel_tool_calls;
  if (tools.web_search_options) request.web_search_options = tools.web_search_options;

  const format = textFormat(body.text);
  if (format) request.response_format = format;

  const effort = reasoningEffort(body.reasoning);
  if (effort && opts.reasons) request.reasoning_effort = effort;

  return { request, droppedTools: tools.droppedTools, tools: tools.index };
}

/**
 * Codex's "responses lite" bodies carry their tools in an `additional_tools` input item instead of `tools`: they join
 * the request's tools, so a translated target can call them too.
 */
function withAdditionalTools(tools: unknown, ...inputs: unknown[]): unknown {
  let extra: unknown[] | null = null;
  for (const input of inputs) {
    if (!Array.isArray(input)) continue;
    for (const item of input) {
      if (isObject(item) && item.type === 'additional_tools' && Array.isArray(item.tools)) (extra ??= []).push(...item.tools);
    }
  }
  if (extra === null) return tools;
  return Array.isArray(tools) ? [...tools, ...extra] : extra;
}

function checkTopLevelFields(body: ResponsesRequest): void {
  if (!isObject(body)) throw invalidField('body', 'The request body must be a JSON object.');
  for (const field of Object.keys(body)) {
    if (CARRIED_FIELDS.has(field) || GATEWAY_FIELDS.has(field) || DROPPED_FIELDS.has(field)) continue;
    const why = NOT_CARRYABLE_FIELDS[field];
    if (why !== undefined) {
      // null (and false, 0) is how SDKs spell "not set".
      const value = body[field];
      if (value == null || value === false || value === 0) continue;
      throw invalidField(field, `${field} cannot be carried over to the target provider: ${why}.`);
    }
    throw invalidField(field, `Unknown field "${field}": OpenAI's Responses API has no such field; remove it.`);
  }
  if (body.store != null && typeof body.store !== 'boolean') throw invalidField('store', 'store must be true or false.');
  if (body.previous_response_id != null && typeof body.previous_response_id !== 'string') {
    throw invalidField('previous_response_id', 'previous_response_id must be the id of an earlier response (resp_...).');
  }
}

function number(value: unknown, param: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidField(param, `${param} must be a number.`);
  return value;
}

function textFormat(text: unknown): OpenAIResponseFormat | undefined {
  if (text == null) return undefined;
  if (!isObject(text)) throw invalidField('text', 'text must be an object such as {"format": {"type": "json_schema", ...}}.');
  for (const key of Object.keys(text)) {
    if (key !== 'format' && key !== 'verbosity') throw invalidField(`text.${key}`, `Unknown field "text.${key}": text takes format and verbosity; remove it.`);
  }
  if (text.verbosity != null && text.verbosity !== 'low' && text.verbosity !== 'medium' && text.verbosity !== 'high') {
    throw invalidField('text.verbosity', 'text.verbosity must be "low", "medium" or "high".');
  }
  const format = text.format;
  if (format == null) return undefined;
  if (!isObject(format)) throw invalidField('text.format', 'text.format must be an object such as {"type": "text"}.');
  switch (format.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      if (typeof format.name !== 'string' || !format.name) throw invalidField('text.format.name', 'text.format.name must name the schema (a non-empty string).');
      if (!isObject(format.schema)) throw invalidField('text.format.schema', 'text.format.schema must be a JSON schema object.');
      const jsonSchema: Extract<OpenAIResponseFormat, { type: 'json_schema' }>['json_schema'] = { name: format.name, schema: format.schema };
      if (format.description != null) {
        if (typeof format.description !== 'string') throw invalidField('text.format.description', 'text.format.description must be a string.');
        jsonSchema.description = format.description;
      }
      if (format.strict != null) {
        if (typeof format.strict !== 'boolean') throw invalidField('text.format.strict', 'text.format.strict must be true or false.');
        jsonSchema.strict = format.strict;
      }
      return { type: 'json_schema', json_schema: jsonSchema };
    }
    default:
      throw invalidField('text.format.type', 'text.format.type must be "text", "json_object" or "json_schema".');
  }
}

function reasoningEffort(reasoning: unknown): ReasoningEffort | undefined {
  if (reasoning == null) return undefined;
  if (!isObject(reasoning)) throw invalidField('reasoning', 'reasoning must be an object such as {"effort": "medium"}.');
  for (const key of ['summary', 'generate_summary'] as const) {
    const v = reasoning[key];
    if (v != null && v !== 'auto' && v !== 'concise' && v !== 'detailed') throw invalidField(`reasoning.${key}`, `reasoning.${key} must be "auto", "concise" or "detailed".`);
  }
  switch (reasoning.effort) {
    case undefined:
    case null:
    case 'none':
      return undefined;
    case 'minimal':
      return 'low';
    case 'low':
    case 'medium':
    case 'high':
      return reasoning.effort;
    case 'xhigh':
    case 'max':
      return 'high';
    default:
      throw invalidField('reasoning.effort', 'reasoning.effort must be "none", "minimal", "low", "medium", "high", "xhigh" or "max".');
  }
}
