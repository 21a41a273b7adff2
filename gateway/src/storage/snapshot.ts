import type { Maintenance, Policy } from '../contract/index.js';
import type { Store, StoredAgent } from './store.js';

const VERSION_KEY = 'config_version';
const MAINTENANCE_KEY = 'maintenance';
/** Longest interval between snapshot polls while they fail (the database unreachable). */
const POLL_BACKOFF_MAX_MS = 2000;

/**
 * The data plane's in-memory read model of agents, policies and maintenance, so no request waits on the database.
 * A write on this node reloads it at once; other nodes notice the bumped version within one poll interval.
 */
export class Snapshot {
  private byKeyHash = new Map<string, StoredAgent>();
  private policies = new Map<string, Policy>();
  private maintenanceState: Maintenance = { enabled: false, message: null, since: null };
  private version = '';
  /** Bumped on every applied load: caches derived from agents and policies are valid for one generation. */
  private gen = 0;
  private timer: NodeJS.Timeout | undefined;
  private pollMs = 500;
  private stopped = false;
  /** Polls that failed in a row (the database unreachable): the next ones wait longer, and the first to succeed reloads. */
  private failedPolls = 0;
  private reloading: Promise<void> | undefined;
  /** Loads run concurrently (a poll and a write); only a load started later than the applied one may replace it. */
  private loadsStarted = 0;
  private loadApplied = 0;

  constructor(private readonly store: Store) {}

  async start(pollMs = 500): Promise<void> {
    this.pollMs = pollMs;
    await this.reload();
    this.schedule(pollMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
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
    const [agents, policies, maintenance] = await Promise.all([
      this.store.allAgents(),
      this.store.allPolicies(),
      this.store.getSetting(MAINTENANCE_KEY),
    ]);
    if (seq < this.loadApplied) return;
    this.loadApplied = seq;
    this.byKeyHash = new Map(agents.map((a) => [a.key_hash, a]));
    this.policies = new Map(policies.map((p) => [p.id, p]));
    this.maintenanceState = maintenance ? JSON.parse(maintenance) : { enabled: false, message: null, since: null };
    this.version = version;
    this.gen++;
  }

  /** Changes whenever agents, policies or maintenance may have changed. */
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
    const v = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
    await this.store.setSetting(VERSION_KEY, v);
    await this.load();
  }

  async setMaintenance(m: Maintenance): Promise<void> {
    await this.store.setSetting(MAINTENANCE_KEY, JSON.stringify(m));
    await this.changed();
  }

  agentByKeyHash(hash: string): StoredAgent | undefined {
    return this.byKeyHash.get(hash);
  }
  policy(id: string | null | undefined): Policy | undefined {
    return id ? this.policies.get(id) : undefined;
  }
  get maintenance(): Maintenance {
    return this.maintenanceState;
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
