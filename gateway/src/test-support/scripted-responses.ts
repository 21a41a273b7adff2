import { type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local server speaking OpenAI's Responses wire format, answering from a script.
 *
 * - `POST .../responses` (any prefix, e.g. `/v1/responses`) is answered by `script(body, index, headers)`:
 *   a `response` object as JSON, or, when the request had `stream: true`, the SSE event sequence OpenAI sends for it
 *   (`event: <type>` + `data: <json>` frames, every event with a `sequence_number` from 0):
 *   `response.created`, `response.in_progress`, then per output item `response.output_item.added`,
 *   for a message `response.content_part.added`, `response.output_text.delta`..., `response.output_text.done`,
 *   `response.content_part.done`; for a function call `response.function_call_arguments.delta`...,
 *   `response.function_call_arguments.done`; for reasoning `response.reasoning_summary_part.added`,
 *   `response.reasoning_summary_text.delta`..., `response.reasoning_summary_text.done`, `response.reasoning_summary_part.done`;
 *   then `response.output_item.done`; and last `response.completed` (or `response.incomplete` / `response.failed`) with usage.
 * - `{ status, body, headers? }` is sent as is (errors: see `errorResponse`); `{ sse }` is a raw event stream.
 * - `GET .../models` answers OpenAI's list format (`{ object: "list", data: [{ id, object: "model", created, owned_by }] }`).
 * - `GET` / `DELETE .../responses/{id}` and `GET .../responses/{id}/input_items` serve the responses this server made
 *   with `store` not false.
 * - Anything else is a 404 in OpenAI's error shape.
 *
 * Every request (all paths) is recorded in `requests`; the `POST /responses` ones also in `responseRequests`
 * (the `index` the script was given).
 *
 * What Codex sends to it is recorded in `data-plane/dialects/responses/__fixtures__/CODEX.md`.
 */

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details?: { cached_tokens?: number; [key: string]: unknown };
  output_tokens: number;
  output_tokens_details?: { reasoning_tokens?: number; [key: string]: unknown };
  total_tokens?: number;
  [key: string]: unknown;
}

/** An assistant message with one `output_text` part. */
export interface MessageItemReply {
  type: 'message';
  text: string;
  id?: string;
  /** Codex (gpt-5.x) reads `phase: "commentary" | "final_answer"` on messages; left out unless given. */
  phase?: string;
}

/** A function tool call. */
export interface FunctionCallItemReply {
  type: 'function_call';
  name: string;
  /** An object is sent as its JSON text. */
  arguments: string | Record<string, unknown>;
  /** Default: a new `call_` id. */
  call_id?: string;
  id?: string;
  namespace?: string;
}

/** A reasoning item: summary texts (streamed as reasoning_summary_text deltas) and an optional opaque `encrypted_content`. */
export interface ReasoningItemReply {
  type: 'reasoning';
  summary?: string[];
  encrypted_content?: string;
  id?: string;
}

/** Any other output item (custom_tool_call, web_search_call, ...): sent as given in output_item.added and .done. */
export interface RawItemReply {
  type: string;
  raw: Record<string, unknown>;
}

export type OutputItemReply = MessageItemReply | FunctionCallItemReply | ReasoningItemReply | RawItemReply;

/** One model response. Missing fields are filled in as OpenAI would. */
export interface ResponseReply {
  output: OutputItemReply[];
  /** Default: input from the request's bytes / 4, output from the output's bytes / 4. */
  usage?: ResponsesUsage;
  /** Default: the request's model. */
  model?: string;
  /** Default: a new `resp_` id. */
  id?: string;
  /** Default `completed`; `incomplete` ends the stream with `response.incomplete`, `failed` with `response.failed`. */
  status?: 'completed' | 'incomplete' | 'failed';
  incomplete_details?: { reason: string } | null;
  error?: { code: string; message: string } | null;
}

/** Any status with a JSON body (an error, usually: see `errorResponse`). */
export interface ResponsesStatusReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A raw SSE body, sent as is with `content-type: text/event-stream`. */
export interface ResponsesSseReply {
  sse: string;
  status?: number;
  headers?: Record<string, string>;
}

