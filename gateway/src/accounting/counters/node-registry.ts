// The gateway nodes sharing the Redis counters, as the database knows them: after Redis loses its state, budgeted
// requests wait until each live node has put its holds back (a database, unlike Redis, forgets nobody).
import { randomBytes } from 'node:crypto';
import type { Store } from '../../storage/store.js';
import type { NodeRegistry } from './spec.js';

const KEY_PREFIX = 'counters_node:';
/** How often a node says it is alive. */
const HEARTBEAT_MS = 1_000;
/**
 * A node not heard from for this long is taken to be gone (it crashed: its requests went with it), so a rebuild does
 * not wait for it. A node that is alive but cannot write to the database for this long is not waited for either; it
 * puts its holds back as soon as it sees the new epoch (within a quarter of a second), only later.
 */
export const NODE_STALE_MS = 5_000;

export type RegistryStore = Pick<Store, 'setSetting' | 'settingsWithPrefix' | 'deleteSetting'>;

/** The nodes sharing the database and the Redis keys (`keyPrefix`), each with a heartbeat in the settings. */
export class StoreNodeRegistry implements NodeRegistry {
  readonly self = randomBytes(8).toString('hex');
  private timer: NodeJS.Timeout | undefined;
  private beating = false;
  private readonly prefix: string;

  constructor(
    private readonly store: RegistryStore,
    keyPrefix: string,
    private readonly staleMs = NODE_STALE_MS,
  ) {
    this.prefix = `${KEY_PREFIX}${keyPrefix}|`;
  }

  /** Says this node is here (before it reserves anything), then again every second. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat().catch(() => undefined), HEARTBEAT_MS);
    this.timer.unref();
  }

  async live(): Promise<string[]> {
    const now = Date.now();
    const ids = new Set([this.self]);
    for (const { key, value } of await this.store.settingsWithPrefix(this.prefix)) {
      const id = key.slice(this.prefix.length);
      // Another key prefix that starts with this one is another set of counters.
      if (!/^[0-9a-f]{16}$/.test(id)) continue;
      if (now - Number(value) < this.staleMs) ids.add(id);
      // Gone long ago: its entry goes (any node may do it).
      else if (now - Number(value) > 60 * this.staleMs) void this.store.deleteSetting(key).catch(() => undefined);
    }
    return [...ids];
  }

  /** A node that leaves says so: a rebuild stops waiting for it at once. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.store.deleteSetting(this.prefix + this.self).catch(() => undefined);
  }

  /** One heartbeat at a time: a database that hangs does not pile them up. */
  private async beat(): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    try {
      await this.store.setSetting(this.prefix + this.self, String(Date.now()));
    } finally {
      this.beating = false;
    }
  }
}

/** This node alone: what counters without a registry wait for. */
export function soleNode(): NodeRegistry {
  const self = randomBytes(8).toString('hex');
  return { self, live: async () => [self] };
}
