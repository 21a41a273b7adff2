import type { Store, UsageRecord } from '../storage/store.js';

export interface UsageWriterOptions {
  /** Rows written per insert; by default what the store writes best (Store.usageBatchRows, asked each time), else 200. */
  batchSize?: number;
  /** Characters of captured request bodies per insert: a batch whose bodies reach this is sent without waiting for more rows. */
  batchBodyChars?: number;
  /** Longest time a record waits in memory before it is written. */
  flushMs?: number;
  onError?: (err: unknown) => void;
  /** A record the store refused while it took others: it is left out, and reported here. */
  onDropped?: (record: UsageRecord, err: unknown) => void;
}

/** Failed attempts at the same batch after which its rows are written one at a time (see isolate). */
const ISOLATE_AFTER_FAILURES = 3;
/** Rows refused in a row at the start of a row-by-row pass before it checks whether the store takes anything at all. */
const PROBE_AFTER_REFUSALS = 3;

/**
 * Writes usage records off the hot path in small batches. A failed batch stays queued and is retried;
 * `close()` writes everything still queued, so a SIGTERM loses nothing that was answered.
 */
export class UsageWriter {
  private queue: UsageRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly flushMs: number;
  private readonly batchBodyChars: number;
  /** Characters of the captured bodies in the queue. */
  private queuedBodyChars = 0;
  /** Failed inserts in a row. */
  private failures = 0;

  constructor(
    private readonly store: Store,
    private readonly opts: UsageWriterOptions = {},
  ) {
    this.flushMs = opts.flushMs ?? 250;
    // Bodies are captured up to 64 KiB each: a batch of them is bounded by size, not only by rows.
    this.batchBodyChars = opts.batchBodyChars ?? 4 * 1024 * 1024;
  }

  private get batchSize(): number {
    return this.opts.batchSize ?? this.store.usageBatchRows ?? 200;
  }

  add(record: UsageRecord): void {
    this.queue.push(record);
    if (record.body) this.queuedBodyChars += record.body.length;
    if (this.queue.length >= this.batchSize || this.queuedBodyChars >= this.batchBodyChars) void this.flush();
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
      const { batch, bodyChars } = this.nextBatch();
      try {
        await this.store.insertUsage(batch);
        this.failures = 0;
        this.queue.splice(0, batch.length);
        this.queuedBodyChars -= bodyChars;
      } catch (err) {
        this.opts.onError?.(err);
        if (++this.failures < ISOLATE_AFTER_FAILURES || batch.length < 2) return;
        if (!(await this.isolate(batch))) return;
      }
    }
  }

  /**
   * Writes a batch that keeps failing one row at a time, so that a row the store will never take (a value its database
   * refuses) cannot hold back every row queued after it. A row refused while a later row of the same pass went in, and
   * refused once more after the pass, is dropped and reported: the store was working on both sides of it. Rows refused
   * after the last one that went in stay queued, as the store itself may have stopped working. False when no row went in.
   */
  private async isolate(batch: UsageRecord[]): Promise<boolean> {
    const refused: Array<{ index: number; record: UsageRecord }> = [];
    let written = 0;
    let settled = 0;
    const insertOne = (record: UsageRecord) => this.store.insertUsage([record]).then(() => true, (err: unknown) => err);
    for (let i = 0; i < batch.length; i++) {
      // Nothing went in yet: unless the batch's last row does, the store itself is failing, and a row-by-row pass over
      // the rest would only add failed calls. (A row that goes in here is skipped as already written when its turn comes.)
      if (written === 0 && refused.length === PROBE_AFTER_REFUSALS && i < batch.length - 1 && (await insertOne(batch[batch.length - 1]!)) !== true) return false;
      const record = batch[i]!;
      const outcome = await insertOne(record);
      if (outcome === true) {
        written++;
        settled = written + refused.length;
      } else refused.push({ index: i, record });
    }
    if (written === 0) return false;
    this.failures = 0;
    // A row refused before the last one that went in is tried once more (a passing failure goes in now); refused again, it is left out.
    for (const { index, record } of refused) {
      if (index >= settled) continue;
      const again = await insertOne(record);
      if (again !== true) this.opts.onDropped?.(record, again);
    }
    for (const r of this.queue.splice(0, settled)) this.queuedBodyChars -= r.body?.length ?? 0;
    return true;
  }

  /** The rows at the head of the queue that make one insert: batchSize of them, fewer once their bodies reach batchBodyChars. */
  private nextBatch(): { batch: UsageRecord[]; bodyChars: number } {
    const max = Math.min(this.batchSize, this.queue.length);
    let bodyChars = 0;
    let n = 0;
    while (n < max && (n === 0 || bodyChars < this.batchBodyChars)) bodyChars += this.queue[n++]!.body?.length ?? 0;
    return { batch: this.queue.slice(0, n), bodyChars };
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
