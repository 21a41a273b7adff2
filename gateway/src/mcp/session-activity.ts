// When each MCP session was last used, shared by every node through the database (a session may be served by any node),
// so that a session unused for mcp.session_idle_s ends everywhere: a request with its id is then a 404, as the MCP spec
// answers an unknown session, and the client initialises a new one. A node writes a session's time at most once per
// WRITE_SHARE of the idle time, and reads it only for a session it has not seen used within the idle time.
import type { Store } from '../storage/store.js';

export type ActivityStore = Pick<Store, 'getSetting' | 'setSetting' | 'deleteSetting' | 'settingsWithPrefix'>;

const KEY_PREFIX = 'mcp_session_seen:';
/** A node shares a session's use at most this often, as a share of the idle time (and at least once a minute). */
const WRITE_SHARE = 1 / 20;
/** Times older than the idle time are deleted from the database this often (by every node; deleting twice is harmless). */
const PURGE_EVERY_MS = 10 * 60_000;

interface Seen {
  /** Last use on this node. */
  at: number;
  /** Last time this node wrote the session's use to the database. */
  written: number;
  /** That write, while it is under way. */
  writing?: Promise<void>;
}

export class SessionActivity {
  /** Sessions used on this node within the idle time. */
  private readonly seen = new Map<string, Seen>();
  /** How much later a use on one node may reach the database: a session ends only once idle that much longer. */
  readonly writeEveryMs: number;
  private lastPurge: number;

  constructor(
    private readonly store: ActivityStore,
    readonly idleMs: number,
    private readonly log?: { warn: (obj: object, msg: string) => void },
    private readonly now: () => number = Date.now,
  ) {
    this.writeEveryMs = Math.min(60_000, Math.max(1, Math.floor(idleMs * WRITE_SHARE)));
    this.lastPurge = now();
  }

  /** A new session: its time is in the database before its id is handed out, so every node knows it. */
  async started(id: string): Promise<void> {
    const now = this.now();
    await this.store.setSetting(KEY_PREFIX + id, String(now));
    this.seen.set(id, { at: now, written: now });
  }

  /** A request with this session id: true (and the use recorded) while the session is live; false once it has ended. */
  async use(id: string): Promise<boolean> {
    const now = this.now();
    const mine = this.seen.get(id);
    if (mine && now - mine.at <= this.idleMs) {
      mine.at = now;
      if (now - mine.written >= this.writeEveryMs) this.share(id, mine, now);
      return true;
    }
    // Not used here within the idle time: another node may have used it since.
    const stored = await this.store.getSetting(KEY_PREFIX + id);
    const last = stored === undefined ? Number.NaN : Number(stored);
    if (!(now - last <= this.idleMs + this.writeEveryMs)) {
      this.seen.delete(id);
      if (stored !== undefined) void this.store.deleteSetting(KEY_PREFIX + id).catch(() => undefined);
      return false;
    }
    const entry = { at: now, written: last };
    this.seen.set(id, entry);
    if (now - last >= this.writeEveryMs) this.share(id, entry, now);
    return true;
  }

  /** A session in use without requests (its notification stream is open): kept live on every node. */
  keep(id: string): void {
    const now = this.now();
    const mine = this.seen.get(id) ?? { at: now, written: 0 };
    mine.at = now;
    this.seen.set(id, mine);
    if (now - mine.written >= this.writeEveryMs) this.share(id, mine, now);
  }

  /** The client ended the session (DELETE): it ends on every node. */
  async ended(id: string): Promise<void> {
    const writing = this.seen.get(id)?.writing;
    this.seen.delete(id);
    // A use being written now would otherwise bring the session back after the delete.
    await writing;
    await this.store.deleteSetting(KEY_PREFIX + id);
  }

  /** Forgets what this node saw of idle sessions and, now and then, deletes the times of ended ones from the database. */
  sweep(): void {
    const now = this.now();
    for (const [id, s] of this.seen) if (now - s.at > this.idleMs) this.seen.delete(id);
    if (now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    void this.purge(now).catch((err: unknown) => this.log?.warn({ err }, 'deleting ended MCP sessions failed; will retry'));
  }

  private async purge(now: number): Promise<void> {
    for (const { key, value } of await this.store.settingsWithPrefix(KEY_PREFIX)) {
      if (now - Number(value) > this.idleMs + this.writeEveryMs) await this.store.deleteSetting(key);
    }
  }

  private share(id: string, entry: Seen, now: number): void {
    entry.written = now;
    const writing = this.store.setSetting(KEY_PREFIX + id, String(now)).catch((err: unknown) => {
      // The next use tries again; meanwhile other nodes may see the session as older than it is.
      entry.written = 0;
      this.log?.warn({ err }, 'recording the use of an MCP session failed');
    });
    entry.writing = writing;
    void writing.finally(() => {
      if (entry.writing === writing) entry.writing = undefined;
    });
  }
}
