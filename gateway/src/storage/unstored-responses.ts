import { isStoreUnavailableError } from './store-errors.js';
import type { StoredResponse } from './store.js';

/** Responses remembered at most while their marks wait for the database (the oldest are forgotten first). */
const MAX_PENDING = 10_000;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

/** Why a response could not be stored, as the 404 of a later read says it. */
export function notStoredReason(err: unknown): string {
  return isStoreUnavailableError(err)
    ? 'the database was unreachable or did not answer in time when it was answered'
    : 'the database refused to store it';
}

/**
 * Responses this node answered but could not store (the database was down). Each is remembered as a mark (the
 * response's ids and owner, no conversation) that this node answers reads with at once, and that is written to the
 * database once it answers again, so that every node answers a read of that id with a 404 saying it was not stored,
 * instead of one saying nothing. A response that reached the database after all (a write that timed out, then
 * committed when the server ran again) is replaced by its mark: reads say what its answer said.
 */
export class UnstoredResponses {
  private readonly pending = new Map<string, StoredResponse>();
  private timer: NodeJS.Timeout | undefined;
  private retryMs = FIRST_RETRY_MS;
  private writing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly writeMark: (mark: StoredResponse) => Promise<void>) {}

  add(r: StoredResponse, err: unknown): void {
    const mark: StoredResponse = { ...r, input: '[]', response: '{}', not_stored: notStoredReason(err) };
    this.pending.set(r.id, mark);
    if (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    this.schedule();
  }

  /** The mark of a response this node could not store and has not yet marked in the database. */
  get(id: string): StoredResponse | undefined {
    return this.pending.get(id);
  }

  get size(): number {
    return this.pending.size;
  }

  private schedule(): void {
    if (this.closed || this.timer || this.writing || this.pending.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.retryMs);
    this.timer.unref();
  }

  /** Writes the marks, oldest first; stops at the first failure and tries again later (backing off to 30 s). */
  flush(): Promise<void> {
    this.writing ??= (async () => {
      try {
        for (const mark of [...this.pending.values()]) {
          await this.writeMark(mark);
          this.pending.delete(mark.id);
        }
        this.retryMs = FIRST_RETRY_MS;
      } catch {
        this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
      } finally {
        this.writing = undefined;
        this.schedule();
      }
    })();
    return this.writing;
  }

  /** One last attempt (each write bounded by the database deadline); marks that still fail are forgotten. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size > 0) await this.flush();
  }
}
