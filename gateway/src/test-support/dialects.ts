// The data plane's dialects as one table, so a shared suite can run every case against every dialect: how to build a
// request, send it, read an error's code from the body, and read what the upstream received.
import type { FakeOpenAI } from './fake-openai.js';
import type { ScriptedAnthropic } from './scripted-anthropic.js';
import type { ScriptedResponses } from './scripted-responses.js';

/** What a case asks for, in any dialect's words. */
export interface Ask {
  /** Defaults to the dialect's model. */
  model?: string;
  /** The user's text (default "hello"). */
  text?: string;
  /**
   * The output limit (Chat: max_completion_tokens, or max_tokens with `legacyMaxTokens`; Messages: max_tokens; Responses:
   * max_output_tokens). Default 64.
   */
  maxTokens?: number;
  /** Chat only: write the older max_tokens field instead of max_completion_tokens. */
  legacyMaxTokens?: boolean;
  stream?: boolean;
  /**
   * A tool result carrying this text before the user's text (Chat: a tool message; Messages: a tool_result block;
   * Responses: a function_call_output item).
   */
  toolResult?: string;
  /** A system prompt (Chat: a leading system message; Messages: `system`; Responses: `instructions`). */
  system?: string;
  /** An earlier assistant turn before the user's text. */
  assistantText?: string;
  /** The description of the one tool offered (offered whenever toolResult or this is set). */
  toolDescription?: string;
  /** The end user's id (Chat: `user`; Messages: `metadata.user_id`; Responses: `safety_identifier`). */
  endUser?: string;
}

export interface SendOptions {
  /** The agent key; null sends none. */
  key: string | null;
  headers?: Record<string, string>;
  /** Send the key as `Authorization: Bearer` even where the dialect's clients use another header. */
  bearer?: boolean;
  /** A query string for the path, e.g. `?beta=true`. */
  query?: string;
}

/** An answer, read to its end (a stream included). */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The JSON body, or undefined (a stream, or no JSON). */
  json: any;
}

/** An error as a dialect's body carries it. */
export interface WireError {
  type: string;
  code: string;
  message: string;
}

export type ErrorShape = 'openai' | 'anthropic';

/** What the upstream behind a dialect received. */
export interface UpstreamView {
  /** Requests received so far (model calls only). */
  count(): number;
  /** The body of the last model call. */
  last(): any;
  /** The text of the last model call's body, as received. */
  lastRaw(): string | undefined;
  /** The output limit a received body asks for. */
  maxTokens(body: any): number | undefined;
}

export interface Dialect {
  /** A name for test titles. */
  name: string;
  /** The trace step's `endpoint`. */
  endpoint: 'chat.completions' | 'messages' | 'responses';
  path: string;
  errorShape: ErrorShape;
  model: string;
  /** What a served answer looks like: fields of its JSON body, and a line every served stream carries near its end. */
  served: { json: Record<string, unknown>; streamEnd: string };
  body(ask: Ask): Record<string, unknown>;
  headers(opts: SendOptions): Record<string, string>;
  /** The error in a body of this dialect, or null when the body is not this dialect's error shape. */
  error(json: unknown): WireError | null;
  upstream: UpstreamView;
}

/** Anthropic's error type for each HTTP status (CONTRACT, POST /messages). */
export const ANTHROPIC_ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'api_error',
};

/** CONTRACT's error type (OpenAI shape) for each data-plane code the policy suite meets. */
export const OPENAI_ERROR_TYPES: Readonly<Record<string, string>> = {
  invalid_header: 'invalid_request_error',
  invalid_api_key: 'authentication_error',
  maintenance: 'service_unavailable',
  model_not_allowed: 'policy_blocked',
  pii_detected: 'policy_blocked',
  retry_blocked: 'policy_blocked',
  cost_cap_exceeded: 'policy_blocked',
  policy_not_permitted: 'policy_blocked',
  price_unknown: 'policy_blocked',
  daily_budget_exceeded: 'budget_exceeded',
  monthly_budget_exceeded: 'budget_exceeded',
  trace_budget_exceeded: 'budget_exceeded',
  rpm_exceeded: 'rate_limited',
  tpm_exceeded: 'rate_limited',
};

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

function openaiError(json: unknown): WireError | null {
  if (!isObject(json) || !isObject(json.error) || Object.keys(json).length !== 1) return null;
  const e = json.error;
  return typeof e.code === 'string' && typeof e.type === 'string' && typeof e.message === 'string' ? { type: e.type, code: e.code, message: e.message } : null;
}

function anthropicError(json: unknown): WireError | null {
  if (!isObject(json) || json.type !== 'error' || !isObject(json.error)) return null;
  const e = json.error;
  return typeof e.code === 'string' && typeof e.type === 'string' && typeof e.message === 'string' ? { type: e.type, code: e.code, message: e.message } : null;
}

const TOOL_ID = 'call_lookup_1';

