import type { Store, UsageRecord } from '../storage/store.js';

export interface UsageWriterOptions {
  /** Rows written per insert. */
  batchSize?: number;
  /** Longest time a record waits in memory before it is written. */
  flushMs?: number;
  onError?: (err: unknown) => void;
}

/**
 * Writes usage records off the hot path in small batches. A failed batch stays queued and is retried;
 * `close()` writes everything still queued, so a SIGTERM loses nothing that was answered.
 */
export class UsageWriter {
  private queue: UsageRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly batchSize: number;
  private readonly flushMs: number;

  constructor(
    private readonly store: Store,
    private readonly opts: UsageWriterOptions = {},
  ) {
    this.batchSize = opts.batchSize ?? 200;
    this.flushMs = opts.flushMs ?? 250;
  }

  add(record: UsageRecord): void {
    this.queue.push(record);
    if (this.queue.length >= this.batchSize) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Writes what is queued now; concurrent callers share one pass. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.flushing ??= this.drain().finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0) this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    });
    return this.flushing;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, this.batchSize);
      try {
        await this.store.insertUsage(batch);
        this.queue.splice(0, batch.length);
      } catch (err) {
        this.opts.onError?.(err);
        return;
      }
    }
  }

  /** Flushes until empty, retrying a few times over a couple of seconds before giving up. */
  async close(): Promise<void> {
    for (let attempt = 0; attempt < 20 && this.queue.length > 0; attempt++) {
      await this.flush();
      if (this.queue.length > 0) await new Promise((r) => setTimeout(r, 100));
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
