// What one node sends another about an MCP session, through Redis pub/sub (when counters are Redis), since a client sent
// round-robin reaches any node with any message:
// - A request agentgw sends a client (sampling/createMessage, elicitation/create relayed from an upstream) goes on the
//   stream of the call it is for, from the node running that call; its JSON-RPC id names that node
//   (`agentgw-<node>-<n>`), so the client's answer, POSTed to whichever node, is sent on to that node's channel and
//   handed to the session there, which gives it to the upstream.
// - A notification for the session's standalone stream (notifications/resources/updated of a subscription held on
//   one node) goes to every node when this one has no such stream open; the node that has one sends it.
// - A client's notifications/cancelled for a request this node is not running goes to every node; the node running it
//   cancels it (and so the upstream call).
// Without Redis (one node) nothing leaves the node.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { JSONRPCMessage, JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';

type RequestId = string | number;

/** A node's part of the id of a request agentgw sends a client: `agentgw-<node>-<the SDK's own id>`. */
const TAGGED = /^agentgw-([0-9a-f]{12})-(\d{1,15})$/;

export interface SessionBusHandlers {
  /** A client's answer, POSTed elsewhere, to a request this node sent in the session. */
  answer(sessionId: string, message: JSONRPCMessage): void;
  /** A notification for the session's standalone stream, from a node that has none open. */
  notify(sessionId: string, notification: JSONRPCNotification): void;
  /** A client's cancellation, POSTed elsewhere, of a request of the session. */
  cancel(sessionId: string, notification: JSONRPCNotification): void;
}

export class SessionBus {
  /** This node's name in the ids of the requests it sends clients. */
  readonly node = randomBytes(6).toString('hex');
  private readonly pub: Redis | undefined;
  private readonly sub: Redis | undefined;
  private readonly prefix: string;
  private handlers: SessionBusHandlers | undefined;

  constructor(redis?: { url: string; prefix: string }, private readonly log?: { warn: (obj: object, msg: string) => void }) {
    this.prefix = `${redis?.prefix ?? ''}mcp:`;
    if (!redis) return;
    const options = { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: (n: number) => Math.min(100 * n, 2_000) };
    this.pub = new Redis(redis.url, options);
    // Subscriptions are renewed by ioredis on reconnect, so it may queue its SUBSCRIBE while offline.
    this.sub = new Redis(redis.url, { ...options, enableOfflineQueue: true });
    this.pub.on('error', () => undefined);
    this.sub.on('error', () => undefined);
    this.sub.subscribe(this.answers(this.node), this.notifications()).catch(() => undefined);
    this.sub.on('message', (channel: string, text: string) => this.received(channel, text));
  }

  /** Whether other nodes can be reached (Redis is configured). */
  get shared(): boolean {
    return this.pub !== undefined;
  }

  /** Once: where what other nodes send goes. */
  listen(handlers: SessionBusHandlers): void {
    this.handlers = handlers;
  }

  /** The id a request this node sends a client goes out with. */
  tag(id: RequestId): string {
    return `agentgw-${this.node}-${id}`;
  }

  /** The node that sent the request an answer's id names, and the SDK's own id of it (undefined: not one of agentgw's). */
  static untag(id: unknown): { node: string; id: number } | undefined {
    const m = typeof id === 'string' ? TAGGED.exec(id) : null;
    return m ? { node: m[1]!, id: Number(m[2]) } : undefined;
  }

  /** Sends a client's answer to the node holding the request; false when it cannot (no Redis). */
  sendAnswer(node: string, sessionId: string, message: JSONRPCMessage): boolean {
    if (!this.pub) return false;
    this.pub.publish(this.answers(node), JSON.stringify({ s: sessionId, m: message })).catch((err: unknown) => {
      this.log?.warn({ err }, "sending an MCP client's answer to the node that asked failed; that request times out");
    });
    return true;
  }

  /** Sends a notification to the node holding the session's standalone stream; false when it cannot (no Redis). */
  sendNotification(sessionId: string, notification: JSONRPCNotification): boolean {
    return this.broadcast('stream', sessionId, notification);
  }

  /** Sends a client's cancellation to the node running the request; false when it cannot (no Redis). */
  sendCancel(sessionId: string, notification: JSONRPCNotification): boolean {
    return this.broadcast('cancel', sessionId, notification);
  }

  private broadcast(kind: 'stream' | 'cancel', sessionId: string, notification: JSONRPCNotification): boolean {
    if (!this.pub) return false;
    this.pub.publish(this.notifications(), JSON.stringify({ s: sessionId, m: notification, from: this.node, k: kind })).catch(() => undefined);
    return true;
  }

  async close(): Promise<void> {
    await Promise.all([this.sub, this.pub].map((r) => r?.quit().catch(() => r.disconnect())));
  }

  private answers(node: string): string {
    return `${this.prefix}answers:${node}`;
  }

  private notifications(): string {
    return `${this.prefix}notifications`;
  }

  private received(channel: string, text: string): void {
    let parsed: { s?: unknown; m?: unknown; from?: unknown; k?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      return;
    }
    if (typeof parsed.s !== 'string' || typeof parsed.m !== 'object' || parsed.m === null || !this.handlers) return;
    if (channel === this.answers(this.node)) this.handlers.answer(parsed.s, parsed.m as JSONRPCMessage);
    else if (channel === this.notifications() && parsed.from !== this.node) {
      if (parsed.k === 'cancel') this.handlers.cancel(parsed.s, parsed.m as JSONRPCNotification);
      else this.handlers.notify(parsed.s, parsed.m as JSONRPCNotification);
    }
  }
}
