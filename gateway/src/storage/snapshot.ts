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
  /** Verified agent keys of this generation, by a SHA-256 fingerprint of the key (never the key itself). */
  private verified = new Map<string, StoredAgent>();
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
    this.verified = new Map();
  }

  /** Changes whenever agents, policies or maintenance may have changed. */
  get generation(): number {
    return this.gen;
  }

  /** The agent a key fingerprint was verified for in this generation (revoked or rotated keys drop out on reload). */
  verifiedAgent(fingerprint: string): StoredAgent | undefined {
    return this.verified.get(fingerprint);
  }

  rememberVerified(fingerprint: string, agent: StoredAgent): void {
    // Bounded: a flood of distinct valid keys only costs the HMAC again.
    if (this.verified.size >= 100_000) this.verified.clear();
    this.verified.set(fingerprint, agent);
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
