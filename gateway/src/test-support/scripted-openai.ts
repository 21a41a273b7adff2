import { type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local server speaking OpenAI's Chat Completions wire format, answering from a script
 * (`fake-openai.ts` answers every request with the same words; this one can call tools).
 *
 * - `POST .../chat/completions` (any prefix, e.g. `/v1/chat/completions`) is answered by `script(body, index, headers)`:
 *   a `chat.completion` as JSON, or, when the request had `stream: true`, the `chat.completion.chunk` SSE stream OpenAI
 *   sends for it (role chunk, content deltas, tool call deltas, the finish chunk, a usage chunk with `choices: []` when
 *   `stream_options.include_usage` is true, then `data: [DONE]`).
 * - Anything else is a 404 in OpenAI's error shape.
 *
 * Every request is recorded in `requests`; the chat ones also in `chatRequests` (the `index` the script was given).
 */

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; [key: string]: unknown };
  completion_tokens_details?: { reasoning_tokens?: number; [key: string]: unknown };
  [key: string]: unknown;
}

export interface ChatToolCallReply {
  /** Default: a `call_` id. */
  id?: string;
  name: string;
  /** An object is sent as its JSON text. */
  arguments: string | Record<string, unknown>;
}

/** One assistant answer (content and / or tool calls). */
export interface ChatReply {
  content?: string | null;
  tool_calls?: ChatToolCallReply[];
  /** Default: `tool_calls` when there are tool calls, else `stop`. */
  finish_reason?: string;
  /** Default: prompt from the request's bytes / 4, completion from the answer's bytes / 4. */
  usage?: ChatUsage;
  /** Default: the request's model. */
  model?: string;
}

/** Any status with a JSON body (an error, usually: see `chatErrorReply`). */
export interface ChatStatusReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type ChatScriptReply = ChatReply | ChatStatusReply;
export type ChatScript = (body: any, index: number, headers: IncomingHttpHeaders) => ChatScriptReply | Promise<ChatScriptReply>;

export interface ChatRecordedRequest {
  method: string;
  /** Path with its query string. */
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  raw: string;
}

export interface ScriptedOpenAIOptions {
  /** Characters per content delta and per tool-argument fragment (default 12). */
  chunkSize?: number;
  /** A stream waits for this before its last event (`data: [DONE]`): every earlier event has been sent. */
  beforeLastChunk?: (body: any, index: number) => Promise<void>;
}

export interface ScriptedOpenAI {
  /** Base URL including `/v1` (the value for a provider's `base_url`). */
  url: string;
  origin: string;
  requests: ChatRecordedRequest[];
  chatRequests: ChatRecordedRequest[];
  close(): Promise<void>;
}

/** Deterministic prompt count: UTF-8 bytes of JSON(messages, tools) / 4, at least 1. */
export function countChatPromptTokens(body: any): number {
  const text = JSON.stringify([body?.messages ?? null, body?.tools ?? null]);
  return Math.max(1, Math.ceil(Buffer.byteLength(text, 'utf8') / 4));
}

function argumentsText(a: string | Record<string, unknown>): string {
  return typeof a === 'string' ? a : JSON.stringify(a);
}

let callCounter = 0;
function callId(): string {
  callCounter += 1;
  return `call_scripted${String(callCounter).padStart(6, '0')}`;
}

/** A final text answer. */
export function chatTextReply(text: string, usage?: ChatUsage): ChatReply {
  return { content: text, finish_reason: 'stop', ...(usage ? { usage } : {}) };
}

/** A single function call (finish_reason tool_calls). */
export function chatToolCallReply(name: string, args: Record<string, unknown>, id?: string, usage?: ChatUsage): ChatReply {
  return { content: null, tool_calls: [{ id: id ?? callId(), name, arguments: args }], finish_reason: 'tool_calls', ...(usage ? { usage } : {}) };
}

/** An error in OpenAI's shape. */
export function chatErrorReply(status: number, message: string, code: string | null = null, headers?: Record<string, string>): ChatStatusReply {
  const type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { status, body: { error: { message, type, param: null, code } }, ...(headers ? { headers } : {}) };
}

/** The last message is a tool result (the turn after a tool ran). */
export function lastChatTurnIsToolResult(body: any): boolean {
  const last = Array.isArray(body?.messages) ? body.messages.at(-1) : undefined;
  return last?.role === 'tool';
}

/** The tool results at the end of the request (the `role: "tool"` messages after the last assistant turn). */
export function chatToolResults(body: any): Array<{ tool_call_id: string; content: unknown }> {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const out: Array<{ tool_call_id: string; content: unknown }> = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === 'tool'; i--) out.unshift(messages[i]);
  return out;
}

function isStatusReply(r: ChatScriptReply): r is ChatStatusReply {
  return typeof (r as ChatStatusReply).status === 'number' && 'body' in r;
}

function completionTokens(reply: ChatReply): number {
  const text = (reply.content ?? '') + (reply.tool_calls ?? []).map((c) => c.name + argumentsText(c.arguments)).join('');
  return Math.max(1, Math.ceil(Buffer.byteLength(text, 'utf8') / 4));
}

