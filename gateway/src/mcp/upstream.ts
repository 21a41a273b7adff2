// One upstream MCP server of `mcp_servers:`: an SDK Client over Streamable HTTP or stdio, connected on first use.
// A stdio server that exits is started again with backoff; an HTTP session the server no longer knows (404) is
// initialised again and the request sent once more, so the agent never sees it expire.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CreateMessageResult,
  CreateMessageRequestSchema,
  type ElicitResult,
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  McpError,
  type LoggingMessageNotification,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AgentgwError } from '../contract/index.js';
import { VERSION } from '../version.js';
import { isStdio, type McpHttpServerConfig, type McpServerConfig } from './mcp-config.js';
import { agentCredentialsFor } from './agent-credentials.js';
import { ClientCredentials, clientCredentialsFetch } from './upstream-oauth.js';
import { ServerRequestRoutes, outsideClientChannel } from './client-requests.js';
import { type ModernCall, ModernChannel, type ModernRequestOptions, ModernTransportError } from './modern-upstream.js';

/** What an upstream tells the sessions of this node. */
export interface UpstreamEvents {
  log?(params: LoggingMessageNotification['params']): void;
  /** A resource subscribed to changed (its upstream URI). */
  resourceUpdated?(uri: string): void;
  /** The server listed its tools: awaited before they are used (tool pinning records first definitions there). */
  listed?(tools: Tool[]): Promise<void>;
  /** A list of the server's changed, as told over 2026-07-28 (subscriptions/listen). */
  listChanged?(kind: 'tools' | 'prompts' | 'resources'): void;
}

export type UpstreamState = 'idle' | 'connecting' | 'up' | 'down';

export interface UpstreamLog {
  warn(obj: object, msg: string): void;
}

/** Waits between connection attempts after failures: 250 ms, doubling, at most 30 s. */
const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 30_000;
/** A stdio server that stayed up this long before it exited is restarted at once, as after its first failure. */
const STABLE_AFTER_MS = 60_000;
/** Connections of agents with their own credentials one server keeps open on a node (the least recently used closes). */
const MAX_AGENT_CONNECTIONS = 256;
/** Pages of a list read from one upstream at most (a server that pages forever cannot hold a request). */
const MAX_PAGES = 100;
/** A server that could not be asked which revisions it serves is asked again after this long (ms). */
const DISCOVER_RETRY_MS = 5_000;
/** How long a tool list read over 2026-07-28 is kept, whatever its ttlMs says (ms). */
const MAX_LIST_TTL_MS = 60_000;
const MIN_LIST_TTL_MS = 1_000;
/** The most tools one server's 2026-07-28 list gives. */
const MAX_TOOLS = 10_000;
/** What agentgw says of itself on the requests it makes for no client (lists it keeps for every agent). */
const OWN_ENVELOPE: ModernCall['envelope'] = { capabilities: {} };

/** Whether a listed entry has what a tool must (a name, an object input schema). */
function isToolShaped(t: unknown): t is Tool {
  if (t === null || typeof t !== 'object' || Array.isArray(t)) return false;
  const { name, inputSchema } = t as { name?: unknown; inputSchema?: unknown };
  return typeof name === 'string' && name.length > 0 && inputSchema !== null && typeof inputSchema === 'object' && !Array.isArray(inputSchema);
}

function backoffMs(failures: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.max(0, failures - 1));
}

/** The HTTP session the request was sent in is unknown to the server (it expired, or the server restarted). */
function sessionExpired(e: unknown): boolean {
  return e instanceof StreamableHTTPError && e.code === 404;
}

/** An upstream error that is not an answer of the server's (a JSON-RPC error is one, passed on to the agent). */
export function upstreamFailure(server: string, e: unknown, timeoutMs: number): AgentgwError {
  if (e instanceof AgentgwError) return e;
  if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
    return new AgentgwError('upstream_timeout', `MCP server ${server} did not answer within ${timeoutMs} ms: retry later, or ask an admin to raise its timeout_ms.`);
  }
  const why = e instanceof StreamableHTTPError && e.code !== undefined && e.code > 0 ? ` (HTTP ${e.code})` : '';
  return new AgentgwError('upstream_unavailable', `MCP server ${server} cannot be reached${why}: retry later; if it persists, ask an admin to check the server.`);
}

/** Whether the error is the upstream's own JSON-RPC answer (invalid params, unknown method...), not a failure to reach it. */
export function isUpstreamAnswer(e: unknown): e is McpError {
  return e instanceof McpError && e.code !== ErrorCode.RequestTimeout && e.code !== ErrorCode.ConnectionClosed;
}