const offersTool = (ask: Ask) => ask.toolResult !== undefined || ask.toolDescription !== undefined;
const toolDescription = (ask: Ask) => (ask.toolDescription !== undefined ? { description: ask.toolDescription } : {});

function chatBody(model: string, ask: Ask): Record<string, unknown> {
  const messages: unknown[] = [];
  if (ask.system !== undefined) messages.push({ role: 'system', content: ask.system });
  if (ask.assistantText !== undefined) messages.push({ role: 'user', content: 'hi' }, { role: 'assistant', content: ask.assistantText });
  if (ask.toolResult !== undefined) {
    messages.push(
      { role: 'user', content: 'look the customer up' },
      { role: 'assistant', content: null, tool_calls: [{ id: TOOL_ID, type: 'function', function: { name: 'lookup', arguments: '{"id":"42"}' } }] },
      { role: 'tool', tool_call_id: TOOL_ID, content: ask.toolResult },
    );
  }
  messages.push({ role: 'user', content: ask.text ?? 'hello' });
  return {
    model: ask.model ?? model,
    messages,
    [ask.legacyMaxTokens ? 'max_tokens' : 'max_completion_tokens']: ask.maxTokens ?? 64,
    ...(offersTool(ask) ? { tools: [{ type: 'function', function: { name: 'lookup', ...toolDescription(ask), parameters: { type: 'object', properties: { id: { type: 'string' } } } } }] } : {}),
    ...(ask.endUser !== undefined ? { user: ask.endUser } : {}),
    ...(ask.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

function messagesBody(model: string, ask: Ask): Record<string, unknown> {
  const messages: unknown[] = [];
  if (ask.assistantText !== undefined) messages.push({ role: 'user', content: 'hi' }, { role: 'assistant', content: ask.assistantText });
  if (ask.toolResult !== undefined) {
    messages.push(
      { role: 'user', content: 'look the customer up' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01lookup', name: 'lookup', input: { id: '42' } }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01lookup', content: [{ type: 'text', text: ask.toolResult }] },
          { type: 'text', text: ask.text ?? 'hello' },
        ],
      },
    );
  } else {
    messages.push({ role: 'user', content: ask.text ?? 'hello' });
  }
  return {
    model: ask.model ?? model,
    max_tokens: ask.maxTokens ?? 64,
    ...(ask.system !== undefined ? { system: ask.system } : {}),
    messages,
    ...(offersTool(ask) ? { tools: [{ name: 'lookup', ...toolDescription(ask), input_schema: { type: 'object', properties: { id: { type: 'string' } } } }] } : {}),
    ...(ask.endUser !== undefined ? { metadata: { user_id: ask.endUser } } : {}),
    ...(ask.stream ? { stream: true } : {}),
  };
}

/**
 * A Responses request: the user's text alone is a string `input`; with earlier turns or a tool result, `input` is a list of
 * items (messages with content parts, a function_call and its function_call_output).
 */
function responsesBody(model: string, ask: Ask): Record<string, unknown> {
  const items: unknown[] = [];
  if (ask.assistantText !== undefined) {
    items.push({ role: 'user', content: 'hi' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: ask.assistantText, annotations: [] }] });
  }
  if (ask.toolResult !== undefined) {
    items.push(
      { role: 'user', content: 'look the customer up' },
      { type: 'function_call', call_id: TOOL_ID, name: 'lookup', arguments: '{"id":"42"}' },
      { type: 'function_call_output', call_id: TOOL_ID, output: ask.toolResult },
    );
  }
  const text = ask.text ?? 'hello';
  return {
    model: ask.model ?? model,
    ...(ask.system !== undefined ? { instructions: ask.system } : {}),
    input: items.length === 0 ? text : [...items, { role: 'user', content: [{ type: 'input_text', text }] }],
    max_output_tokens: ask.maxTokens ?? 64,
    ...(offersTool(ask) ? { tools: [{ type: 'function', name: 'lookup', ...toolDescription(ask), parameters: { type: 'object', properties: { id: { type: 'string' } } } }] } : {}),
    ...(ask.endUser !== undefined ? { safety_identifier: ask.endUser } : {}),
    ...(ask.stream ? { stream: true } : {}),
  };
}

function fakeOpenAIView(upstream: FakeOpenAI): UpstreamView {
  const calls = () => upstream.requests.filter((r) => r.url.endsWith('/chat/completions'));
  return {
    count: () => calls().length,
    last: () => calls().at(-1)?.body,
    lastRaw: () => calls().at(-1)?.raw,
    maxTokens: (body) => body?.max_completion_tokens ?? body?.max_tokens,
  };
}

function scriptedAnthropicView(upstream: ScriptedAnthropic): UpstreamView {
  return {
    count: () => upstream.messageRequests.length,
    last: () => upstream.messageRequests.at(-1)?.body,
    lastRaw: () => upstream.messageRequests.at(-1)?.raw,
    maxTokens: (body) => body?.max_tokens,
  };
}

