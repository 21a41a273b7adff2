import type { Maintenance, Policy } from '../contract/index.js';
import type { Store, StoredAgent } from './store.js';

const VERSION_KEY = 'config_version';
const MAINTENANCE_KEY = 'maintenance';

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
  private reloading: Promise<void> | undefined;
  /** Loads run concurrently (a poll and a write); only a load started later than the applied one may replace it. */
  private loadsStarted = 0;
  private loadApplied = 0;

  constructor(private readonly store: Store) {}

  async start(pollMs = 500): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => {
      void this.poll().catch(() => undefined);
    }, pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    const v = (await this.store.getSetting(VERSION_KEY)) ?? '';
    if (v !== this.version) await this.reload();
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