export class Upstream {
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  private failures = 0;
  /** No connection is attempted before this time (ms): calls meanwhile fail at once. */
  private retryAt = 0;
  private upSince = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Started at least once: a stdio server is restarted only after its first use. */
  private used = false;
  private lastError: string | null = null;
  /** The last request failed to reach the server (an HTTP server that went away keeps its client until it answers again). */
  private unreachable = false;
  private tools: Tool[] | null = null;
  private toolsOf: Client | null = null;
  private toolsLoading: Promise<Tool[]> | null = null;
  /** The tool list as last read, to tell a change (JSON of names, descriptions and schemas). */
  private toolsSignature: string | null = null;
  /** The server over 2026-07-28 (null: it serves earlier revisions only); undefined: not known yet. */
  private modernChannel: ModernChannel | null | undefined;
  private discovering: Promise<ModernChannel | null> | null = null;
  private discoverAfter = 0;
  /** The tools as last listed over 2026-07-28, and until when that list holds (its ttlMs). */
  private modernTools: { tools: Tool[]; until: number } | null = null;
  /** The last list served to clients of 2026-07-28, and the two lists it was made of. */
  private merged: { own: Tool[]; modern: Tool[]; tools: Tool[] } | null = null;
  private modernLoading: Promise<Tool[]> | null = null;
  /** Bumped when the server says its tools changed: a list read before is not kept. */
  private modernGeneration = 0;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly onToolsChanged: () => void,
    private readonly log?: UpstreamLog,
    /** The server's log messages (notifications/message) and resource updates, for the sessions that use it. */
    private readonly events: UpstreamEvents = {},
    /** The agent whose own connection this is (per-agent credentials); undefined: the server's shared connection. */
    private readonly owner?: string,
  ) {
    if (!isStdio(config) && config.oauth && owner === undefined) {
      this.fetch = clientCredentialsFetch(new ClientCredentials(name, config.oauth, config.oauth.resource ?? config.url));
    }
  }

  /** How requests reach an HTTP server that wants agentgw's own token (oauth: client credentials). */
  private readonly fetch: FetchLike | undefined;

  /** Which /mcp call each of the server's requests to a client (sampling, elicitation) came for. */
  private readonly clientRequests = new ServerRequestRoutes();

  /** Connections of agents with credentials of their own for this server, least recently used first. */
  private readonly byAgent = new Map<string, { digest: string; upstream: Upstream }>();

  /**
   * The connection the current /mcp request uses: the agent's own when an admin set it credentials for this server
   * (they take the place of the server's Authorization, static or client credentials), else this shared one.
   * `quiet`: credentials that cannot be read fall back here instead of failing (for what is only read, not sent).
   */
  private via(quiet = false): Upstream {
    if (this.owner !== undefined || this.closed || isStdio(this.config)) return this;
    let own;
    try {
      own = agentCredentialsFor(this.name);
    } catch (e) {
      if (quiet) return this;
      throw e;
    }
    if (!own) return this;
    const held = this.byAgent.get(own.agentId);
    this.byAgent.delete(own.agentId);
    if (held?.digest === own.digest) {
      this.byAgent.set(own.agentId, held);
      return held.upstream;
    }
    if (held) void held.upstream.close();
    // Each agent's headers replace the server's of the same name; the server's Authorization never goes with them.
    const names = new Set(Object.keys(own.headers).map((k) => k.toLowerCase()).concat('authorization'));
    const headers = { ...Object.fromEntries(Object.entries(this.config.headers).filter(([k]) => !names.has(k.toLowerCase()))), ...own.headers };
    const upstream = new Upstream(this.name, { ...this.config, headers, oauth: undefined }, this.onToolsChanged, this.log, this.events, own.agentId);
    this.byAgent.set(own.agentId, { digest: own.digest, upstream });
    if (this.byAgent.size > MAX_AGENT_CONNECTIONS) {
      const [oldest, entry] = this.byAgent.entries().next().value!;
      this.byAgent.delete(oldest);
      void entry.upstream.close();
    }
    return upstream;
  }

  /** What the connected server offers (undefined when it is not connected). */
  get capabilities(): ServerCapabilities | undefined {
    const u = this.via(true);
    if (u !== this) return u.capabilities;
    return this.client?.getServerCapabilities();
  }

  get transport(): 'http' | 'stdio' {
    return isStdio(this.config) ? 'stdio' : 'http';
  }

  get timeoutMs(): number {
    return this.config.timeout_ms;
  }

  /** USD per call of the tool (its upstream name); 0 when it has no price. */
  priceOf(tool: string): number {
    return this.config.prices[tool] ?? 0;
  }

  get state(): UpstreamState {
    if (this.client) return this.unreachable ? 'down' : 'up';
    if (this.connecting) return 'connecting';
    return this.used || this.lastError ? 'down' : 'idle';
  }

  /** Why the last connection attempt or request failed (no secrets: the server's name and a reason class). */
  get error(): string | null {
    return this.client && !this.unreachable ? null : this.lastError;
  }

  /** The tools as last read, without connecting (null: never read, or lost with the connection). */
  get cachedTools(): Tool[] | null {
    const u = this.via(true);
    if (u !== this) return u.cachedTools;
    return this.client && this.toolsOf === this.client ? this.tools : null;
  }

  /** The connected client: connects on first use, waits for a connection under way, fails fast while backing off. */
  connection(): Promise<Client> {
    let u: Upstream;
    try {
      u = this.via();
    } catch (e) {
      return Promise.reject(e);
    }
    if (u !== this) return u.connection();
    if (this.closed) return Promise.reject(new AgentgwError('upstream_unavailable', `MCP server ${this.name} is shutting down: retry on another node or later.`));
    if (this.client) return Promise.resolve(this.client);
    if (this.connecting) return this.connecting;
    const wait = this.retryAt - Date.now();
    if (wait > 0) {
      return Promise.reject(
        new AgentgwError('upstream_unavailable', `MCP server ${this.name} is down (${this.lastError ?? 'not reachable'}); the next attempt is in ${Math.ceil(wait / 1000)} s: retry later.`),
      );
    }
    this.used = true;
    const attempt = this.connect().finally(() => {
      if (this.connecting === attempt) this.connecting = null;
    });
    this.connecting = attempt;
    return attempt;
  }

  private makeTransport() {
    const c = this.config;
    if (isStdio(c)) {
      // The SDK's default environment (PATH, HOME, ...) and the configured variables: never the gateway's own secrets.
      return new StdioClientTransport({ command: c.command, args: c.args, env: { ...getDefaultEnvironment(), ...c.env }, cwd: c.cwd, stderr: 'ignore' });
    }
    return new StreamableHTTPClientTransport(new URL(c.url), { requestInit: { headers: c.headers }, fetch: this.clientRequests.fetch(this.fetch) });
  }

  private async connect(): Promise<Client> {
    const client = new Client(
      { name: 'agentgw', version: VERSION },
      {
        // Sampling and elicitation are the clients' to answer: relayed to the client of the call that asked (a client without
        // the capability refuses it, as it would to the server itself).
        capabilities: { sampling: {}, elicitation: {} },
        listChanged: { tools: { autoRefresh: false, debounceMs: 50, onChanged: () => void this.refreshTools(client).catch(() => undefined) } },
      },
    );
    client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => (await this.clientRequests.relay(req, extra.requestId, extra.signal, this.name)) as CreateMessageResult);
    client.setRequestHandler(ElicitRequestSchema, async (req, extra) => (await this.clientRequests.relay(req, extra.requestId, extra.signal, this.name)) as ElicitResult);
    client.onclose = () => this.lost(client);
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => this.events.log?.(n.params));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => this.events.resourceUpdated?.(n.params.uri));
    // Transport errors also surface as the failed request's error; nothing more to do with them here.
    client.onerror = () => undefined;
    try {
      // Outside the call that asked for the connection: the standalone stream it opens belongs to no call.
      await outsideClientChannel(() => client.connect(this.makeTransport(), { timeout: this.config.timeout_ms }));
    } catch (e) {
      client.onclose = undefined;
      await client.close().catch(() => undefined);
      this.failed(e);
      throw upstreamFailure(this.name, e, this.config.timeout_ms);
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      throw new AgentgwError('upstream_unavailable', `MCP server ${this.name} is shutting down: retry on another node or later.`);
    }
    this.client = client;
    this.upSince = Date.now();
    this.lastError = null;
    this.unreachable = false;
    return client;
  }

  private failed(e: unknown): void {
    this.failures++;
    this.retryAt = Date.now() + backoffMs(this.failures);
    this.lastError = e instanceof McpError && e.code === ErrorCode.RequestTimeout ? 'timed out' : e instanceof StreamableHTTPError ? `HTTP ${e.code}` : 'connection failed';
    this.scheduleRestart();
  }

  /** The connection closed: a stdio server exited (or an HTTP client was closed). */
  private lost(client: Client): void {
    if (this.client !== client) return;
    this.client = null;
    if (this.closed) return;
    if (this.transport === 'http') return;
    if (Date.now() - this.upSince >= STABLE_AFTER_MS) this.failures = 0;
    this.failures++;
    this.retryAt = Date.now() + backoffMs(this.failures);
    this.lastError = 'process exited';
    this.log?.warn({ mcp_server: this.name, restart_in_ms: backoffMs(this.failures) }, 'MCP server exited; restarting it');
    this.scheduleRestart();
  }

  /** A stdio server in use is started again once its backoff has passed; an HTTP server is tried again on the next call. */
  private scheduleRestart(): void {
    if (this.closed || this.transport !== 'stdio' || !this.used || this.restartTimer) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.connection().then(
        () => {
          this.failures = 0;
          // Its tools may differ after a restart: read them again (sessions are told when they changed).
          void this.listTools().catch(() => undefined);
        },
        () => undefined,
      );
    }, Math.max(0, this.retryAt - Date.now()));
    this.restartTimer.unref();
  }

  /** Drops the connection whose HTTP session expired (only if it is still the current one) and opens a new one. */
  private async renew(stale: Client): Promise<Client> {
    if (this.client === stale) {
      this.client = null;
      stale.onclose = undefined;
      void stale.close().catch(() => undefined);
    }
    return this.connection();
  }

  /**
   * Runs one request with the server's timeout. An expired HTTP session is initialised again and the request sent once
   * more (the server refused it unread). Failures to reach the server become upstream_unavailable / upstream_timeout;
   * the server's own JSON-RPC errors are thrown as they came.
   */
  async request<T>(op: (client: Client, options: RequestOptions) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const u = this.via();
    if (u !== this) return u.request(op, signal);
    const options: RequestOptions = { timeout: this.config.timeout_ms, signal };
    // A call's sampling and elicitation reach its client (a stdio server has no stream per call to tell them by).
    if (isStdio(this.config)) this.clientRequests.track();
    let client = await this.connection();
    try {
      let result: T;
      try {
        result = await op(client, options);
      } catch (e) {
        if (!sessionExpired(e)) throw e;
        client = await this.renew(client);
        result = await op(client, options);
      }
      this.unreachable = false;
      return result;
    } catch (e) {
      throw this.requestFailed(e, signal);
    }
  }

  /**
   * What a request that failed throws, and the server's state after it: its own JSON-RPC error as it came (the server
   * answered), agentgw's errors and cancellations as they are, anything else upstream_unavailable / upstream_timeout
   * with the server marked unreachable.
   */
  private requestFailed(e: unknown, signal: AbortSignal | undefined): unknown {
    if (isUpstreamAnswer(e)) {
      this.unreachable = false;
      return e;
    }
    if (e instanceof AgentgwError || signal?.aborted) return e;
    this.unreachable = true;
    this.lastError = e instanceof McpError && e.code === ErrorCode.RequestTimeout ? 'timed out' : e instanceof ModernTransportError && e.status ? `HTTP ${e.status}` : 'request failed';
    return upstreamFailure(this.name, e, this.config.timeout_ms);
  }

  /** Every page of a list. */
  async listAll<I>(read: (client: Client, cursor: string | undefined, options: RequestOptions) => Promise<{ items: I[]; nextCursor?: string }>): Promise<I[]> {
    const out: I[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const r = await this.request((c, o) => read(c, cursor, o));
      out.push(...r.items);
      if (!r.nextCursor) break;
      cursor = r.nextCursor;
    }
    return out;
  }

  /** The server's tools, read once per connection and again when it says they changed. */
  async listTools(): Promise<Tool[]> {
    const u = this.via();
    if (u !== this) return u.listTools();
    const cached = this.cachedTools;
    if (cached) return cached;
    const client = await this.connection();
    return this.refreshTools(client);
  }

  private refreshTools(client: Client): Promise<Tool[]> {
    if (this.toolsLoading) return this.toolsLoading;
    const loading = this.listAll(async (c, cursor, o) => {
      const r = await c.listTools(cursor ? { cursor } : undefined, o);
      return { items: r.tools, nextCursor: r.nextCursor };
    })
      .then(async (tools) => {
        // A failure to record leaves new tools unpinned, and so withheld: they are recorded at a later listing.
        await this.events.listed?.(tools).catch((e: unknown) => this.log?.warn({ mcp_server: this.name, reason: (e as Error).message }, 'MCP tool pins could not be recorded'));
        const signature = JSON.stringify(tools.map((t) => [t.name, t.description, t.inputSchema, t.outputSchema, t.annotations]));
        const changed = this.toolsSignature !== null && signature !== this.toolsSignature;
        this.tools = tools;
        this.toolsOf = this.client ?? client;
        this.toolsSignature = signature;
        if (changed) this.onToolsChanged();
        return tools;
      })
      .finally(() => {
        if (this.toolsLoading === loading) this.toolsLoading = null;
      });
    this.toolsLoading = loading;
    return loading;
  }

  /**
   * The server over the 2026-07-28 revision, when it serves it (asked once with server/discover); null for a stdio
   * server, one of earlier revisions only, or one that cannot be asked now (its session is used; it fails as it will).
   */
  modern(): Promise<ModernChannel | null> {
    let u: Upstream;
    try {
      u = this.via();
    } catch (e) {
      return Promise.reject(e);
    }
    if (u !== this) return u.modern();
    if (isStdio(this.config) || this.closed) return Promise.resolve(null);
    if (this.modernChannel !== undefined) return Promise.resolve(this.modernChannel);
    if (Date.now() < this.discoverAfter) return Promise.resolve(null);
    const config = this.config as McpHttpServerConfig;
    this.discovering ??= (async () => {
      const channel = new ModernChannel(config.url, config.headers, this.fetch, config.timeout_ms);
      try {
        this.modernChannel = (await channel.discover()) ? channel : null;
        if (this.modernChannel && this.owner === undefined) void this.listenTo(this.modernChannel);
        return this.modernChannel;
      } catch {
        this.discoverAfter = Date.now() + DISCOVER_RETRY_MS;
        return null;
      } finally {
        this.discovering = null;
      }
    })();
    return this.discovering;
  }

  /**
   * Holds a subscriptions/listen stream to a server of 2026-07-28 for as long as agentgw runs (opened again after it
   * ends, with backoff): a tool list that changed is read again at the next use, and each change is told to this node's
   * listening clients. Only the server's shared connection listens (an agent's own credentials list the same things).
   */
  private async listenTo(channel: ModernChannel): Promise<void> {
    let failures = 0;
    let opened = false;
    const changed = (kind: 'tools' | 'prompts' | 'resources') => {
      if (kind === 'tools') {
        this.modernTools = null;
        this.modernLoading = null;
        this.modernGeneration++;
      }
      this.events.listChanged?.(kind);
    };
    // While the stream was down, changes were not heard: once it opens again, every list counts as changed.
    const onopen = () => {
      if (opened) for (const kind of ['tools', 'prompts', 'resources'] as const) changed(kind);
      opened = true;
    };
    while (!this.closed) {
      const since = Date.now();
      try {
        await channel.listen((n) => {
          const kind = n.method === 'notifications/tools/list_changed' ? 'tools' : n.method === 'notifications/prompts/list_changed' ? 'prompts' : n.method === 'notifications/resources/list_changed' ? 'resources' : undefined;
          if (kind !== undefined) changed(kind);
        }, this.listening.signal, onopen);
      } catch {
        // Not open now: tried again after the backoff.
      }
      if (this.closed) return;
      failures = Date.now() - since >= STABLE_AFTER_MS ? 1 : failures + 1;
      await new Promise<void>((r) => setTimeout(r, backoffMs(failures)).unref());
    }
  }

  /** Ends the listen stream when the upstream closes. */
  private readonly listening = new AbortController();

  /**
   * One request over 2026-07-28: the server's JSON-RPC errors are thrown as they came, failures to reach it become
   * upstream_unavailable / upstream_timeout as for a session's requests.
   */
  async modernRequest(channel: ModernChannel, method: string, params: Record<string, unknown>, envelope: ModernCall['envelope'], options?: ModernRequestOptions): Promise<Record<string, unknown>> {
    // The state (up, down, why) of the connection the channel is: an agent's own, or the server's.
    const u = this.via(true);
    if (u !== this) return u.modernRequest(channel, method, params, envelope, options);
    try {
      const r = await channel.request(method, params, envelope, options);
      this.unreachable = false;
      return r;
    } catch (e) {
      throw this.requestFailed(e, options?.signal);
    }
  }

  /**
   * The tools a client of 2026-07-28 is served: those the server's session lists, as listed there, and those it lists
   * only over 2026-07-28. One definition per name, so that one pin holds per tool whichever revision lists it (two
   * SDKs of one server may describe a tool differently, e.g. its schema's dialect). A server without sessions has only
   * the second.
   */
  async listModernTools(channel: ModernChannel): Promise<Tool[]> {
    const u = this.via();
    if (u !== this) return u.listModernTools(channel);
    const [session, modern] = await Promise.allSettled([this.listTools(), this.readModernTools(channel)]);
    if (modern.status === 'rejected') throw modern.reason;
    const own = session.status === 'fulfilled' ? session.value : [];
    if (this.merged?.own === own && this.merged.modern === modern.value) return this.merged.tools;
    const names = new Set(own.map((t) => t.name));
    const only = modern.value.filter((t) => !names.has(t.name));
    const tools = only.length === 0 ? own : [...own, ...only];
    // Pinned as first seen here: only the tools the session does not list (it pins its own).
    await this.events.listed?.(only).catch((e: unknown) => this.log?.warn({ mcp_server: this.name, reason: (e as Error).message }, 'MCP tool pins could not be recorded'));
    this.merged = { own, modern: modern.value, tools };
    return tools;
  }

  /**
   * The tools a client is served and the channel its calls take: for a client of 2026-07-28 (`modern`), over that
   * revision when the server serves it (listModernTools), else the session's list and no channel.
   */
  async toolsFor(modern: boolean): Promise<{ channel: ModernChannel | null; tools: Tool[] }> {
    const channel = modern ? await this.modern() : null;
    return { channel, tools: channel ? await this.listModernTools(channel) : await this.listTools() };
  }

  /**
   * What the server lists over 2026-07-28: kept as long as its ttlMs says, at least a second (the call after a header
   * check reads the same list) and at most a minute (a minute without ttlMs); read again at once when its listen stream
   * says the tools changed. Concurrent readers share one read; a list read while a change was told is not kept.
   */
  private readModernTools(channel: ModernChannel): Promise<Tool[]> {
    if (this.modernTools && Date.now() < this.modernTools.until) return Promise.resolve(this.modernTools.tools);
    if (this.modernLoading) return this.modernLoading;
    const generation = this.modernGeneration;
    const loading = (async () => {
      const tools: Tool[] = [];
      let ttl = MAX_LIST_TTL_MS;
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES && tools.length < MAX_TOOLS; page++) {
        const r = await this.modernRequest(channel, 'tools/list', cursor ? { cursor } : {}, OWN_ENVELOPE);
        if (!Array.isArray(r.tools)) throw upstreamFailure(this.name, new ModernTransportError('tools/list answered without tools'), this.config.timeout_ms);
        // What is not a tool (no name, a schema that is not an object) is not listed, as a session's reader refuses it.
        for (const t of r.tools as unknown[]) if (isToolShaped(t) && tools.length < MAX_TOOLS) tools.push(t);
        if (typeof r.ttlMs === 'number' && r.ttlMs >= 0) ttl = Math.min(ttl, Math.max(MIN_LIST_TTL_MS, r.ttlMs));
        if (typeof r.nextCursor !== 'string') break;
        cursor = r.nextCursor;
      }
      if (generation === this.modernGeneration) this.modernTools = { tools, until: Date.now() + ttl };
      return tools;
    })().finally(() => {
      if (this.modernLoading === loading) this.modernLoading = null;
    });
    this.modernLoading = loading;
    return loading;
  }

  /** The tool as the server lists it over 2026-07-28 (what it checks a call's Mcp-Param-* headers against), when read. */
  modernDefinition(name: string): Tool | undefined {
    const u = this.via(true);
    if (u !== this) return u.modernDefinition(name);
    return this.modernTools?.tools.find((t) => t.name === name);
  }

  /** Whether the connected server offers resources / prompts (false when it is not connected). */
  offers(what: 'resources' | 'prompts'): boolean {
    const u = this.via(true);
    if (u !== this) return u.offers(what);
    return this.client?.getServerCapabilities()?.[what] !== undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening.abort();
    const own = [...this.byAgent.values()];
    this.byAgent.clear();
    await Promise.all(own.map((o) => o.upstream.close()));
    clearTimeout(this.restartTimer);
    const client = this.client;
    this.client = null;
    const pending = this.connecting;
    if (client) {
      client.onclose = undefined;
      await client.close().catch(() => undefined);
    }
    // A connection under way closes itself once it sees `closed`.
    await pending?.catch(() => undefined);
  }
}
