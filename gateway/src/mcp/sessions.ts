// The MCP sessions this node serves: one SDK Server and Streamable HTTP transport per session. A session id another
// node minted (or this node before a restart) is re-created on sight from the id, so a load balancer needs no affinity,
// while the session is live (session-activity.ts). Sessions with a notification stream open are told when what their
// agent may call changes.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Snapshot } from '../storage/snapshot.js';
import { VERSION } from '../version.js';
import type { Federation } from './federation.js';
import type { SessionActivity } from './session-activity.js';
import type { SessionIds } from './session-ids.js';
import type { McpCaller } from './tool-call.js';

/** A session nobody used for this long, with no notification stream open, is dropped (it can be re-created from its id). */
const IDLE_MS = 10 * 60_000;
/** Sessions held at most; past it the longest idle ones without a stream go first. */
const MAX_SESSIONS = 10_000;
/** How often sessions with a stream are checked for a changed tool list (policy or upstream). */
const WATCH_MS = 200;
/** The address the transport sees on requests this node makes to itself (re-creating a session). */
const SELF_URL = 'http://agentgw.internal/mcp';

/** The protocol version the SDK settles on for what a client asks (as its Server does). */
export function negotiatedVersion(requested: unknown): string {
  return typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

type Extra = RequestHandlerExtra<never, never>;

/** The caller of one request, as the /mcp front handed it to the transport. */
function callerOf(extra: { authInfo?: { extra?: Record<string, unknown> } }): McpCaller {
  const caller = extra.authInfo?.extra?.caller as McpCaller | undefined;
  if (!caller) throw new Error('an /mcp request reached a handler without its caller');
  return caller;
}

export class McpSession {
  readonly server: Server;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  lastSeen = Date.now();
  /** Notification (GET) streams open on this node. */
  streams = 0;
  /** The caller of the latest request: whose policies decide what notifications say. */
  caller: McpCaller | undefined;
  /** What the session was last shown (tool names; servers whose resources and prompts it sees). */
  told: { tools?: string | null; servers?: string | null } = {};
  closed = false;

  constructor(
    readonly id: string,
    readonly agentId: string,
    federation: Federation,
    onClosed: (s: McpSession, terminated: boolean) => void,
  ) {
    this.server = new Server(
      { name: 'agentgw', version: VERSION },
      { capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true } } },
    );
    const s = this.server;
    s.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => {
      const caller = callerOf(extra);
      const result = await federation.listTools(caller);
      this.told.tools = result.tools.map((t) => t.name).sort().join('\n');
      return result;
    });
    s.setRequestHandler(CallToolRequestSchema, (req, extra) => federation.callTool(callerOf(extra), req.params, (extra as Extra).signal));
    s.setRequestHandler(ListResourcesRequestSchema, async (_req, extra) => {
      const caller = callerOf(extra);
      this.told.servers = federation.visibleServers(caller);
      return federation.listResources(caller);
    });
    s.setRequestHandler(ListResourceTemplatesRequestSchema, (_req, extra) => federation.listResourceTemplates(callerOf(extra)));
    s.setRequestHandler(ReadResourceRequestSchema, (req, extra) => federation.readResource(callerOf(extra), req.params.uri, extra.signal));
    s.setRequestHandler(ListPromptsRequestSchema, async (_req, extra) => {
      const caller = callerOf(extra);
      this.told.servers = federation.visibleServers(caller);
      return federation.listPrompts(caller);
    });
    s.setRequestHandler(GetPromptRequestSchema, (req, extra) => federation.getPrompt(callerOf(extra), req.params.name, req.params.arguments, extra.signal));
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      // The client ended the session (DELETE): its id is not re-created on this node.
      onsessionclosed: () => onClosed(this, true),
    });
    s.onclose = () => onClosed(this, false);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.server.close().catch(() => undefined);
  }
}

export class Sessions {
  private readonly byId = new Map<string, McpSession>();
  /** Sessions being re-created from their id (null: it has ended): concurrent requests of one session share one. */
  private readonly restoring = new Map<string, Promise<McpSession | null>>();
  /** Sessions their client ended here (DELETE), newest last: not re-created from their id (another node may still). */
  private readonly terminated = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private seen = { generation: -1, tools: -1 };
  private lastSweep = Date.now();
  /** Held sessions idle this long are dropped here; those with a stream are marked used this often. */
  private readonly idleMs: number;
  private readonly sweepEveryMs: number;

  constructor(
    private readonly ids: SessionIds,
    private readonly federation: Federation,
    private readonly snapshot: Snapshot,
    /** When each session was last used, on any node: a session idle for mcp.session_idle_s has ended. */
    private readonly activity: SessionActivity,
    private readonly log?: { warn: (obj: object, msg: string) => void },
  ) {
    this.idleMs = Math.min(IDLE_MS, activity.idleMs);
    this.sweepEveryMs = Math.min(60_000, Math.max(WATCH_MS, activity.writeEveryMs));
    this.timer = setInterval(() => this.tick(), WATCH_MS);
    this.timer.unref();
  }

  get size(): number {
    return this.byId.size;
  }

