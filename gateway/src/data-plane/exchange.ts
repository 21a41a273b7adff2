// What a /v1 route handler writes to, and the two helpers every handler uses: parse a JSON body, send a JSON answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorLog } from '../http/error-handler.js';
import type { RequestContext } from './request-context.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** One /v1 request and its response: what the route handlers write to. */
export interface Exchange {
  ctx: RequestContext;
  req: IncomingMessage;
  res: ServerResponse;
  log: ErrorLog | undefined;
}

/** Writes a JSON answer with the request and trace ids. */
export function sendJson(ex: { ctx: { requestId: string; traceId: string }; res: ServerResponse }, status: number, text: string, extra?: Record<string, string>): void {
  const { res, ctx } = ex;
  if (res.headersSent || res.destroyed) return;
  const headers: string[] = ['content-type', JSON_TYPE, 'content-length', String(Buffer.byteLength(text)), 'x-request-id', ctx.requestId, 'x-agent-trace-id', ctx.traceId];
  if (extra) for (const k in extra) headers.push(k, extra[k]!);
  res.writeHead(status, headers);
  res.end(text);
}


/** The header that tells the client its output limit was lowered to fit a cap or a budget (rules.clamp_output). */
export function clampedHeader(a: { clampedMaxTokens: number | null }): Record<string, string> | undefined {
  return a.clampedMaxTokens === null ? undefined : { 'x-agentgw-clamped-max-tokens': String(a.clampedMaxTokens) };
}
