import { randomBytes } from 'node:crypto';
import type { Maintenance, Policy, Route } from '../contract/index.js';
import type { Store, StoredAgent } from './store.js';

const VERSION_KEY = 'config_version';
const MAINTENANCE_KEY = 'maintenance';
/** Longest interval between snapshot polls while they fail (the database unreachable). */
const POLL_BACKOFF_MAX_MS = 2000;
/** Each node says which version it has applied under this prefix, with when it last said so. */
const NODE_KEY_PREFIX = 'node:';
/** A node that has said nothing for this long is taken to be gone: an admin write no longer waits for it. */
const NODE_STALE_MS = 3000;
/** How often a node repeats what it holds, so the others know it is alive. */
const NODE_HEARTBEAT_MS = 1000;
/** The longest an admin write waits for the other nodes to apply it. */
const APPLY_WAIT_MS = 3000;
/**
 * Stopped traces held in memory, so a request's trace is checked without the database: the stops of the last 30 days,
 * at most the newest 100,000 (a few MB). A trace that comes back after that is no longer refused; agents' traces last
 * minutes to hours, and their ids (session ids, UUIDs) are not reused.
 */
export const TRACE_STOP_WINDOW_MS = 30 * 86_400_000;
export const TRACE_STOP_CAP = 100_000;

/** How a stopped trace is keyed: its tenant, since trace ids come from clients (as admission's trace keys). */
export function stoppedTraceKey(tenantId: string, traceId: string): string {
  return `${tenantId}:${traceId}`;
}

/**
 * The data plane's in-memory read model of agents, policies, routes, maintenance and stopped traces, so no request waits
 * on the database.
 * A write reloads this node at once and waits until every live node has applied it (each polls the version and says
 * which one it holds), so a revoked key or a suspended agent stops working everywhere before the admin call returns.
 */
export class Snapshot {
  private byKeyHash = new Map<string, StoredAgent>();
  private byId = new Map<string, StoredAgent>();
  private policies = new Map<string, Policy>();
  /** Keys of stopped traces (stoppedTraceKey). */
  private stops: ReadonlySet<string> = new Set<string>();
  private maintenanceState: Maintenance = { enabled: false, message: null, since: null };
  /** Routes written through the admin interface, by alias. */
  private routeList: readonly Route[] = [];
  private readonly routeListeners: Array<(routes: readonly Route[]) => void> = [];
  private version = '';
  /** Bumped on every applied load: caches derived from agents and policies are valid for one generation. */
  private gen = 0;
  private timer: NodeJS.Timeout | undefined;
  private pollMs = 500;
  private stopped = false;
  /** Polls that failed in a row (the database unreachable): the next ones wait longer, and the first to succeed reloads. */
  private failedPolls = 0;
  /** This process among the nodes sharing the database. */
  private readonly nodeKey = `${NODE_KEY_PREFIX}${randomBytes(8).toString('hex')}`;
  private announced = { version: '', at: 0 };
  private reloading: Promise<void> | undefined;
  /** Loads run concurrently (a poll and a write); only a load started later than the applied one may replace it. */
  private loadsStarted = 0;
  private loadApplied = 0;

  constructor(private readonly store: Store) {}

  async start(pollMs = 100): Promise<void> {
    this.pollMs = pollMs;
    await this.reload();
    await this.announce();
    this.schedule(pollMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // A node that leaves says so: writes stop waiting for it at once.
    await this.store.deleteSetting(this.nodeKey).catch(() => undefined);
  }

  /** Tells the other nodes which version this one holds: when it changed, and as a heartbeat. */
  private async announce(): Promise<void> {
    const now = Date.now();
    if (this.announced.version === this.version && now - this.announced.at < NODE_HEARTBEAT_MS) return;
    const version = this.version;
    await this.store.setSetting(this.nodeKey, JSON.stringify({ version, at: now }));
    this.announced = { version, at: now };
  }

  /** Waits until every node heard from lately holds `version` or a later one (versions start with their time). */
  private async awaitNodes(version: string): Promise<void> {
    const deadline = Date.now() + APPLY_WAIT_MS;
    for (;;) {
      const now = Date.now();
      const nodes = await this.store.settingsWithPrefix(NODE_KEY_PREFIX);
      const behind = nodes.filter(({ key, value }) => {
        if (key === this.nodeKey) return false;
        const n = parseNode(value);
        return n !== null && now - n.at < NODE_STALE_MS && n.version < version;
      });
      if (behind.length === 0 || now >= deadline) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /**
   * One poll at a time, the next one `ms` after the last ended: a database that does not answer never piles polls up.
   * While the database is unreachable the data plane serves from what it holds; polls back off to at most
   * POLL_BACKOFF_MAX_MS apart, so a node notices PostgreSQL is back (and reloads) within about that.
   */
  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll().then(
        () => {
          this.failedPolls = 0;
          this.schedule(this.pollMs);
        },
        () => {
          this.failedPolls++;
          this.schedule(Math.min(POLL_BACKOFF_MAX_MS, this.pollMs * 2 ** Math.min(this.failedPolls - 1, 8)));
        },
      );
    }, ms);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    const v = (await this.store.getSetting(VERSION_KEY)) ?? '';
    // After polls failed (the database was away, perhaps restored from elsewhere), everything is read again.
    if (v !== this.version || this.failedPolls > 0) await this.reload();
    await this.announce();
  }