  /** A new session for an initialize request: its id is minted now (the transport hands it out in Mcp-Session-Id). */
  async create(agentId: string, requestedVersion: unknown): Promise<McpSession> {
    const id = this.ids.mint(agentId, negotiatedVersion(requestedVersion));
    await this.activity.started(id);
    const session = this.add(id, agentId);
    await session.server.connect(session.transport);
    return session;
  }

  /**
   * The session of an Mcp-Session-Id for this agent: held here, or re-created from a valid id; null for any other id
   * and for a session that has ended (idle too long, or ended by its client).
   */
  async find(id: string, agentId: string): Promise<McpSession | null> {
    // A session being re-created is held before its handshake ends: wait for it rather than reach it half made.
    const restoring = this.restoring.get(id);
    const held = restoring ? await restoring.catch(() => null) : this.byId.get(id);
    if (held) {
      if (held.agentId !== agentId) return null;
      if (await this.activity.use(id)) return held;
      void held.close();
      return null;
    }
    if (this.terminated.has(id) || this.restoring.has(id)) return null;
    const version = this.ids.verify(id, agentId);
    if (!version) return null;
    const pending = this.restoreIfLive(id, agentId, version.protocolVersion).finally(() => this.restoring.delete(id));
    this.restoring.set(id, pending);
    return pending;
  }

  /** Re-creates a session another node (or this one before a restart) served, unless it has ended. */
  private async restoreIfLive(id: string, agentId: string, protocolVersion: string): Promise<McpSession | null> {
    if (!(await this.activity.use(id))) return null;
    return this.restore(id, agentId, protocolVersion);
  }

  /** Re-creates a session by replaying its initialisation to a new transport (the SDK's own handshake, sent by this node). */
  private async restore(id: string, agentId: string, protocolVersion: string): Promise<McpSession> {
    const session = this.add(id, agentId);
    try {
      await this.replayHandshake(session, id, protocolVersion);
    } catch (e) {
      if (this.byId.get(id) === session) this.byId.delete(id);
      void session.close();
      throw e;
    }
    return session;
  }

  private async replayHandshake(session: McpSession, id: string, protocolVersion: string): Promise<void> {
    await session.server.connect(session.transport);
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const init = {
      jsonrpc: '2.0' as const,
      id: 'agentgw-restore',
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'agentgw-restored-session', version: VERSION } },
    };
    const initialized = { jsonrpc: '2.0' as const, method: 'notifications/initialized' };
    const withSession = { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': protocolVersion };
    for (const [h, body] of [[headers, init], [withSession, initialized]] as const) {
      const res = await session.transport.handleRequest(new Request(SELF_URL, { method: 'POST', headers: h }), { parsedBody: body });
      const text = await res.text();
      if (!res.ok) throw new Error(`re-creating MCP session failed: ${res.status} ${text.slice(0, 200)}`);
    }
  }

  private add(id: string, agentId: string): McpSession {
    if (this.byId.size >= MAX_SESSIONS) this.evict(Math.ceil(MAX_SESSIONS / 10));
    const session = new McpSession(id, agentId, this.federation, (s, terminated) => {
      if (this.byId.get(s.id) === s) this.byId.delete(s.id);
      if (!terminated) return;
      void this.activity.ended(s.id).catch((err: unknown) => this.log?.warn({ err }, 'ending an MCP session on every node failed; it ends there once idle'));
      this.terminated.add(s.id);
      if (this.terminated.size > MAX_SESSIONS) this.terminated.delete(this.terminated.values().next().value!);
    });
    this.byId.set(id, session);
    return session;
  }

  /** A notification stream opened: what the session sees now is what later changes are measured against. */
  streamOpened(session: McpSession): void {
    session.streams++;
    if (!session.caller) return;
    session.told.tools ??= this.federation.visibleTools(session.caller);
    session.told.servers ??= this.federation.visibleServers(session.caller);
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

  /** Tells the session its lists changed, when what its agent may call (or see) is no longer what it was shown. */
  private notify(s: McpSession): void {
    if (!s.caller) return;
    const tools = this.federation.visibleTools(s.caller);
    if (s.told.tools !== undefined && tools !== s.told.tools) {
      s.told.tools = tools;
      void s.server.sendToolListChanged().catch(() => undefined);
    }
    const servers = this.federation.visibleServers(s.caller);
    if (s.told.servers !== undefined && servers !== s.told.servers) {
      s.told.servers = servers;
      void s.server.sendResourceListChanged().catch(() => undefined);
      void s.server.sendPromptListChanged().catch(() => undefined);
    }
  }

  private sweep(now: number): void {
    for (const s of [...this.byId.values()]) {
      // An open notification stream is a session in use, on every node.
      if (s.streams > 0) this.activity.keep(s.id);
      else if (now - s.lastSeen > this.idleMs) void s.close();
    }
    this.activity.sweep();
  }

  /** Drops the `n` longest-idle sessions without a stream. */
  private evict(n: number): void {
    const idle = [...this.byId.values()].filter((s) => s.streams === 0).sort((a, b) => a.lastSeen - b.lastSeen);
    for (const s of idle.slice(0, n)) {
      this.byId.delete(s.id);
      void s.close();
    }
  }

  /** Closes every session (their notification streams end, so connections can close). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.byId.values()].map((s) => s.close()));
    this.byId.clear();
  }
}
