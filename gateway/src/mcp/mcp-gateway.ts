// /mcp put together: the upstream servers, the federated catalog, the sessions and the HTTP front. The runtime builds
// one; app.ts hands it the /mcp requests; GET /api/mcp/servers reads it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentgwError, type McpServer, type McpServerTools, type Policy } from '../contract/index.js';
import type { McpToolPinRecord } from '../storage/store.js';
import type { DataPlane } from '../data-plane/data-plane.js';
import type { ErrorLog } from '../http/error-handler.js';
import { policyRefusingTool } from '../policy/tool-allowlist.js';
import type { McpServersConfig } from './mcp-config.js';
import type { McpEngine } from './mcp-engine.js';
import { McpFront } from './mcp-front.js';
import { McpMetrics } from './mcp-metrics.js';
import { policyToolName } from './names.js';
import type { McpAuthorizationServer } from './oauth-config.js';
import { McpResourceAuth } from './oauth-resource.js';
import { AgentCredentials } from './agent-credentials.js';
import type { Store } from '../storage/store.js';
import { OriginCheck } from './origin.js';
import { type ActivityStore, SessionActivity } from './session-activity.js';
import { SessionIds } from './session-ids.js';
import type { SessionLimits } from './sessions.js';
import { definitionDigest, type PinStore, toolDefinition } from './tool-pins.js';
import type { UpstreamLog } from './upstream.js';

export interface McpGatewayOptions {
  servers: McpServersConfig;
  dataPlane: DataPlane;
  bodyLimit: number;
  /** The database: when each session was last used, and the pinned tool definitions, as every node reads them. */
  sessionStore: ActivityStore & PinStore;
  /** mcp.session_idle_s, in ms: a session unused this long has ended. */
  sessionIdleMs: number;
  /** limits.mcp_sessions and limits.mcp_sessions_per_agent: sessions one node holds. */
  sessionLimits: SessionLimits;
  /** mcp.allowed_origins, and whether the gateway listens on loopback (Host checked against DNS rebinding). */
  allowedOrigins?: readonly string[];
  loopbackListen?: boolean;
  /** mcp.authorization_servers: OAuth access tokens /mcp accepts beside agent keys. */
  authorizationServers?: readonly McpAuthorizationServer[];
  /** Where per-agent upstream credentials are stored (sealed): absent, every agent uses the servers' own connections. */
  credentialStore?: Pick<Store, 'listMcpCredentials'>;
  log?: UpstreamLog & Partial<ErrorLog>;
  /** Redis shared by the nodes (counters: redis): how a session's messages reach the node that needs them. */
  redis?: { url: string; prefix: string };
}

/** How long GET /api/mcp/servers waits for a server it connects to list its tools. */
const LIST_WAIT_MS = 5_000;

export class McpGateway {
  private readonly front: McpFront;
  private readonly metrics: McpMetrics;
  private readonly ids: SessionIds;
  private readonly activity: SessionActivity;
  private engine: Promise<McpEngine> | undefined;
  private loaded: McpEngine | undefined;
  private closed = false;

  constructor(private readonly opts: McpGatewayOptions) {
    const dp = opts.dataPlane;
    this.metrics = new McpMetrics(dp.telemetry.metrics.registry);
    this.ids = new SessionIds(dp.hasher);
    this.activity = new SessionActivity(opts.sessionStore, opts.sessionIdleMs, opts.log);
    const log = opts.log?.error ? (opts.log as ErrorLog) : undefined;
    this.front = new McpFront({ snapshot: dp.snapshot, hasher: dp.hasher, sessions: async () => (await this.load()).sessions, bodyLimit: opts.bodyLimit, log,
      origins: new OriginCheck({ allowedOrigins: opts.allowedOrigins ?? [], loopbackListen: opts.loopbackListen ?? false }),
      hasServer: (name) => Object.hasOwn(opts.servers, name),
      ...(opts.authorizationServers?.length ? { oauth: new McpResourceAuth(opts.authorizationServers, dp.snapshot) } : {}),
      ...(opts.credentialStore ? { credentials: new AgentCredentials(opts.credentialStore, dp.hasher, dp.snapshot, opts.log) } : {}),
      // A server configured on other nodes only (a stdio server on one node): served there, found through Redis.
      ...(opts.redis
        ? {
            peerFor: async (server: string) => (await this.load()).sessions.bus.nodeFor(server),
            reachedAt: (url: string) => this.loaded?.sessions.bus.announce(url, Object.keys(opts.servers)),
          }
        : {}),
    });
    // With servers configured, /mcp will be used: load it now, off the start-up path.
    if (Object.keys(opts.servers).length > 0) void this.load().catch(() => undefined);
  }

  private load(): Promise<McpEngine> {
    this.engine ??= import('./mcp-engine.js').then((m) => {
      this.loaded = new m.McpEngine(this.opts.servers, this.opts.dataPlane, this.metrics, this.ids, this.activity, this.opts.sessionLimits, this.opts.sessionStore, this.opts.log, this.opts.redis);
      if (this.closed) void this.loaded.sessions.close();
      return this.loaded;
    });
    return this.engine;
  }

