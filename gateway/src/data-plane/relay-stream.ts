// A streamed answer, whatever the dialect: frames relayed to the client as they come, then the step billed and recorded.
import { checkedUsage } from '../accounting/usage-counts.js';
import { type AgentgwError, isAgentgwError } from '../contract/index.js';
import { toAgentgwError } from '../http/error-handler.js';
import type { Usage } from '../providers/spec.js';
import { type Admission, type PricedTarget, actualCost } from './admission.js';
import type { ClientAbort } from './client-abort.js';
import type { DataPlane } from './data-plane.js';
import type { Exchange } from './exchange.js';
import { SseWriter } from './sse-writer.js';
import type { ToolCallRecord } from './tool-calls/gate.js';

export interface FrameSource extends AsyncIterable<string> {
  /** Frames already parsed and waiting (see ChatStream.takeReady). */
  takeReady?(): string | null;
  usage(): Usage;
}

export interface Relayed {
  out: SseWriter;
  /** How the stream failed after it started (an upstream failure, or the client leaving); undefined when it did not. */
  failure: AgentgwError | undefined;
  ttftMs: number | null;
}

/** Sends the status line and headers of a stream: from here on failures are told in the stream, and what it carries is billed. */
export function startEventStream(ex: Exchange, extra?: Record<string, string>): void {
  const headers = ['content-type', 'text/event-stream; charset=utf-8', 'cache-control', 'no-cache', 'x-request-id', ex.ctx.requestId, 'x-agent-trace-id', ex.ctx.traceId];
  if (extra) for (const k in extra) headers.push(k, extra[k]!);
  ex.res.writeHead(200, headers);
}

/** Writes every frame of `source` to the client (the status line is already sent); failures are returned, not thrown. */
export async function relayFrames(ex: Exchange, abort: ClientAbort, source: FrameSource): Promise<Relayed> {
  const out = new SseWriter(ex.res, abort);
  let ttft: number | null = null;
  let failure: AgentgwError | undefined;
  try {
    for await (const first of source) {
      if (ttft === null) ttft = performance.now() - ex.ctx.startedAt;
      // Frames parsed from the same upstream read go out in one write.
      const rest = source.takeReady?.();
      const full = out.write(rest ? first + rest : first);
      if (full) await full;
      if (abort.aborted) break;
    }
  } catch (e) {
    if (!abort.aborted) failure = toAgentgwError(e, ex.log);
  }
  // A client that left is recorded as such, billed for what was streamed.
  if (abort.aborted && isAgentgwError(abort.reason)) failure = abort.reason;
  return { out, failure, ttftMs: ttft === null ? null : Math.round(ttft * 1000) / 1000 };
}

/**
 * Records a streamed step, billed for what the upstream reported or for what was streamed, then ends the stream with its
 * closing frames (`last`) once the usage row is journaled (a crash after them loses no billed row), then settles. A
 * stream that failed is recorded with its error's status (502 upstream_bad_response, 499 client_closed, ...), as it
 * would have been answered before the first byte: the 200 on the wire only meant that the stream had started.
 */
export async function recordStreamed(
  dp: DataPlane,
  ex: Exchange,
  a: Admission,
  target: PricedTarget,
  source: FrameSource,
  relayed: Relayed,
  last: string,
  responseId?: string,
  toolCalls?: ToolCallRecord[],
): Promise<void> {
  const usage = checkedUsage(source.usage());
  const cost = actualCost(target, usage);
  const httpStatus = relayed.failure ? relayed.failure.status : 200;
  await dp.record(ex.ctx, { httpStatus, error: relayed.failure, usage, cost, ttftMs: relayed.ttftMs, provider: target.provider.name, model: target.id, ...(responseId ? { responseId } : {}), ...(toolCalls ? { toolCalls } : {}) });
  relayed.out.end(last);
  await dp.settle(a, ex.ctx, cost, usage);
}

/** What re-encodes a target's chat chunks in the client's dialect (Messages, Responses, Gemini). */
export interface ChunkEncoder {
  frames(chunks: string): string;
}

/**
 * A translated stream: the target's chat chunks, each with the frames already waiting behind it, re-encoded by `encoder`
 * (an empty result yields nothing); usage as the target reported it.
 */
export class EncodedStream<E extends ChunkEncoder> implements FrameSource {
  constructor(
    protected readonly chat: FrameSource,
    readonly encoder: E,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for await (const first of this.chat) {
      const rest = this.chat.takeReady?.();
      const out = this.encoder.frames(rest ? first + rest : first);
      if (out) yield out;
    }
  }

  usage(): Usage {
    return this.chat.usage();
  }
}