function usageOf(reply: ChatReply, body: any): ChatUsage {
  if (reply.usage) return { total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens, ...reply.usage };
  const prompt = countChatPromptTokens(body);
  const completion = completionTokens(reply);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function chunks(text: string, size: number): string[] {
  const cps = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < cps.length; i += size) out.push(cps.slice(i, i + size).join(''));
  return out;
}

/** The `chat.completion` body for this reply. */
export function chatCompletion(reply: ChatReply, body: any, id = 'chatcmpl-scripted'): Record<string, unknown> {
  const toolCalls = (reply.tool_calls ?? []).map((c) => ({ id: c.id ?? callId(), type: 'function', function: { name: c.name, arguments: argumentsText(c.arguments) } }));
  const finish = reply.finish_reason ?? (toolCalls.length ? 'tool_calls' : 'stop');
  return {
    id,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: reply.model ?? body?.model ?? 'gpt-4o',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.content ?? null, refusal: null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: finish,
      },
    ],
    usage: usageOf(reply, body),
    system_fingerprint: 'fp_scripted',
  };
}

/** The SSE body OpenAI streams for this reply. */
export function chatCompletionSse(reply: ChatReply, body: any, chunkSize = 12, id = 'chatcmpl-scripted'): string {
  const base = { id, object: 'chat.completion.chunk', created: 1_700_000_000, model: reply.model ?? body?.model ?? 'gpt-4o', system_fingerprint: 'fp_scripted' };
  const frame = (choices: unknown[], extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`;
  const delta = (d: Record<string, unknown>, finish: string | null = null) => frame([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  let out = delta({ role: 'assistant', content: reply.tool_calls?.length && !reply.content ? null : '', refusal: null });
  for (const piece of chunks(reply.content ?? '', chunkSize)) out += delta({ content: piece });
  (reply.tool_calls ?? []).forEach((c, index) => {
    out += delta({ tool_calls: [{ index, id: c.id ?? callId(), type: 'function', function: { name: c.name, arguments: '' } }] });
    for (const piece of chunks(argumentsText(c.arguments), chunkSize)) out += delta({ tool_calls: [{ index, function: { arguments: piece } }] });
  });
  out += delta({}, reply.finish_reason ?? (reply.tool_calls?.length ? 'tool_calls' : 'stop'));
  if (body?.stream_options?.include_usage === true) out += frame([], { usage: usageOf(reply, body) });
  return `${out}data: [DONE]\n\n`;
}

/**
 * A script driving tool round trips: while fewer than `tools.length` tool results came back, the next tool is called;
 * then `finalText`. Requests without tools get `finalText` at once.
 */
export function chatToolSequenceScript(tools: Array<{ name: string; args: Record<string, unknown> }>, finalText: string | ((body: any) => string), usage?: ChatUsage): ChatScript {
  return (body: any): ChatReply => {
    const text = typeof finalText === 'function' ? finalText(body) : finalText;
    if (!Array.isArray(body?.tools) || body.tools.length === 0) return chatTextReply(text, usage);
    const done = (Array.isArray(body.messages) ? body.messages : []).filter((m: any) => m?.role === 'tool').length;
    const next = tools[done];
    return next ? chatToolCallReply(next.name, next.args, undefined, usage) : chatTextReply(text, usage);
  };
}

/** Starts the scripted server on 127.0.0.1 and an ephemeral port. */
export async function startScriptedOpenAI(script: ChatScript, options: ScriptedOpenAIOptions = {}): Promise<ScriptedOpenAI> {
  const requests: ChatRecordedRequest[] = [];
  const chatRequests: ChatRecordedRequest[] = [];
  let counter = 0;
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    counter += 1;
    const id = `chatcmpl-scripted${String(counter).padStart(6, '0')}`;
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${id}`, ...headers });
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
      const record: ChatRecordedRequest = { method: req.method ?? '', path, headers: req.headers, body, raw };
      requests.push(record);
      const pathname = path.split('?')[0] ?? path;
      if (badJson) {
        send(400, chatErrorReply(400, 'We could not parse the JSON body of your request.').body);
        return;
      }
      if (!(req.method === 'POST' && pathname.endsWith('/chat/completions'))) {
        send(404, chatErrorReply(404, `Unknown request URL: ${req.method} ${pathname}.`, 'unknown_url').body);
        return;
      }
      const index = chatRequests.length;
      chatRequests.push(record);
      const reply = await script(body, index, req.headers);
      if (isStatusReply(reply)) {
        send(reply.status, reply.body, reply.headers);
        return;
      }
      if (body?.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': `req_${id}` });
        const sse = chatCompletionSse(reply, body, options.chunkSize ?? 12, id);
        if (options.beforeLastChunk) {
          const last = sse.lastIndexOf('data: ');
          res.write(sse.slice(0, last));
          await options.beforeLastChunk(body, index);
          if (!res.destroyed) res.end(sse.slice(last));
          return;
        }
        res.end(sse);
        return;
      }
      send(200, chatCompletion(reply, body, id));
    } catch (err) {
      send(500, chatErrorReply(500, `scripted-openai: ${(err as Error)?.message ?? String(err)}`).body);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/v1`,
    origin,
    requests,
    chatRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
