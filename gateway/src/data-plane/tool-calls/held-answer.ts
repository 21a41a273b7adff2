// What keeps a client waiting while a call is held for approval (CONTRACT: "Tool rules and approvals"): streams get
// keep-alives (SSE comments; `ping` events on Messages); a non-streamed answer sends its status and headers early, then
// leading whitespace, then its JSON body (still valid JSON: the SDKs parse it).
import type { ServerResponse } from 'node:http';
import { AgentgwError } from '../../contract/index.js';
import { type Exchange, sendJson } from '../exchange.js';
import type { ToolGate } from './gate.js';

const SSE_COMMENT = ': keep-alive\n\n';
const MESSAGES_PING = 'event: ping\ndata: {"type": "ping"}\n\n';

function writer(res: ServerResponse, text: string): () => void {
  return () => {
    if (!res.destroyed && !res.writableEnded) res.write(text);
  };
}

/**
 * A stream's keep-alives while a call waits: SSE comments (chat, responses, Gemini's alt=sse), `ping` events
 * (messages), or a line break between the elements of a streamed JSON array (Gemini without alt=sse).
 */
export function keepStreamAlive(gate: ToolGate | null, res: ServerResponse, kind: 'comment' | 'ping' | 'whitespace'): void {
  if (gate) gate.keepAlive = writer(res, kind === 'ping' ? MESSAGES_PING : kind === 'whitespace' ? '\n' : SSE_COMMENT);
}

/**
 * A non-streamed answer that may wait: once a call is held, its 200 and headers go out with a line break, and one more
 * every keep-alive interval; `send` then ends it with the JSON body (or sends the whole answer when nothing waited).
 */
export class HeldJsonAnswer {
  private started = false;

  constructor(
    private readonly ex: Exchange,
    gate: ToolGate | null,
    private readonly extra?: Record<string, string>,
  ) {
    if (!gate) return;
    gate.onHoldStart = () => this.start();
    gate.keepAlive = writer(ex.res, '\n');
  }

  private start(): void {
    const { res, ctx } = this.ex;
    if (this.started || res.headersSent || res.destroyed) return;
    this.started = true;
    const headers: string[] = ['content-type', 'application/json; charset=utf-8', 'x-request-id', ctx.requestId, 'x-agent-trace-id', ctx.traceId];
    if (this.extra) for (const k in this.extra) headers.push(k, this.extra[k]!);
    res.writeHead(200, headers);
    res.write('\n');
  }

  /** How the answer is recorded: 200, or 499 client_closed when the client left while a call waited (billed all the same). */
  outcome(): { httpStatus: number; error?: AgentgwError } {
    if (!this.started || !this.ex.res.destroyed || this.ex.res.writableFinished) return { httpStatus: 200 };
    const error = new AgentgwError('client_closed', 'The client closed the connection while a tool call waited for approval.');
    return { httpStatus: error.status, error };
  }

  send(text: string, extra?: Record<string, string>): void {
    if (!this.started) return sendJson(this.ex, 200, text, extra ?? this.extra);
    if (!this.ex.res.destroyed && !this.ex.res.writableEnded) this.ex.res.end(text);
  }
}
