// The MCP sessions this node serves (mcp-session.ts). A session id another node minted (or this node before a restart)
// is re-created on sight from the id, so a load balancer needs no affinity, while the session is live
// (session-activity.ts). Sessions cost a bounded amount: at most limits.mcp_sessions on a node and
// limits.mcp_sessions_per_agent for one agent, the longest unused going first when a new one comes (ended on every node: a
// request with its id is a 404, as the MCP spec answers an unknown session, and the client initialises a new one); only
// the WARM most recently used keep their SDK objects when idle. Sessions with a notification stream open are told when
// what their agent may call changes.
import { LATEST_PROTOCOL_VERSION, type LoggingLevel, type LoggingMessageNotification, type ServerNotification, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Snapshot } from '../storage/snapshot.js';
import type { Federation } from './federation.js';
import { LOG_LEVELS, McpSession, type SessionOwner } from './mcp-session.js';
import { federatedUri, namingOf } from './names.js';
import type { SessionActivity } from './session-activity.js';
import { SessionBus } from './session-bus.js';
import type { SessionIds } from './session-ids.js';

export { McpSession } from './mcp-session.js';

/** A session nobody used for this long, with no notification stream open, is dropped (it can be re-created from its id). */
const IDLE_MS = 10 * 60_000;
/** Idle sessions that keep their SDK objects (about 7 KB each), the most recently used; the others are rebuilt when used. */
const WARM = 256;
/** How often sessions with a stream are checked for a changed tool list (policy or upstream). */
const WATCH_MS = 200;

/** limits.mcp_sessions and limits.mcp_sessions_per_agent. */
export interface SessionLimits {
  total: number;
  perAgent: number;
}

