import { type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local server speaking Anthropic's Messages wire format, answering from a script.
 *
 * - `POST /v1/messages` (any query string, e.g. `?beta=true`) is answered by `script(body, index, headers)`:
 *   a message is sent as JSON, or, when the request had `stream: true`, as the SSE event stream
 *   Anthropic sends for it (message_start, ping, content_block_start / deltas / content_block_stop,
 *   message_delta with usage, message_stop).
 * - `POST /v1/messages/count_tokens` answers `{ input_tokens }` counted as bytes / 4 of system + messages + tools.
 * - Anything else is a 404 in Anthropic's error shape.
 *
 * Every request (all paths) is recorded in `requests`.
 */

/** One content block of a message (text, thinking, redacted_thinking, tool_use, server_tool_use, web_search_tool_result, ...). */
export type ContentBlock = { type: string; [key: string]: unknown };

export interface AnthropicUsage {
  input_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } | null;
  output_tokens?: number;
  server_tool_use?: { web_search_requests?: number; web_fetch_requests?: number } | null;
  service_tier?: string | null;
  [key: string]: unknown;
}

/** A (possibly partial) Messages API response; missing fields are filled in as Anthropic would. */
export interface MessageReply {
  id?: string;
  type?: 'message';
  role?: 'assistant';
  model?: string;
  content: ContentBlock[];
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: AnthropicUsage;
  [key: string]: unknown;
}

/** Any status with a JSON body (an error, usually: see `errorReply`). */
export interface StatusReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A raw SSE body, sent as is with `content-type: text/event-stream`. */
export interface SseReply {
  sse: string;
  status?: number;
  headers?: Record<string, string>;
}

export type Reply = MessageReply | StatusReply | SseReply;

export type Script = (body: any, index: number, headers: IncomingHttpHeaders) => Reply | Promise<Reply>;

export interface RecordedRequest {
  method: string;
  /** Path with its query string, e.g. `/v1/messages?beta=true`. */
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** The body's raw text. */
  raw: string;
}

export interface ScriptedAnthropicOptions {
  /** Characters per text / thinking delta and per input_json_delta fragment (default 12). */
  chunkSize?: number;
  /** Wait this long before answering each /v1/messages request. */
  delayMs?: number;
}

export interface ScriptedAnthropic {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:PORT/v1` (Anthropic SDKs and Claude Code want it without `/v1`: see `origin`). */
  url: string;
  /** `http://127.0.0.1:PORT`, the value for ANTHROPIC_BASE_URL. */
  origin: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Only the `POST /v1/messages` requests, in order (the `index` the script was given). */
  messageRequests: RecordedRequest[];
  close(): Promise<void>;
}

/** Deterministic token count: UTF-8 bytes of JSON(system, messages, tools) / 4, at least 1. */
export function countTokens(body: any): number {
  const text = JSON.stringify([body?.system ?? null, body?.messages ?? null, body?.tools ?? null]);
  return Math.max(1, Math.ceil(Buffer.byteLength(text, 'utf8') / 4));
}

function countOutputTokens(content: ContentBlock[]): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(JSON.stringify(content), 'utf8') / 4));
}

const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** An id shaped like Anthropic's (`msg_01` + 22 base62 characters, `toolu_01...`, `req_011...`). */
export function anthropicId(prefix: string, length = 22): string {
  let tail = '';
  for (let i = 0; i < length; i++) tail += ID_ALPHABET[Math.floor(Math.random() * ID_ALPHABET.length)];
  return `${prefix}${tail}`;
}

/** A final text answer. */
export function textReply(text: string, usage?: AnthropicUsage): MessageReply {
  return { content: [{ type: 'text', text }], stop_reason: 'end_turn', ...(usage ? { usage } : {}) };
}

