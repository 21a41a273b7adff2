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
// - Which nodes run each configured server, and at which address: a node without a server that /mcp/<server> names
//   passes the request on to one that has it (a stdio server may run on one node only). Entries are signed with the
//   deployment's secret, so only its nodes can name where agents' requests go.
// Without Redis (one node) nothing leaves the node.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { bestEffortRedis } from '../storage/redis-client.js';
import type { JSONRPCMessage, JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';

type RequestId = string | number;

/** How often a node says which servers it runs; an entry older than STALE_MS is a node gone. */
const ANNOUNCE_MS = 5_000;
const STALE_MS = 15_000;

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
  /** The address other nodes reach this one at, and the servers it runs (announced every ANNOUNCE_MS). */
  private self: { url: string; servers: readonly string[] } | undefined;
  private announcer: NodeJS.Timeout | undefined;

  constructor(
    redis?: { url: string; prefix: string },
    private readonly log?: { warn: (obj: object, msg: string) => void },
    /** Signs what this node announces (the deployment's secret): another node trusts only what a node of it wrote. */
    private readonly sign: (text: string) => string = (text) => text,
  ) {
    this.prefix = `${redis?.prefix ?? ''}mcp:`;
    if (!redis) return;
    this.pub = bestEffortRedis(redis.url);
    // Subscriptions are renewed by ioredis on reconnect, so it may queue its SUBSCRIBE while offline.
    this.sub = bestEffortRedis(redis.url, { enableOfflineQueue: true });
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

  /** This node runs these servers and is reached at `url`: told to the other nodes now and every ANNOUNCE_MS. */
  announce(url: string, servers: readonly string[]): void {
    if (!this.pub || servers.length === 0 || this.self?.url === url) return;
    this.self = { url, servers };
    const write = () => {
      const self = this.self!;
      const value = `${Date.now()}|${self.url}`;
      for (const server of self.servers) {
        this.pub!.hset(this.servers(server), this.node, `${value}|${this.sign(`${server}|${this.node}|${value}`)}`).catch(() => undefined);
      }
    };
    // Commands are not queued while Redis connects: the first write waits for it.
    if (this.pub.status === 'ready') write();
    else this.pub.once('ready', write);
    clearInterval(this.announcer);
    this.announcer = setInterval(write, ANNOUNCE_MS);
    this.announcer.unref();
  }

  /** The address of a live node that runs the server, when one does (else undefined). */
  async nodeFor(server: string): Promise<string | undefined> {
    if (!this.pub) return undefined;
    let entries: Record<string, string>;
    try {
      entries = await this.pub.hgetall(this.servers(server));
    } catch {
      return undefined;
    }
    const now = Date.now();
    for (const [node, entry] of Object.entries(entries)) {
      const [at, url, signature] = entry.split('|');
      if (node === this.node || !at || !url || !signature) continue;
      if (signature !== this.sign(`${server}|${node}|${at}|${url}`) || !(now - Number(at) < STALE_MS)) continue;
      return url;
    }
    return undefined;
  }

  async close(): Promise<void> {
    clearInterval(this.announcer);
    if (this.self && this.pub) await Promise.all(this.self.servers.map((s) => this.pub!.hdel(this.servers(s), this.node).catch(() => undefined)));
    await Promise.all([this.sub, this.pub].map((r) => r?.quit().catch(() => r.disconnect())));
  }

  private answers(node: string): string {
    return `${this.prefix}answers:${node}`;
  }

  private servers(server: string): string {
    return `${this.prefix}servers:${server}`;
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
