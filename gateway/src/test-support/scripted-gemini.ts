import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local server speaking Gemini's wire format (generativelanguage v1beta), answering from a script.
 *
 * - `POST /v1beta/models/{model}:generateContent` is answered by `script(...)` with a GenerateContentResponse as JSON;
 * - `POST .../{model}:streamGenerateContent?alt=sse` with the same response split into events (each part of the first
 *   candidate its own event, the finishReason and usage on the last), or with a raw SSE body (`{sse}`);
 * - `POST .../{model}:countTokens` answers `{totalTokens}` (bytes / 4 of the body);
 * - anything else is a 404 in Google's error shape. `{status, body}` answers any status.
 *
 * Every request is recorded in `requests`.
 */
export interface GeminiReply {
  candidates?: unknown[];
  promptFeedback?: unknown;
  usageMetadata?: Record<string, unknown>;
  modelVersion?: string;
  responseId?: string;
  [key: string]: unknown;
}

export type ScriptedGeminiReply = GeminiReply | { status: number; body: unknown } | { sse: string };

export interface GeminiRequest {
  method: string;
  /** Path with its query string. */
  path: string;
  /** The model of the path, e.g. `gemini-2.5-flash`. */
  model: string;
  /** generateContent, streamGenerateContent or countTokens. */
  call: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export type GeminiScript = (req: GeminiRequest, index: number) => ScriptedGeminiReply | Promise<ScriptedGeminiReply>;

export interface ScriptedGemini {
  /** Base URL with `/v1beta`, the provider's base_url. */
  url: string;
  requests: GeminiRequest[];
  close(): Promise<void>;
}

/** A final text answer. */
export function geminiText(text: string, usage: Record<string, number> = { promptTokenCount: 12, candidatesTokenCount: 4, totalTokenCount: 16 }): GeminiReply {
  return { candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, modelVersion: 'gemini-2.5-flash', responseId: 'resp-text' };
}

/** One or more function calls (Gemini ends such a turn with STOP). */
export function geminiCalls(calls: Array<{ name: string; args: Record<string, unknown>; id?: string }>, usage: Record<string, number> = { promptTokenCount: 30, candidatesTokenCount: 10, totalTokenCount: 40 }): GeminiReply {
  return {
    candidates: [{ content: { role: 'model', parts: calls.map((c) => ({ functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: c.args } })) }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usage,
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp-calls',
  };
}

/** The events Gemini streams for a response: one per part, the last with the finishReason and the usage. */
export function geminiEvents(reply: GeminiReply): string {
  const candidate = (reply.candidates?.[0] ?? {}) as { content?: { role?: string; parts?: unknown[] }; finishReason?: string; index?: number };
  const parts = candidate.content?.parts ?? [];
  const common = { modelVersion: reply.modelVersion ?? 'gemini-2.5-flash', responseId: reply.responseId ?? 'resp-stream' };
  if (!reply.candidates) return `data: ${JSON.stringify({ ...reply, ...common })}\n\n`;
  const events: unknown[] = [];
  parts.forEach((part, i) => {
    const last = i === parts.length - 1;
    events.push({
      candidates: [{ content: { role: 'model', parts: [part] }, ...(last && candidate.finishReason ? { finishReason: candidate.finishReason } : {}), index: 0 }],
      usageMetadata: last ? reply.usageMetadata : { promptTokenCount: reply.usageMetadata?.promptTokenCount ?? 0, totalTokenCount: reply.usageMetadata?.promptTokenCount ?? 0 },
      ...common,
    });
  });
  if (parts.length === 0) events.push({ candidates: [{ content: { role: 'model', parts: [] }, finishReason: candidate.finishReason ?? 'STOP', index: 0 }], usageMetadata: reply.usageMetadata, ...common });
  return events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join('');
}

export async function startScriptedGemini(script: GeminiScript): Promise<ScriptedGemini> {
  const requests: GeminiRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const url = req.url ?? '';
        const path = url.split('?')[0]!;
        const m = /^\/v1beta\/models\/(.+):(generateContent|streamGenerateContent|countTokens)$/.exec(path);
        if (!m || req.method !== 'POST') {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 404, message: `No route ${req.method} ${path}`, status: 'NOT_FOUND' } }));
          return;
        }
        const recorded: GeminiRequest = { method: req.method, path: url, model: decodeURIComponent(m[1]!), call: m[2]!, headers: req.headers, body: raw ? JSON.parse(raw) : null };
        requests.push(recorded);
        if (m[2] === 'countTokens') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ totalTokens: Math.max(1, Math.ceil(Buffer.byteLength(raw) / 4)) }));
          return;
        }
        const reply = await script(recorded, requests.length - 1);
        if ('status' in reply && typeof reply.status === 'number') {
          res.writeHead(reply.status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(reply.body));
          return;
        }
        if (m[2] === 'streamGenerateContent') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end('sse' in reply && typeof reply.sse === 'string' ? reply.sse : geminiEvents(reply as GeminiReply));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1beta`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