  /** Reloads everything; concurrent callers share one reload. */
  reload(): Promise<void> {
    this.reloading ??= this.load().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private async load(): Promise<void> {
    const seq = ++this.loadsStarted;
    const version = (await this.store.getSetting(VERSION_KEY)) ?? '';
    const [agents, policies, maintenance, stops, routes] = await Promise.all([
      this.store.allAgents(),
      this.store.allPolicies(),
      this.store.getSetting(MAINTENANCE_KEY),
      this.store.recentTraceStops(new Date(Date.now() - TRACE_STOP_WINDOW_MS).toISOString(), TRACE_STOP_CAP),
      this.store.allRoutes(),
    ]);
    if (seq < this.loadApplied) return;
    this.loadApplied = seq;
    this.byKeyHash = new Map(agents.map((a) => [a.key_hash, a]));
    this.byId = new Map(agents.flatMap((a) => [[a.id, a], [`${a.tenant_id}/${a.name}`, a]]));
    this.policies = new Map(policies.map((p) => [p.id, p]));
    this.stops = new Set(stops.map((t) => stoppedTraceKey(t.tenant_id, t.trace_id)));
    this.maintenanceState = maintenance ? JSON.parse(maintenance) : MAINTENANCE_OFF;
    this.routeList = routes;
    // The router takes the routes before the generation changes, so request plans of the new one see them.
    for (const listen of this.routeListeners) listen(routes);
    this.version = version;
    this.gen++;
  }

  /** Changes whenever agents, policies, maintenance or stopped traces may have changed. */
  get generation(): number {
    return this.gen;
  }

  /** Agents of keys verified in this generation, by a SHA-256 fingerprint of the key (never the key itself). */
  readonly verifiedKeys: GenerationCache<StoredAgent> = this.cache(100_000);

  /** A bounded map of values derived from this snapshot, emptied whenever it reloads. */
  cache<V>(limit: number): GenerationCache<V> {
    return new GenerationCache<V>(this, limit);
  }

  /** Call after every admin write: tells other nodes, then reloads this one before the response goes out. */
  async changed(): Promise<void> {
    // The time first (13 digits until the year 2286): versions compare in the order they were written.
    const v = `${Date.now()}-${randomBytes(4).toString('hex')}`;
    await this.store.setSetting(VERSION_KEY, v);
    await this.load();
    await this.announce();
    await this.awaitNodes(v);
  }

  async setMaintenance(m: Maintenance): Promise<void> {
    await writeMaintenance(this.store, m);
    await this.changed();
  }

  agentByKeyHash(hash: string): StoredAgent | undefined {
    return this.byKeyHash.get(hash);
  }
  /** The agent of an id, or of `<tenant_id>/<name>` (an OAuth access token's agent claim names it so). */
  agentByIdOrName(idOrName: string): StoredAgent | undefined {
    return this.byId.get(idOrName);
  }
  policy(id: string | null | undefined): Policy | undefined {
    return id ? this.policies.get(id) : undefined;
  }
  get maintenance(): Maintenance {
    return this.maintenanceState;
  }
  /** Routes written through the admin interface, as last loaded. */
  get routes(): readonly Route[] {
    return this.routeList;
  }
  /** Calls `listen` with the routes now held and again on every load (before request plans of the new generation). */
  onRoutes(listen: (routes: readonly Route[]) => void): void {
    this.routeListeners.push(listen);
    listen(this.routeList);
  }
  /** Stopped traces by stoppedTraceKey: a set lookup per request, no database. */
  get stoppedTraces(): ReadonlySet<string> {
    return this.stops;
  }
  isTraceStopped(tenantId: string, traceId: string): boolean {
    return this.stops.has(stoppedTraceKey(tenantId, traceId));
  }
}

/**
 * Values derived from agents and policies (a verified key, a request plan), valid until the snapshot reloads. Bounded:
 * past `limit` entries it starts over, so a flood of distinct keys only costs recomputing them.
 */
export class GenerationCache<V> {
  private generation = -1;
  private entries = new Map<string, V>();

  constructor(
    private readonly snapshot: Snapshot,
    private readonly limit: number,
  ) {}

  private current(): Map<string, V> {
    if (this.generation !== this.snapshot.generation) {
      this.generation = this.snapshot.generation;
      this.entries = new Map();
    }
    return this.entries;
  }

  get(key: string): V | undefined {
    return this.current().get(key);
  }

  set(key: string, value: V): void {
    const entries = this.current();
    if (entries.size >= this.limit) entries.clear();
    entries.set(key, value);
  }
}

const MAINTENANCE_OFF: Maintenance = { enabled: false, message: null, since: null };

/** The stored maintenance state (through a write's transaction, to read what it changes). */
export async function readMaintenance(store: Store): Promise<Maintenance> {
  const stored = await store.getSetting(MAINTENANCE_KEY);
  return stored ? JSON.parse(stored) : MAINTENANCE_OFF;
}

/** Stores the maintenance state; call Snapshot.changed() once it is committed. */
export async function writeMaintenance(store: Store, m: Maintenance): Promise<void> {
  await store.setSetting(MAINTENANCE_KEY, JSON.stringify(m));
}

function parseNode(value: string): { version: string; at: number } | null {
  try {
    const n = JSON.parse(value) as { version?: unknown; at?: unknown };
    return typeof n.version === 'string' && typeof n.at === 'number' ? { version: n.version, at: n.at } : null;
  } catch {
    return null;
  }
}
