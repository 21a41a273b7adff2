// What /mcp runs on, built at its first use (or at start when servers are configured): the MCP SDK costs about 90 ms
// and 11 MB to load, which a gateway that serves no MCP should not pay.
import type { DataPlane } from '../data-plane/data-plane.js';
import { Federation } from './federation.js';
import type { McpServersConfig } from './mcp-config.js';
import type { McpMetrics } from './mcp-metrics.js';
import type { SessionActivity } from './session-activity.js';
import { SessionBus } from './session-bus.js';
import type { SessionIds } from './session-ids.js';
import { type SessionLimits, Sessions } from './sessions.js';
import { type PinStore, ToolPins } from './tool-pins.js';
import type { UpstreamLog } from './upstream.js';
import { Upstreams } from './upstreams.js';

export class McpEngine {
  readonly upstreams: Upstreams;
  readonly federation: Federation;
  readonly sessions: Sessions;
  readonly pins: ToolPins;

  constructor(
    servers: McpServersConfig,
    dp: DataPlane,
    metrics: McpMetrics,
    ids: SessionIds,
    activity: SessionActivity,
    limits: SessionLimits,
    pinStore: PinStore,
    log?: UpstreamLog,
    /** Redis, shared by the nodes (counters: redis): a session's messages reach the node that needs them. */
    redis?: { url: string; prefix: string },
  ) {
    this.upstreams = new Upstreams(servers, log);
    this.pins = new ToolPins(pinStore, dp.snapshot, (server) => servers[server]?.pin ?? 'changes', () => this.upstreams.version++);
    this.upstreams.onListed = (server, tools) => this.pins.listed(server, tools);
    this.federation = new Federation(dp, this.upstreams, metrics, this.pins);
    this.sessions = new Sessions(ids, this.federation, dp.snapshot, activity, limits, log, new SessionBus(redis, log, (text) => dp.hasher.hash(`mcp-node\u0000${text}`)));
  }
}
