// The reservations one node has made and not yet settled in Redis: each node knows its own, so after Redis loses its
// state it can put their holds back, and its usage journal can keep a row until the row's settle has reached Redis.
import type { Ticket } from './redis-keys.js';

export interface Held {
  readonly ticket: Ticket;
  /** The epoch id its hold is in now ('' = it holds nothing in Redis: no limit applied). */
  asserted: string;
  /** Its usage row is in the journal, which keeps the row until this reservation's settle has reached Redis. */
  tracked: boolean;
  trackedAt: number;
  /**
   * Its row was written to the database before a rebuild of the counters read the rows: its cost is counted there, so
   * its settle only ends it (nothing is sent to Redis).
   */
  covered: boolean;
  /** The units of the settle (0: a release) asked for and not yet in Redis. */
  finishing: number | undefined;
  /** That settle failed (Redis away or timed out): it is tried again once Redis answers. */
  failed: boolean;
  /** A settle of it is on its way to Redis. */
  busy: boolean;
  /** Resolves once its settle has reached Redis, or was given up (see HeldReservations.drop). */
  readonly settled: Promise<void>;
}

interface Entry extends Held {
  /** When it was made, by this process's clock (tickets may carry an injected one). */
  addedAt: number;
  resolve(): void;
}

/** A row whose settle never came (a path that records without settling) is let go from the journal after this long. */
const TRACKED_WAIT_MS = 60_000;

export class HeldReservations {
  private readonly byNonce = new Map<string, Entry>();

  add(ticket: Ticket): Held {
    let resolve!: () => void;
    const settled = new Promise<void>((r) => (resolve = r));
    const entry: Entry = { addedAt: Date.now(), ticket, asserted: ticket.epoch, tracked: false, trackedAt: 0, covered: false, finishing: undefined, failed: false, busy: false, settled, resolve };
    this.byNonce.set(ticket.nonce, entry);
    return entry;
  }

  get(nonce: string): Held | undefined {
    return this.byNonce.get(nonce);
  }

  /** Done with it: its settle reached Redis, or its cost is counted otherwise, or it is given up. */
  drop(held: Held | undefined): void {
    if (!held) return;
    const entry = held as Entry;
    if (this.byNonce.get(entry.ticket.nonce) === entry) this.byNonce.delete(entry.ticket.nonce);
    entry.resolve();
  }

  /** Lets the journal keep the row of a covered reservation no longer (its cost is in the database's rows). */
  release(held: Held): void {
    (held as Entry).resolve();
  }

  values(): IterableIterator<Held> {
    return this.byNonce.values();
  }

  get size(): number {
    return this.byNonce.size;
  }

  /**
   * Drops what no settle will come for: reservations older than `maxAgeMs` that hold a row of nobody's (a code path that
   * neither settled nor released), and tracked rows waited on for TRACKED_WAIT_MS without a settle being asked.
   */
  sweep(now: number, maxAgeMs: number): number {
    let dropped = 0;
    for (const e of this.byNonce.values()) {
      const stale = e.finishing === undefined && (e.tracked ? now - e.trackedAt > TRACKED_WAIT_MS : now - e.addedAt > maxAgeMs);
      if (stale) {
        this.drop(e);
        dropped++;
      }
    }
    return dropped;
  }
}