/** A single client tool call (stop_reason tool_use). */
export function toolUseReply(name: string, input: Record<string, unknown>, id?: string, usage?: AnthropicUsage): MessageReply {
  return {
    content: [{ type: 'tool_use', id: id ?? anthropicId('toolu_01'), name, input }],
    stop_reason: 'tool_use',
    ...(usage ? { usage } : {}),
  };
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** An error in Anthropic's shape: `{type:"error", error:{type, message}, request_id}`. */
export function errorReply(status: number, message: string, options: { type?: string; headers?: Record<string, string> } = {}): StatusReply {
  return {
    status,
    body: {
      type: 'error',
      error: { type: options.type ?? ERROR_TYPES[status] ?? 'api_error', message },
      request_id: anthropicId('req_011', 21),
    },
    ...(options.headers ? { headers: options.headers } : {}),
  };
}

function isStatusReply(r: Reply): r is StatusReply {
  return typeof (r as StatusReply).status === 'number' && 'body' in r;
}
function isSseReply(r: Reply): r is SseReply {
  return typeof (r as SseReply).sse === 'string';
}

/** The message as Anthropic returns it: all top-level fields present, in Anthropic's order. */
export interface CompleteMessage extends MessageReply {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  stop_reason: string | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

export function completeMessage(reply: MessageReply, requestBody: any): CompleteMessage {
  const content = reply.content;
  const inputTokens = countTokens(requestBody);
  const usage: AnthropicUsage = {
    input_tokens: inputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    output_tokens: countOutputTokens(content),
    service_tier: 'standard',
    inference_geo: 'not_available',
    ...(reply.usage ?? {}),
  };
  const stop = reply.stop_reason !== undefined ? reply.stop_reason : content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const { id, type, role, model, content: _c, stop_reason: _s, stop_sequence, usage: _u, ...rest } = reply;
  // Field order as recent Anthropic responses have it (model first).
  return {
    model: model ?? (typeof requestBody?.model === 'string' ? requestBody.model : 'claude-sonnet-4-5'),
    id: id ?? anthropicId('msg_01'),
    type: type ?? 'message',
    role: role ?? 'assistant',
    content,
    stop_reason: stop,
    stop_sequence: stop_sequence ?? null,
    usage,
    ...rest,
  };
}

function chunks(text: string, size: number): string[] {
  const cps = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < cps.length; i += size) out.push(cps.slice(i, i + size).join(''));
  return out.length ? out : [''];
}

function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/** The SSE stream Anthropic sends for this (complete) message. */
export function messageToSse(message: MessageReply, requestBody: any, chunkSize = 12): string {
  const m = completeMessage(message, requestBody);
  const usage = m.usage;
  let out = '';
  out += event('message_start', {
    type: 'message_start',
    message: {
      model: m.model,
      id: m.id,
      type: 'message',
      role: 'assistant',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
        ...(usage.cache_creation !== undefined ? { cache_creation: usage.cache_creation } : {}),
        output_tokens: Math.min(1, usage.output_tokens ?? 1),
        ...(usage.service_tier !== undefined ? { service_tier: usage.service_tier } : {}),
        ...(usage.inference_geo !== undefined ? { inference_geo: usage.inference_geo } : {}),
      },
    },
  });
  let pinged = false;
  const ping = () => {
    if (!pinged) {
      pinged = true;
      out += event('ping', '{"type": "ping"}'); // Anthropic's own spacing
    }
  };
  m.content.forEach((block, index) => {
    const delta = (d: Record<string, unknown>) => {
      out += event('content_block_delta', { type: 'content_block_delta', index, delta: d });
    };
    switch (block.type) {
      case 'text': {
        const { text, citations, ...rest } = block as { type: 'text'; text: string; citations?: unknown[] | null };
        const start = Array.isArray(citations) ? { ...rest, type: 'text', text: '', citations: [] } : { ...rest, type: 'text', text: '' };
        out += event('content_block_start', { type: 'content_block_start', index, content_block: start });
        ping();
        for (const c of Array.isArray(citations) ? citations : []) delta({ type: 'citations_delta', citation: c });
        for (const piece of chunks(String(text ?? ''), chunkSize)) delta({ type: 'text_delta', text: piece });
        break;
      }
      case 'thinking': {
        const b = block as { type: 'thinking'; thinking: string; signature?: string };
        out += event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        ping();
        for (const piece of chunks(String(b.thinking ?? ''), chunkSize)) delta({ type: 'thinking_delta', thinking: piece });
        delta({ type: 'signature_delta', signature: b.signature ?? '' });
        break;
      }
      case 'tool_use':
      case 'server_tool_use':
      case 'mcp_tool_use': {
        const { input, ...rest } = block as { type: string; input?: unknown };
        out += event('content_block_start', { type: 'content_block_start', index, content_block: { ...rest, input: {} } });
        ping();
        delta({ type: 'input_json_delta', partial_json: '' });
        const json = JSON.stringify(input ?? {});
        if (json !== '{}') for (const piece of chunks(json, chunkSize)) delta({ type: 'input_json_delta', partial_json: piece });
        break;
      }
      default: {
        // redacted_thinking, web_search_tool_result, ...: the whole block arrives in content_block_start.
        out += event('content_block_start', { type: 'content_block_start', index, content_block: block });
        ping();
      }
    }
    out += event('content_block_stop', { type: 'content_block_stop', index });
  });
  ping();
  out += event('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: m.stop_reason, stop_sequence: m.stop_sequence },
    usage: {
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
      output_tokens: usage.output_tokens,
      ...(usage.server_tool_use != null ? { server_tool_use: usage.server_tool_use } : {}),
    },
  });
  out += event('message_stop', { type: 'message_stop' });
  return out;
}

function pathnameOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** Starts the scripted server on 127.0.0.1 and an ephemeral port. */
export async function startScriptedAnthropic(script: Script, options: ScriptedAnthropicOptions = {}): Promise<ScriptedAnthropic> {
  const requests: RecordedRequest[] = [];
  const messageRequests: RecordedRequest[] = [];
  let requestCounter = 0;
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    requestCounter += 1;
    const requestId = `req_scripted_${String(requestCounter).padStart(6, '0')}`;
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...headers });
      res.end(JSON.stringify(body));
    };
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
      const record: RecordedRequest = { method: req.method ?? '', path, headers: req.headers, body, raw };
      requests.push(record);
      const pathname = pathnameOf(path);
      if (badJson) {
        send(400, errorReply(400, 'There was an error parsing the body of your request.').body);
        return;
      }
      if (req.method === 'POST' && pathname === '/v1/messages/count_tokens') {
        send(200, { input_tokens: countTokens(body) });
        return;
      }
      if (!(req.method === 'POST' && pathname === '/v1/messages')) {
        send(404, errorReply(404, `Not found: ${req.method} ${pathname}`).body);
        return;
      }
      const index = messageRequests.length;
      messageRequests.push(record);
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
      const reply = await script(body, index, req.headers);
      if (isSseReply(reply)) {
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': requestId, ...(reply.headers ?? {}) });
        res.end(reply.sse);
        return;
      }
      if (isStatusReply(reply)) {
        send(reply.status, reply.body, reply.headers);
        return;
      }
      if (body?.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': requestId });
        res.end(messageToSse(reply, body, options.chunkSize ?? 12));
        return;
      }
      send(200, completeMessage(reply, body));
    } catch (err) {
      send(500, errorReply(500, `scripted-anthropic: ${(err as Error)?.message ?? String(err)}`).body);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/v1`,
    origin,
    requests,
    messageRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