/** The protocol version the SDK settles on for what a client asks (as its Server does). */
export function negotiatedVersion(requested: unknown): string {
  return typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

/** Who a session id is signed for: the agent, and the endpoint (/mcp/<server>) when it is not /mcp, so neither opens the other's sessions. */
function signedFor(agentId: string, scope: string | undefined): string {
  return scope === undefined ? agentId : `${agentId}\u0000/mcp/${scope}`;
}

export class Sessions implements SessionOwner {
  /** Every session held here, the longest unused first. */
  private readonly byId = new Map<string, McpSession>();
  /** The same, per agent. */
  private readonly byAgent = new Map<string, Set<McpSession>>();
  /** Idle sessions holding their SDK objects, the longest unused first. */
  private readonly warm = new Set<McpSession>();
  /** Sessions being re-created from their id (null: it has ended): concurrent requests of one session share one. */
  private readonly restoring = new Map<string, Promise<McpSession | null>>();
  /** Sessions ended here (DELETE, or pushed out by a limit), newest last: not re-created from their id. */
  private readonly terminated = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private seen = { generation: -1, tools: -1 };
  private lastSweep = Date.now();
  /** Held sessions idle this long are dropped here; those with a stream are marked used this often. */
  private readonly idleMs: number;
  private readonly sweepEveryMs: number;

  constructor(
    private readonly ids: SessionIds,
    readonly federation: Federation,
    private readonly snapshot: Snapshot,
    /** When each session was last used, on any node: a session idle for mcp.session_idle_s has ended. */
    private readonly activity: SessionActivity,
    private readonly limits: SessionLimits,
    private readonly log?: { warn: (obj: object, msg: string) => void },
    /** How the nodes reach each other about a session (see session-bus.ts); one node alone without it. */
    readonly bus: SessionBus = new SessionBus(),
  ) {
    bus.listen({
      answer: (id, message) => {
        const p = this.byId.get(id)?.protocol;
        if (p && 'id' in message && p.awaits(message.id)) p.deliver(message);
      },
      cancel: (id, notification) => this.byId.get(id)?.cancelledElsewhere(notification),
      notify: (id, notification) => {
        const s = this.byId.get(id);
        if (s && s.streams > 0) void s.protocol?.server.notification({ method: notification.method, params: notification.params } as ServerNotification).catch(() => undefined);
      },
    });
    this.idleMs = Math.min(IDLE_MS, activity.idleMs);
    this.sweepEveryMs = Math.min(60_000, Math.max(WATCH_MS, activity.writeEveryMs));
    federation.upstreams.onLog = (server, params) => this.relayLog(server, params);
    federation.upstreams.onResourceUpdated = (server, uri) => this.relayUpdated(server, uri);
    this.timer = setInterval(() => this.tick(), WATCH_MS);
    this.timer.unref();
  }

  get size(): number {
    return this.byId.size;
  }

  /** Notification streams open on this node. */
  get openStreams(): number {
    let n = 0;
    for (const s of this.byId.values()) n += s.streams;
    return n;
  }

  /** Sessions holding their SDK objects. */
  get builtCount(): number {
    let n = 0;
    for (const s of this.byId.values()) if (s.protocol) n++;
    return n;
  }

  /**
   * A new session for an initialize request: its id is minted now (the transport hands it out in Mcp-Session-Id).
   * The session is entered: leave() it when the answer has ended.
   */
  async create(agentId: string, requestedVersion: unknown, scope?: string, clientCapabilities?: unknown): Promise<McpSession> {
    const id = this.ids.mint(signedFor(agentId, scope), negotiatedVersion(requestedVersion), clientCapabilities);
    await this.activity.started(id);
    const session = this.add(id, agentId, scope);
    session.enter();
    try {
      await session.start();
    } catch (e) {
      session.leave();
      this.drop(session);
      throw e;
    }
    return session;
  }

  /**
   * The session of an Mcp-Session-Id for this agent, entered (leave() it when the answer has ended): held here, or
   * re-created from a valid id; null for any other id and for a session that has ended (idle too long, ended by its
   * client, or pushed out by a limit).
   */
  async find(id: string, agentId: string, scope?: string): Promise<McpSession | null> {
    let session = this.byId.get(id);
    if (session) {
      if (session.agentId !== agentId || session.scope !== scope) return null;
      session.enter();
      let live: boolean;
      try {
        live = await this.activity.use(id);
      } catch (e) {
        session.leave();
        throw e;
      }
      if (!live) {
        session.leave();
        this.drop(session);
        return null;
      }
    } else {
      if (this.terminated.has(id)) return null;
      let pending = this.restoring.get(id);
      if (!pending) {
        const version = this.ids.verify(id, signedFor(agentId, scope));
        if (!version) return null;
        pending = this.restoreIfLive(id, agentId, scope).finally(() => this.restoring.delete(id));
        this.restoring.set(id, pending);
      }
      session = (await pending) ?? undefined;
      if (!session || session.agentId !== agentId || session.scope !== scope) return null;
      session.enter();
    }
    // Ended while its use was checked (pushed out by a new session, say).
    if (this.byId.get(id) !== session) {
      session.leave();
      return null;
    }
    this.touch(session);
    return session;
  }

  /** Re-creates (the record of) a session another node (or this one before a restart) served, unless it has ended. */
  private async restoreIfLive(id: string, agentId: string, scope: string | undefined): Promise<McpSession | null> {
    if (!(await this.activity.use(id))) return null;
    return this.byId.get(id) ?? this.add(id, agentId, scope);
  }

  /** Holds a new session, first ending the longest unused one of the agent, or of the node, when a limit is reached. */
  private add(id: string, agentId: string, scope?: string): McpSession {
    const mine = this.byAgent.get(agentId);
    if (mine && mine.size >= this.limits.perAgent) this.pushOut(mine);
    if (this.byId.size >= this.limits.total) this.pushOut(this.byId.values());
    const session = new McpSession(id, agentId, this, scope);
    this.byId.set(id, session);
    if (mine) mine.add(session);
    else this.byAgent.set(agentId, new Set([session]));
    return session;
  }

  /** Ends the longest unused idle session of these (or, when every one is busy, the longest unused). */
  private pushOut(sessions: Iterable<McpSession>): void {
    let oldest: McpSession | undefined;
    for (const s of sessions) {
      oldest ??= s;
      if (!s.busy) {
        oldest = s;
        break;
      }
    }
    if (oldest) this.end(oldest);
  }

  /** Marks a session used now: it moves to the end of the orders. */
  private touch(s: McpSession): void {
    s.lastSeen = Date.now();
    this.byId.delete(s.id);
    this.byId.set(s.id, s);
    const mine = this.byAgent.get(s.agentId);
    mine?.delete(s);
    mine?.add(s);
  }

  /** SessionOwner: an idle session keeps its SDK objects only among the WARM most recently used. */
  idle(s: McpSession): void {
    s.lastSeen = Date.now();
    if (s.ended || s.protocol === undefined) return;
    this.warm.delete(s);
    this.warm.add(s);
    if (this.warm.size <= WARM) return;
    const coldest = this.warm.values().next().value!;
    this.warm.delete(coldest);
    coldest.putDown();
  }

  busy(s: McpSession): void {
    this.warm.delete(s);
  }

  /** Its client ended the session (DELETE): it ends on every node and its id is not re-created here. */
  deleted(s: McpSession): void {
    this.end(s);
  }

  /** Ends a session on every node (its client ended it, or a limit pushed it out). */
  private end(s: McpSession): void {
    if (s.ended) return;
    this.drop(s);
    void this.activity.ended(s.id).catch((err: unknown) => this.log?.warn({ err }, 'ending an MCP session on every node failed; it ends there once idle'));
    this.terminated.add(s.id);
    if (this.terminated.size > this.limits.total) this.terminated.delete(this.terminated.values().next().value!);
  }

  /** Forgets a session here (it may go on on another node, and be re-created here from its id while it does). */
  private drop(s: McpSession): void {
    if (this.byId.get(s.id) === s) this.byId.delete(s.id);
    const mine = this.byAgent.get(s.agentId);
    if (mine?.delete(s) && mine.size === 0) this.byAgent.delete(s.agentId);
    this.warm.delete(s);
    this.federation.forget(s.id);
    s.end();
  }

  /** A notification stream opened: what the session sees now is what later changes are measured against. */
  streamOpened(session: McpSession): void {
    session.streams++;
    const p = session.protocol;
    if (!p?.caller) return;
    p.told.tools ??= this.federation.visibleTools(p.caller);
    p.told.servers ??= this.federation.visibleServers(p.caller);
  }

  streamClosed(session: McpSession): void {
    session.streams = Math.max(0, session.streams - 1);
    session.lastSeen = Date.now();
  }

  private tick(): void {
    const now = Date.now();
    if (now - this.lastSweep >= this.sweepEveryMs) {
      this.lastSweep = now;
      this.sweep(now);
    }
    const generation = this.snapshot.generation;
    const tools = this.federation.upstreams.version;
    if (generation === this.seen.generation && tools === this.seen.tools) return;
    this.seen = { generation, tools };
    for (const s of this.byId.values()) if (s.streams > 0) this.notify(s);
  }

  /**
   * An upstream's log message goes to the sessions of this node that see its server: those with a call to it in flight
   * when there are (the message is most likely of one of those calls: the upstream connection is the node's, shared by
   * its sessions, and does not say which call a message belongs to), else those with a notification stream open.
   */
  private relayLog(server: string, params: LoggingMessageNotification['params']): void {
    const calling: McpSession[] = [];
    const listening: McpSession[] = [];
    for (const s of this.byId.values()) {
      const p = s.protocol;
      if (!p?.caller) continue;
      if ([...p.calls.values()].includes(server)) calling.push(s);
      else if (s.streams > 0) listening.push(s);
    }
    // Without a session's call to the server, a call of a request without a session may be the one logging: its
    // messages are not another agent's to read.
    if (calling.length === 0 && (this.federation.sessionlessCalls.get(server) ?? 0) > 0) return;
    for (const s of calling.length > 0 ? calling : listening) {
      const p = s.protocol!;
      if (this.federation.sees(p.caller!, server)) p.relayLog(server, params, s.logLevel);
    }
  }

  upstreamLogLevel(): LoggingLevel | undefined {
    let most: LoggingLevel | undefined;
    for (const s of this.byId.values()) {
      if (s.logLevel !== undefined && (most === undefined || LOG_LEVELS.indexOf(s.logLevel) < LOG_LEVELS.indexOf(most))) most = s.logLevel;
    }
    return most;
  }

  /**
   * A resource changed: the sessions of this node subscribed to it are told on their notification stream, or, when
   * that stream is open on another node (a client sent round-robin), through that node.
   */
  private relayUpdated(server: string, upstreamUri: string): void {
    for (const id of this.federation.subscribersOf(federatedUri(server, upstreamUri))) {
      const s = this.byId.get(id);
      const p = s?.protocol;
      // What the agent may see is read again: a policy changed since the subscribe ends its updates.
      if (!p?.caller || !this.federation.sees(p.caller, server)) continue;
      const params = { uri: namingOf(s!.scope).uri(server, upstreamUri) };
      if (s!.streams > 0 || !this.bus.sendNotification(id, { jsonrpc: '2.0', method: 'notifications/resources/updated', params })) {
        void p.server.sendResourceUpdated(params).catch(() => undefined);
      }
    }
  }

  /** Tells the session its lists changed, when what its agent may call (or see) is no longer what it was shown. */
  private notify(s: McpSession): void {
    const p = s.protocol;
    if (!p?.caller) return;
    const tools = this.federation.visibleTools(p.caller);
    if (p.told.tools !== undefined && tools !== p.told.tools) {
      p.told.tools = tools;
      void p.server.sendToolListChanged().catch(() => undefined);
    }
    const servers = this.federation.visibleServers(p.caller);
    if (p.told.servers !== undefined && servers !== p.told.servers) {
      p.told.servers = servers;
      void p.server.sendResourceListChanged().catch(() => undefined);
      void p.server.sendPromptListChanged().catch(() => undefined);
    }
  }

  private sweep(now: number): void {
    for (const s of [...this.byId.values()]) {
      // An open notification stream is a session in use, on every node.
      if (s.streams > 0) this.activity.keep(s.id);
      else if (!s.busy && now - s.lastSeen > this.idleMs) this.drop(s);
    }
    this.activity.sweep();
  }

  /** Closes every session (their notification streams end, so connections can close). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.bus.close();
    for (const s of this.byId.values()) s.end();
    this.byId.clear();
    this.byAgent.clear();
    this.warm.clear();
  }
}
