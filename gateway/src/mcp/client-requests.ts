// An upstream's requests to the client (sampling/createMessage, elicitation/create), relayed to the client whose call
// they arose from. Over Streamable HTTP a server sends such a request on the SSE answer of the call it concerns; the
// upstream connection is shared by every client of the server, so the request is told apart by the stream it came on:
// each POST of a call runs inside that call's channel (AsyncLocalStorage), and the answer's SSE events are read as they
// pass, before the SDK sees them, so each request id the server sends there is known to belong to that call. The
// client's answer goes back to the upstream with the agent's PII rules applied to it (it is what the upstream reads).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type ClientRequest,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  McpError,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';

/** The /mcp call an upstream request is made for: how to ask its client, and what the client's answer may carry upstream. */
export interface ClientChannel {
  /** Sends a request to the client on the call's stream (the SDK refuses it when the client lacks the capability). */
  ask<T extends z.ZodType>(request: ServerRequest, schema: T, options?: RequestOptions): Promise<z.infer<T>>;
  /** The answer as the agent's policies let it reach the upstream (PII redacted). */
  clean<T extends Record<string, unknown>>(answer: T): T;
  /** Settles when the call is over. */
  done: Promise<void>;
}

const current = new AsyncLocalStorage<ClientChannel>();

/** Runs `fn` (a call's whole handling) with a channel to its client: the upstream requests it causes reach this client. */
export async function withClientChannel<T>(channel: Omit<ClientChannel, 'done'>, fn: () => Promise<T>): Promise<T> {
  let end!: () => void;
  const done = new Promise<void>((r) => (end = r));
  try {
    return await current.run({ ...channel, done }, fn);
  } finally {
    end();
  }
}

/**
 * Runs `fn` outside any call's channel: opening an upstream connection. The SDK opens the server's standalone GET stream
 * as the connection starts, and that stream carries requests for no call in particular: read inside the call that
 * happened to open the connection, all of them would be routed to that call's client, long after it ended.
 */
export function outsideClientChannel<T>(fn: () => T): T {
  return current.exit(fn);
}

/** Most request ids remembered per connection; the oldest are forgotten first (each is taken once, when it arrives). */
const MAX_ROUTES = 1_000;

/**
 * Per upstream connection: which call's channel each server request came for. A server may also send such a request on
 * its standalone GET stream, unrelated to any call (the SDK's `server.request()` does): it then goes to the one call in
 * flight on the connection, and is refused when several are (agentgw cannot tell whose it is).
 */
export class ServerRequestRoutes {
  private readonly routes = new Map<string | number, ClientChannel>();
  private readonly active = new Set<ClientChannel>();

  /**
   * The call whose channel this runs in is in flight on the connection until it ends. A stdio server has no stream per
   * call: what it asks while one call runs goes to that call's client (as for a standalone stream).
   */
  track(): ClientChannel | undefined {
    const channel = current.getStore();
    if (channel && !this.active.has(channel)) {
      this.active.add(channel);
      void channel.done.then(() => this.active.delete(channel));
    }
    return channel;
  }

  /** A fetch that reads the SSE answers of calls made inside a channel, to note the server requests they carry. */
  fetch(inner: FetchLike = fetch): FetchLike {
    return async (url, init) => {
      const channel = this.track();
      const res = await inner(url, init);
      if (!channel || !res.body || !(res.headers.get('content-type') ?? '').includes('text/event-stream')) return res;
      return new Response(res.body.pipeThrough(this.tap(channel)), { status: res.status, statusText: res.statusText, headers: res.headers });
    };
  }

  /**
   * Reads the events as they pass. Each piece of text is searched once (with the last characters before it, where a blank
   * line may start), and an event is joined only when it ends: a large result arriving in many chunks costs its length,
   * not its length times its chunks.
   */
  private tap(channel: ClientChannel): TransformStream<Uint8Array, Uint8Array> {
    const decoder = new TextDecoder();
    /** The event so far, and its last (at most 3) characters. */
    let pieces: string[] = [];
    let carry = '';
    return new TransformStream({
      transform: (chunk, controller) => {
        let text = decoder.decode(chunk, { stream: true });
        let end = eventEnd(carry + text);
        while (end !== -1) {
          // Where the blank line starts in `text` (negative: in the carry, the end of the event so far).
          const at = end.at - carry.length;
          const before = pieces.join('');
          this.note(at >= 0 ? before + text.slice(0, at) : before.slice(0, before.length + at), channel);
          text = text.slice(at + end.length);
          pieces = [];
          carry = '';
          end = eventEnd(text);
        }
        if (text !== '') {
          pieces.push(text);
          carry = (carry + text).slice(-3);
        }
        controller.enqueue(chunk);
      },
    });
  }

  /** One SSE event: a JSON-RPC request (method and id) in its data is routed to the channel. */
  private note(event: string, channel: ClientChannel): void {
    let data = '';
    for (const line of event.split(/\r\n|\r|\n/)) {
      if (line.startsWith('data:')) data += (data ? '\n' : '') + (line[5] === ' ' ? line.slice(6) : line.slice(5));
    }
    if (!data.includes('"method"')) return;
    try {
      const msg = JSON.parse(data) as { method?: unknown; id?: unknown };
      if (typeof msg.method === 'string' && (typeof msg.id === 'string' || typeof msg.id === 'number')) {
        this.routes.set(msg.id, channel);
        if (this.routes.size > MAX_ROUTES) this.routes.delete(this.routes.keys().next().value!);
      }
    } catch {
      // not JSON: the SDK reports it; nothing to route
    }
  }

  /** Relays the upstream's request to the client of the call it came for, and the client's answer back. */
  async relay(request: ClientRequest | ServerRequest, requestId: string | number, signal: AbortSignal, server: string): Promise<Record<string, unknown>> {
    let channel = this.routes.get(requestId);
    this.routes.delete(requestId);
    if (!channel && this.active.size === 1) channel = this.active.values().next().value;
    if (!channel) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        this.active.size === 0
          ? `agentgw relays ${request.method} to the client of a tool call: MCP server ${server} sent it while no call was running.`
          : `agentgw relays ${request.method} to the client of a tool call: MCP server ${server} sent it outside a call's answer while ${this.active.size} calls were running, so whose client to ask is unknown; send it on the call's own stream.`,
      );
    }
    const schema = request.method === 'sampling/createMessage' ? CreateMessageResultSchema : ElicitResultSchema;
    let answer: Record<string, unknown>;
    try {
      answer = (await channel.ask(request as ServerRequest, schema, { signal })) as Record<string, unknown>;
    } catch (e) {
      if (e instanceof McpError) throw e;
      // The SDK refuses a request the client did not declare a capability for: the upstream hears it as the client would say it.
      throw new McpError(ErrorCode.InvalidRequest, (e as Error).message);
    }
    return channel.clean(answer);
  }
}

/** Where the first SSE event of the text ends (its blank line), or -1. */
function eventEnd(text: string): { at: number; length: number } | -1 {
  const m = /\r\n\r\n|\n\n|\r\r/.exec(text);
  return m ? { at: m.index, length: m[0].length } : -1;
}