export type ResponsesScriptReply = ResponseReply | ResponsesStatusReply | ResponsesSseReply;
export type ResponsesScript = (body: any, index: number, headers: IncomingHttpHeaders) => ResponsesScriptReply | Promise<ResponsesScriptReply>;

export interface ResponsesRecordedRequest {
  method: string;
  /** Path with its query string, e.g. `/v1/models?client_version=0.169.0`. */
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** The body's raw text. */
  raw: string;
}

export interface ScriptedResponsesOptions {
  /** Characters per text / reasoning delta and per function-argument fragment (default 12). */
  chunkSize?: number;
  /** Wait this long before answering each POST /responses. */
  delayMs?: number;
  /** Model ids listed by GET /models (default: `gpt-5-codex`, `gpt-5`, `gpt-4.1`, `gpt-4o`). */
  models?: string[];
}

export interface ScriptedResponses {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:PORT/v1` (the value for Codex's `base_url` and the OpenAI SDK's `baseURL`). */
  url: string;
  origin: string;
  requests: ResponsesRecordedRequest[];
  responseRequests: ResponsesRecordedRequest[];
  /** The response objects this server made, by id (what GET /responses/{id} serves). */
  stored: Map<string, { response: Record<string, unknown>; input: unknown[] }>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------------
// ids and counts

let idCounter = 0;
function newId(prefix: string): string {
  idCounter += 1;
  return `${prefix}_scripted${Date.now().toString(16)}${String(idCounter).padStart(6, '0')}`;
}

function argumentsText(a: string | Record<string, unknown>): string {
  return typeof a === 'string' ? a : JSON.stringify(a);
}

/** Deterministic input count: UTF-8 bytes of JSON(instructions, input, tools) / 4, at least 1. */
export function countResponsesInputTokens(body: any): number {
  const text = JSON.stringify([body?.instructions ?? null, body?.input ?? null, body?.tools ?? null]);
  return Math.max(1, Math.ceil(Buffer.byteLength(text, 'utf8') / 4));
}

function outputTokens(reply: ResponseReply): number {
  const text = reply.output
    .map((o) => {
      if ('raw' in o) return JSON.stringify(o.raw);
      if (o.type === 'message') return (o as MessageItemReply).text;
      if (o.type === 'function_call') return (o as FunctionCallItemReply).name + argumentsText((o as FunctionCallItemReply).arguments);
      return ((o as ReasoningItemReply).summary ?? []).join('');
    })
    .join('');
  return Math.max(1, Math.ceil(Buffer.byteLength(text, 'utf8') / 4));
}

function usageOf(reply: ResponseReply, body: any): ResponsesUsage {
  const given = reply.usage;
  const input = given?.input_tokens ?? countResponsesInputTokens(body);
  const output = given?.output_tokens ?? outputTokens(reply);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0, ...(given?.input_tokens_details ?? {}) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0, ...(given?.output_tokens_details ?? {}) },
    total_tokens: given?.total_tokens ?? input + output,
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// reply helpers

/** A final text answer (one assistant message). */
export function textResponse(text: string, usage?: ResponsesUsage): ResponseReply {
  return { output: [{ type: 'message', text }], ...(usage ? { usage } : {}) };
}

/** A single function call (Codex then runs the tool and sends a `function_call_output` with this `call_id`). */
export function functionCallResponse(name: string, args: string | Record<string, unknown>, callId?: string, usage?: ResponsesUsage): ResponseReply {
  return { output: [{ type: 'function_call', name, arguments: args, ...(callId ? { call_id: callId } : {}) }], ...(usage ? { usage } : {}) };
}

/**
 * A single custom (freeform) tool call, e.g. Codex's `apply_patch` with a `*** Begin Patch ... *** End Patch` text;
 * Codex answers it with a `custom_tool_call_output`.
 */
export function customToolCallResponse(name: string, input: string, callId?: string, usage?: ResponsesUsage): ResponseReply {
  const raw = { type: 'custom_tool_call', id: newId('ctc'), status: 'completed', call_id: callId ?? newId('call'), name, input };
  return { output: [{ type: 'custom_tool_call', raw }], ...(usage ? { usage } : {}) };
}

/** An error in OpenAI's shape (`{ error: { message, type, param, code } }`). */
export function errorResponse(status: number, message: string, code: string | null = null, headers?: Record<string, string>): ResponsesStatusReply {
  const type = status === 429 ? (code === 'insufficient_quota' ? 'insufficient_quota' : 'rate_limit_exceeded') : status >= 500 ? 'server_error' : status === 401 ? 'invalid_request_error' : status === 403 ? 'permission_error' : 'invalid_request_error';
  return { status, body: { error: { message, type, param: null, code } }, ...(headers ? { headers } : {}) };
}

function isStatusReply(r: ResponsesScriptReply): r is ResponsesStatusReply {
  return typeof (r as ResponsesStatusReply).status === 'number' && 'body' in r;
}

function isSseReply(r: ResponsesScriptReply): r is ResponsesSseReply {
  return typeof (r as ResponsesSseReply).sse === 'string';
}

// ---------------------------------------------------------------------------------------------------------------------
// reading requests

/** The request's input as a list of items (a string input is one user message). */
export function inputItems(body: any): any[] {
  if (typeof body?.input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: body.input }] }];
  return Array.isArray(body?.input) ? body.input : [];
}

/** The `function_call_output` items of the request (all of them: Codex resends the whole conversation each turn). */
export function functionCallOutputs(body: any): Array<{ call_id: string; output: unknown }> {
  return inputItems(body).filter((i: any) => i?.type === 'function_call_output' || i?.type === 'custom_tool_call_output');
}

/** The last input item is a tool result (the turn after a tool ran). */
export function lastInputIsToolOutput(body: any): boolean {
  const last = inputItems(body).at(-1);
  return last?.type === 'function_call_output' || last?.type === 'custom_tool_call_output';
}

/** The text of the last user message in the input (what the user asked), or ''. */
export function lastUserText(body: any): string {
  const users = inputItems(body).filter((i: any) => (i?.type === 'message' || i?.type === undefined) && i?.role === 'user');
  const last = users.at(-1);
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return (Array.isArray(last.content) ? last.content : []).map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('');
}

/**
 * The request's tool declarations: `tools`, plus those of `additional_tools` input items (Codex's "responses lite"
 * models, its default, send no `tools` field but an `{ type: "additional_tools", role: "developer", tools: [...] }` item).
 */
export function declaredTools(body: any): any[] {
  const fromItems = inputItems(body).flatMap((i: any) => (i?.type === 'additional_tools' && Array.isArray(i.tools) ? i.tools : []));
  return [...(Array.isArray(body?.tools) ? body.tools : []), ...fromItems];
}

/** The names of the request's tools (function / custom tools by `name`, namespaces as `namespace.name`, built-in ones by `type`). */
export function toolNames(body: any): string[] {
  return declaredTools(body).flatMap((t: any): string[] => {
    if (t?.type === 'namespace' && Array.isArray(t.tools)) return t.tools.map((x: any) => `${t.name}.${x?.name ?? x?.type}`);
    return [typeof t?.name === 'string' ? t.name : String(t?.type)];
  });
}

/**
 * A script driving tool round trips: while fewer than `calls.length` function_call_outputs came back, the next call is
 * made; then `finalText`. Requests declaring no tools (see `declaredTools`) get `finalText` at once.
 */
export function toolSequenceScript(calls: Array<{ name: string; args: string | Record<string, unknown> }>, finalText: string | ((body: any) => string), usage?: ResponsesUsage): ResponsesScript {
  return (body: any): ResponseReply => {
    const text = typeof finalText === 'function' ? finalText(body) : finalText;
    if (declaredTools(body).length === 0) return textResponse(text, usage);
    const next = calls[functionCallOutputs(body).length];
    return next ? functionCallResponse(next.name, next.args, undefined, usage) : textResponse(text, usage);
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// building responses and streams

function chunks(text: string, size: number): string[] {
  const cps = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < cps.length; i += size) out.push(cps.slice(i, i + size).join(''));
  return out;
}

type Item = Record<string, unknown> & { type: string; id?: string };

/** The reply with every message / function_call / reasoning item given its ids (so the JSON and the stream agree). */
export function withIds(reply: ResponseReply): ResponseReply {
  return {
    ...reply,
    id: reply.id ?? newId('resp'),
    output: reply.output.map((o): OutputItemReply => {
      if ('raw' in o) return o;
      if (o.type === 'message') return { ...(o as MessageItemReply), id: (o as MessageItemReply).id ?? newId('msg') };
      if (o.type === 'function_call') {
        const f = o as FunctionCallItemReply;
        return { ...f, id: f.id ?? newId('fc'), call_id: f.call_id ?? newId('call') };
      }
      return { ...(o as ReasoningItemReply), id: (o as ReasoningItemReply).id ?? newId('rs') };
    }),
  };
}

/** The completed output items of a reply (ids filled in). */
function completedItems(reply: ResponseReply, include: string[]): Item[] {
  return reply.output.map((o): Item => {
    if ('raw' in o) return { ...(o as RawItemReply).raw, type: o.type };
    if (o.type === 'message') {
      const m = o as MessageItemReply;
      return {
        id: m.id ?? newId('msg'),
        type: 'message',
        status: 'completed',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text: m.text }],
        ...(m.phase ? { phase: m.phase } : {}),
        role: 'assistant',
      };
    }
    if (o.type === 'function_call') {
      const f = o as FunctionCallItemReply;
      return {
        id: f.id ?? newId('fc'),
        type: 'function_call',
        status: 'completed',
        arguments: argumentsText(f.arguments),
        call_id: f.call_id ?? newId('call'),
        name: f.name,
        ...(f.namespace ? { namespace: f.namespace } : {}),
      };
    }
    const r = o as ReasoningItemReply;
    const encrypted = r.encrypted_content ?? (include.includes('reasoning.encrypted_content') ? `gAAAAAscripted${Buffer.from(JSON.stringify(r.summary ?? [])).toString('base64')}` : undefined);
    return {
      id: r.id ?? newId('rs'),
      type: 'reasoning',
      ...(encrypted !== undefined ? { encrypted_content: encrypted } : {}),
      summary: (r.summary ?? []).map((text) => ({ type: 'summary_text', text })),
    };
  });
}

function responseObject(body: any, id: string, model: string, status: string, output: Item[], usage: ResponsesUsage | null, extra: { error?: unknown; incomplete_details?: unknown; completed_at?: number | null } = {}): Record<string, unknown> {
  const createdAt = Math.floor(Date.now() / 1000);
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: body?.background ?? false,
    completed_at: extra.completed_at ?? null,
    error: extra.error ?? null,
    frequency_penalty: 0,
    incomplete_details: extra.incomplete_details ?? null,
    instructions: body?.instructions ?? null,
    max_output_tokens: body?.max_output_tokens ?? null,
    max_tool_calls: body?.max_tool_calls ?? null,
    model,
    output,
    parallel_tool_calls: body?.parallel_tool_calls ?? true,
    presence_penalty: 0,
    previous_response_id: body?.previous_response_id ?? null,
    prompt_cache_key: body?.prompt_cache_key ?? null,
    reasoning: { effort: body?.reasoning?.effort ?? null, summary: body?.reasoning?.summary ?? null },
    safety_identifier: body?.safety_identifier ?? null,
    service_tier: body?.service_tier ?? 'default',
    store: body?.store ?? true,
    temperature: body?.temperature ?? 1,
    // A json_schema format is repeated with every field, as OpenAI does.
    text: { format: body?.text?.format?.type === 'json_schema' ? { description: null, strict: false, ...body.text.format } : (body?.text?.format ?? { type: 'text' }), verbosity: body?.text?.verbosity ?? 'medium' },
    tool_choice: body?.tool_choice ?? 'auto',
    // OpenAI repeats a function tool with every field of its tool object (strict is true unless the request said false).
    tools: Array.isArray(body?.tools) ? body.tools.map((t: any) => (t?.type === 'function' ? { description: null, parameters: null, ...t, strict: t.strict ?? true } : t)) : [],
    top_logprobs: body?.top_logprobs ?? 0,
    top_p: body?.top_p ?? 1,
    truncation: body?.truncation ?? 'disabled',
    usage,
    user: body?.user ?? null,
    metadata: body?.metadata ?? {},
  };
}

function finalStatus(reply: ResponseReply): { status: string; extra: { error?: unknown; incomplete_details?: unknown; completed_at?: number | null } } {
  const status = reply.status ?? 'completed';
  if (status === 'failed') return { status, extra: { error: reply.error ?? { code: 'server_error', message: 'The model failed to generate a response.' } } };
  if (status === 'incomplete') return { status, extra: { incomplete_details: reply.incomplete_details ?? { reason: 'max_output_tokens' } } };
  return { status, extra: { completed_at: Math.floor(Date.now() / 1000) } };
}

function includeList(body: any): string[] {
  return Array.isArray(body?.include) ? body.include.filter((s: unknown): s is string => typeof s === 'string') : [];
}

/** The `response` object (non-streamed answer) for this reply. */
export function responseJson(reply: ResponseReply, body: any, id = reply.id ?? newId('resp')): Record<string, unknown> {
  reply = withIds(reply);
  const { status, extra } = finalStatus(reply);
  return responseObject(body, id, reply.model ?? body?.model ?? 'gpt-4.1', status, completedItems(reply, includeList(body)), usageOf(reply, body), extra);
}

/** The SSE event objects OpenAI streams for this reply (each with `type` and `sequence_number`). */
export function responseEvents(reply: ResponseReply, body: any, chunkSize = 12, id = reply.id ?? newId('resp')): Array<Record<string, unknown> & { type: string; sequence_number: number }> {
  reply = withIds(reply);
  const model = reply.model ?? body?.model ?? 'gpt-4.1';
  const items = completedItems(reply, includeList(body));
  const events: Array<Record<string, unknown> & { type: string; sequence_number: number }> = [];
  const emit = (type: string, fields: Record<string, unknown>) => events.push({ type, ...fields, sequence_number: events.length });
  emit('response.created', { response: responseObject(body, id, model, 'in_progress', [], null) });
  emit('response.in_progress', { response: responseObject(body, id, model, 'in_progress', [], null) });
  items.forEach((item, outputIndex) => {
    const itemId = item.id as string;
    if (item.type === 'message') {
      const text = ((item.content as Array<{ text: string }>)[0]?.text ?? '') as string;
      emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } });
      emit('response.content_part.added', { content_index: 0, item_id: itemId, output_index: outputIndex, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
      for (const delta of chunks(text, chunkSize)) emit('response.output_text.delta', { content_index: 0, delta, item_id: itemId, logprobs: [], output_index: outputIndex });
      emit('response.output_text.done', { content_index: 0, item_id: itemId, logprobs: [], output_index: outputIndex, text });
      emit('response.content_part.done', { content_index: 0, item_id: itemId, output_index: outputIndex, part: { type: 'output_text', annotations: [], logprobs: [], text } });
    } else if (item.type === 'function_call') {
      const args = item.arguments as string;
      emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of chunks(args, chunkSize)) emit('response.function_call_arguments.delta', { delta, item_id: itemId, output_index: outputIndex });
      emit('response.function_call_arguments.done', { arguments: args, item_id: itemId, name: item.name, output_index: outputIndex });
    } else if (item.type === 'reasoning') {
      const summary = (item.summary as Array<{ text: string }>).map((s) => s.text);
      emit('response.output_item.added', { output_index: outputIndex, item: { ...item, summary: [] } });
      summary.forEach((text, summaryIndex) => {
        emit('response.reasoning_summary_part.added', { item_id: itemId, output_index: outputIndex, part: { type: 'summary_text', text: '' }, summary_index: summaryIndex });
        for (const delta of chunks(text, chunkSize)) emit('response.reasoning_summary_text.delta', { delta, item_id: itemId, output_index: outputIndex, summary_index: summaryIndex });
        emit('response.reasoning_summary_text.done', { item_id: itemId, output_index: outputIndex, summary_index: summaryIndex, text });
        emit('response.reasoning_summary_part.done', { item_id: itemId, output_index: outputIndex, part: { type: 'summary_text', text }, summary_index: summaryIndex });
      });
    } else {
      emit('response.output_item.added', { output_index: outputIndex, item });
    }
    emit('response.output_item.done', { output_index: outputIndex, item });
  });
  const { status, extra } = finalStatus(reply);
  const type = status === 'failed' ? 'response.failed' : status === 'incomplete' ? 'response.incomplete' : 'response.completed';
  emit(type, { response: responseObject(body, id, model, status, items, usageOf(reply, body), extra) });
  return events;
}

/** Frames events as OpenAI does: `event: <type>\ndata: <json>\n\n`. */
export function sseFrames(events: Array<{ type: string }>): string {
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
}

/** The SSE body OpenAI streams for this reply. */
export function responseSse(reply: ResponseReply, body: any, chunkSize = 12, id?: string): string {
  return sseFrames(responseEvents(reply, body, chunkSize, id));
}

// ---------------------------------------------------------------------------------------------------------------------
// the server

const DEFAULT_MODELS = ['gpt-5-codex', 'gpt-5', 'gpt-4.1', 'gpt-4o'];

/** Starts the scripted server on 127.0.0.1 and an ephemeral port. */
export async function startScriptedResponses(script: ResponsesScript, options: ScriptedResponsesOptions = {}): Promise<ScriptedResponses> {
  const requests: ResponsesRecordedRequest[] = [];
  const responseRequests: ResponsesRecordedRequest[] = [];
  const stored = new Map<string, { response: Record<string, unknown>; input: unknown[] }>();
  let counter = 0;
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    counter += 1;
    const requestId = `req_scripted${String(counter).padStart(6, '0')}`;
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId, ...headers });
      res.end(JSON.stringify(body));
    };
    const notFound = (message: string) => send(404, errorResponse(404, message, 'unknown_url').body);
    try {
      const parts: Buffer[] = [];
      for await (const c of req) parts.push(c as Buffer);
      const raw = Buffer.concat(parts).toString('utf8');
      let body: any = null;
      let badJson = false;
      if (raw) {
        try {
          body = JSON.parse(raw);
        } catch {
          badJson = true;
        }
      }
      const path = req.url ?? '/';
      const record: ResponsesRecordedRequest = { method: req.method ?? '', path, headers: req.headers, body, raw };
      requests.push(record);
      const pathname = (path.split('?')[0] ?? path).replace(/\/+$/, '');
      const method = req.method ?? 'GET';

      if (method === 'GET' && pathname.endsWith('/models')) {
        const models = options.models ?? DEFAULT_MODELS;
        send(200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' })) });
        return;
      }
      const one = /\/responses\/([^/]+)(\/input_items)?$/.exec(pathname);
      if (one && (method === 'GET' || method === 'DELETE') && one[1] !== 'compact') {
        const id = decodeURIComponent(one[1] ?? '');
        const entry = stored.get(id);
        if (!entry) {
          send(404, { error: { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: null } });
          return;
        }
        if (method === 'DELETE' && !one[2]) {
          stored.delete(id);
          send(200, { id, object: 'response.deleted', deleted: true });
          return;
        }
        if (one[2]) {
          const data = entry.input.map((item: any, i) => ({ id: item?.id ?? `item_${i}`, ...item })).reverse();
          send(200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false });
          return;
        }
        send(200, entry.response);
        return;
      }
      if (!(method === 'POST' && pathname.endsWith('/responses'))) {
        notFound(`Invalid URL (${method} ${pathname})`);
        return;
      }
      if (badJson) {
        send(400, errorResponse(400, 'We could not parse the JSON body of your request. (HINT: This likely means you aren\'t using your HTTP library correctly.)').body);
        return;
      }
      const index = responseRequests.length;
      responseRequests.push(record);
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
      const reply = await script(body, index, req.headers);
      if (isStatusReply(reply)) {
        send(reply.status, reply.body, reply.headers);
        return;
      }
      if (isSseReply(reply)) {
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': requestId, ...(reply.headers ?? {}) });
        res.end(reply.sse);
        return;
      }
      const filled = withIds(reply);
      const id = filled.id as string;
      const json = responseJson(filled, body, id);
      if (body?.store !== false) stored.set(id, { response: json, input: inputItems(body) });
      if (body?.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': requestId, 'openai-processing-ms': '1' });
        res.end(responseSse(filled, body, options.chunkSize ?? 12, id));
        return;
      }
      send(200, json, { 'openai-processing-ms': '1' });
    } catch (err) {
      send(500, errorResponse(500, `scripted-responses: ${(err as Error)?.message ?? String(err)}`).body);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/v1`,
    origin,
    requests,
    responseRequests,
    stored,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