function scriptedResponsesView(upstream: ScriptedResponses): UpstreamView {
  return {
    count: () => upstream.responseRequests.length,
    last: () => upstream.responseRequests.at(-1)?.body,
    lastRaw: () => upstream.responseRequests.at(-1)?.raw,
    maxTokens: (body) => body?.max_output_tokens,
  };
}

const bearer = (key: string | null): Record<string, string> => (key === null ? {} : { authorization: `Bearer ${key}` });

export interface DialectUpstreams {
  /** An OpenAI-format upstream, configured as provider `openaiProvider`. */
  openai: FakeOpenAI;
  /** An Anthropic upstream, configured as provider `anthropicProvider`. */
  anthropic: ScriptedAnthropic;
  /** `provider/model` served by the OpenAI-format upstream. */
  openaiModel: string;
  /** `provider/model` served by the Anthropic upstream. */
  anthropicModel: string;
  /**
   * `provider/model` served by the OpenAI-format upstream through a provider without a Responses API (openai-compatible),
   * so that Responses requests to it are translated to Chat Completions. Adds "responses translated".
   */
  chatOnlyModel?: string;
  /** A Responses upstream, configured as an `openai` provider serving `responsesModel`. Adds "responses native". */
  responses?: ScriptedResponses;
  responsesModel?: string;
}

const OPENAI_SERVED = { json: { object: 'chat.completion' }, streamEnd: 'data: [DONE]' };
const ANTHROPIC_SERVED = { json: { type: 'message', role: 'assistant' }, streamEnd: 'event: message_stop' };
const RESPONSES_SERVED = { json: { object: 'response', status: 'completed' }, streamEnd: 'event: response.completed' };

/**
 * Chat Completions, Anthropic Messages native (to an Anthropic upstream) and Anthropic Messages translated (to an
 * OpenAI-format upstream); OpenAI Responses translated to the Anthropic upstream, and, when given their upstreams,
 * Responses translated to chat on the OpenAI-format upstream and Responses native to a Responses upstream.
 */
export function dialects(u: DialectUpstreams): Dialect[] {
  const openaiView = fakeOpenAIView(u.openai);
  const responses = (name: string, model: string, upstream: UpstreamView): Dialect => ({
    name,
    endpoint: 'responses',
    path: '/v1/responses',
    errorShape: 'openai',
    model,
    served: RESPONSES_SERVED,
    body: (ask) => responsesBody(model, ask),
    headers: (o) => bearer(o.key),
    error: openaiError,
    upstream,
  });
  return [
    {
      name: 'chat completions',
      endpoint: 'chat.completions',
      path: '/v1/chat/completions',
      errorShape: 'openai',
      model: u.openaiModel,
      served: OPENAI_SERVED,
      body: (ask) => chatBody(u.openaiModel, ask),
      headers: (o) => bearer(o.key),
      error: openaiError,
      upstream: openaiView,
    },
    {
      name: 'messages native',
      endpoint: 'messages',
      path: '/v1/messages',
      errorShape: 'anthropic',
      model: u.anthropicModel,
      served: ANTHROPIC_SERVED,
      body: (ask) => messagesBody(u.anthropicModel, ask),
      headers: (o) => (o.bearer || o.key === null ? bearer(o.key) : { 'x-api-key': o.key, 'anthropic-version': '2023-06-01' }),
      error: anthropicError,
      upstream: scriptedAnthropicView(u.anthropic),
    },
    {
      name: 'messages translated',
      endpoint: 'messages',
      path: '/v1/messages',
      errorShape: 'anthropic',
      model: u.openaiModel,
      served: ANTHROPIC_SERVED,
      body: (ask) => messagesBody(u.openaiModel, ask),
      headers: (o) => (o.bearer || o.key === null ? bearer(o.key) : { 'x-api-key': o.key, 'anthropic-version': '2023-06-01' }),
      error: anthropicError,
      upstream: openaiView,
    },
    ...(u.chatOnlyModel !== undefined ? [responses('responses translated', u.chatOnlyModel, openaiView)] : []),
    responses('responses translated to anthropic', u.anthropicModel, scriptedAnthropicView(u.anthropic)),
    ...(u.responses !== undefined && u.responsesModel !== undefined ? [responses('responses native', u.responsesModel, scriptedResponsesView(u.responses))] : []),
  ];
}

/** Sends `body` to the dialect's path at `origin` (http://HOST:PORT) and reads the whole answer. */
export async function send(origin: string, d: Dialect, body: unknown, opts: SendOptions): Promise<Answer> {
  const res = await fetch(`${origin}${d.path}${opts.query ?? ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...d.headers(opts), ...(opts.headers ?? {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** The error type a dialect's body should carry for this status and code. */
export function expectedErrorType(d: Dialect, status: number, code: string): string | undefined {
  return d.errorShape === 'anthropic' ? ANTHROPIC_ERROR_TYPES[status] : OPENAI_ERROR_TYPES[code];
}