  /**
   * The HTTP server listens: with Redis, the servers of this node are announced at that address (a wildcard address is
   * not one other nodes can reach: the address requests reach it at is announced instead, from the first one on).
   */
  listening(address: string | { address: string; port: number } | null): void {
    if (!this.opts.redis || Object.keys(this.opts.servers).length === 0 || address === null || typeof address === 'string') return;
    if (address.address === '0.0.0.0' || address.address === '::') return;
    const host = address.address.includes(':') ? `[${address.address}]` : address.address;
    void this.load().then((e) => e.sessions.bus.announce(`http://${host}:${address.port}`, Object.keys(this.opts.servers)), () => undefined);
  }

  /** True for the requests the gateway hands to handle(). */
  static owns(url: string | undefined): boolean {
    return McpFront.owns(url);
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => this.front.handle(req, res);

  /** MCP sessions this node holds. */
  get sessionCount(): number {
    return this.loaded?.sessions.size ?? 0;
  }

  /** Notification streams (GET) of sessions open on this node. */
  get openStreams(): number {
    return this.loaded?.sessions.openStreams ?? 0;
  }

  /** Those of them holding their SDK objects (in use, or among the most recently used). */
  get builtSessionCount(): number {
    return this.loaded?.sessions.builtCount ?? 0;
  }

  /**
   * The configured servers with their state and tools (connecting those not used yet, briefly); with an agent's policies,
   * only the tools they allow. No URL, header, command or environment (they hold secrets).
   */
  async servers(policies?: readonly Policy[]): Promise<McpServer[]> {
    if (Object.keys(this.opts.servers).length === 0) return [];
    const { upstreams, pins } = await this.load();
    await pins.ready();
    return Promise.all(
      upstreams.all().map(async (u) => {
        const tools = await Promise.race([u.listTools().catch(() => null), new Promise<null>((r) => setTimeout(() => r(null), LIST_WAIT_MS).unref())]);
        const listed = tools ?? u.cachedTools ?? [];
        // What agents are offered: without the tools pinning withholds.
        const names = pins.served(u.name, listed).map((t) => t.name).filter((t) => !policies || !policyRefusingTool(policies, policyToolName(u.name, t)));
        return {
          name: u.name,
          transport: u.transport,
          status: u.state,
          error: u.error,
          timeout_ms: u.timeoutMs,
          tools: names,
          prices: Object.fromEntries(names.flatMap((n) => (u.config.prices[n] !== undefined ? [[n, u.config.prices[n]!]] : []))),
        };
      }),
    );
  }

  /** Whether mcp_servers names the server. */
  hasServer(name: string): boolean {
    return Object.hasOwn(this.opts.servers, name);
  }

  /** The tools the server lists now (connecting it, briefly), as this node read them; upstream_unavailable when it cannot answer. */
  private async listedNow(name: string) {
    const { upstreams, pins } = await this.load();
    const u = upstreams.get(name)!;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AgentgwError('upstream_unavailable', `MCP server ${name} did not list its tools within ${LIST_WAIT_MS / 1000} s: retry later.`)), LIST_WAIT_MS);
      timer.unref();
    });
    try {
      const listed = await Promise.race([u.listTools(), late]);
      await pins.ready();
      return { listed, pins };
    } finally {
      clearTimeout(timer);
    }
  }

  /** GET /api/mcp/servers/{name}/tools: each tool the server lists now with its pin (both definitions for a changed one). */
  async pinnedTools(name: string): Promise<McpServerTools> {
    const { listed, pins } = await this.listedNow(name);
    const seen = new Set<string>();
    const data: McpServerTools['data'] = [];
    for (const t of listed) {
      if (seen.has(t.name)) continue;
      seen.add(t.name);
      const pin = pins.pin(name, t.name);
      const status = pins.status(name, t.name, listed);
      const definition = toolDefinition(t);
      data.push({
        name: t.name,
        status,
        withheld: pins.withheld(name, t, listed),
        digest: definitionDigest(definition),
        pinned_digest: pin?.digest ?? null,
        definition,
        pinned_definition: status === 'changed' ? pin!.definition : null,
        pinned_at: pin?.pinned_at ?? null,
        pinned_by: pin?.pinned_by ?? null,
      });
    }
    return { server: name, pin: this.opts.servers[name]!.pin, data };
  }

  /** The definition an accept pins: the one the server lists now under that name (undefined: it lists no such tool). */
  async definitionToAccept(name: string, tool: string): Promise<{ definition: ReturnType<typeof toolDefinition>; digest: string; before: McpToolPinRecord | undefined } | undefined> {
    const { listed, pins } = await this.listedNow(name);
    const t = listed.find((x) => x.name === tool);
    if (!t) return undefined;
    const definition = toolDefinition(t);
    return { definition, digest: definitionDigest(definition), before: pins.pin(name, tool) };
  }

  /** An accept committed: this node serves the tool at once; the others read it when the snapshot moves on. */
  async accepted(pin: McpToolPinRecord): Promise<void> {
    (await this.load()).pins.accepted(pin);
  }

  /** Before the HTTP server closes: refuse new /mcp requests and end every session's notification stream. */
  async drain(): Promise<void> {
    this.front.closing = true;
    await this.front.closeStateless();
    await this.loaded?.sessions.close();
  }

  /** At runtime close: sessions, then the upstream clients (stdio servers are stopped). */
  async close(): Promise<void> {
    this.closed = true;
    await this.drain();
    const engine = await this.engine?.catch(() => undefined);
    await engine?.sessions.close();
    engine?.pins.stop();
    await engine?.upstreams.close();
  }
}
