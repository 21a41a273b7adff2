import type { Store, UsageRecord } from '../storage/store.js';
import { isStoreUnavailableError } from '../storage/store-errors.js';
import type { SettleTracker, UsageGate } from './counters/spec.js';
import type { JournalTicket, UsageJournal } from './usage-journal.js';

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
  /**
   * The usage journal: every record is appended to it before it is queued, and cut once the store has it. With a
   * journal the queue in memory is bounded (maxQueuedRows): records past it stay in the journal alone and are read back.
   */
  journal?: UsageJournal;
  /** Records kept in memory at most, with a journal (default 10,000). */
  maxQueuedRows?: number;
  /** Characters of captured bodies kept in memory at most, with a journal (default 64 Mi). */
  maxQueuedBodyChars?: number;
  /**
   * The Redis counters, with a journal: a row whose settle has not reached them is journaled with its reservation and
   * kept in the journal until it has, so that a crash in between leaves it to the next start to settle.
   */
  tracker?: Pick<SettleTracker, 'track'>;
}

/** A queued record and where the journal has it. */
interface Queued {
  record: UsageRecord;
  ticket: JournalTicket | undefined;
}

const DONE: Promise<void> = Promise.resolve();

/** Failed attempts at the same batch after which its rows are written one at a time (see isolate). */
const ISOLATE_AFTER_FAILURES = 3;
/** Rows refused in a row at the start of a row-by-row pass before it checks whether the store takes anything at all. */
const PROBE_AFTER_REFUSALS = 3;

/**
 * Writes usage records off the hot path in small batches. A failed batch stays queued and is retried;
 * `close()` writes everything still queued, so a SIGTERM loses nothing that was answered.
 */
export class UsageWriter implements UsageGate {
  private queue: Queued[] = [];
  /** While the counters are rebuilt: rows still to write before later ones are held back (see hold); -1 when not held. */
  private holdCutoff = -1;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly flushMs: number;
  private readonly batchBodyChars: number;
  /** Characters of the captured bodies in the queue. */
  private queuedBodyChars = 0;
  /** Failed inserts in a row. */
  private failures = 0;
  private readonly journal: UsageJournal | undefined;
  private readonly maxQueuedRows: number;
  private readonly maxQueuedBodyChars: number;
  /** Records in the journal alone (the queue was full when they came): read back as the queue empties. */
  private spilled = 0;

  constructor(
    private readonly store: Store,
    private readonly opts: UsageWriterOptions = {},
  ) {
    this.flushMs = opts.flushMs ?? 250;
    // Bodies are captured up to 64 KiB each: a batch of them is bounded by size, not only by rows.
    this.batchBodyChars = opts.batchBodyChars ?? 4 * 1024 * 1024;
    this.journal = opts.journal;
    this.maxQueuedRows = opts.maxQueuedRows ?? 10_000;
    this.maxQueuedBodyChars = opts.maxQueuedBodyChars ?? 64 * 1024 * 1024;
  }

  private get batchSize(): number {
    return this.opts.batchSize ?? this.store.usageBatchRows ?? 200;
  }

  /**
   * Queues a record for the store, and journals it. Resolves once the record is in the journal's file (at the end of
   * this event-loop turn): an answer's last bytes wait for it, so a crash after them loses no billed row.
   */
  add(record: UsageRecord): Promise<void> {
    const journal = this.journal;
    const link = journal ? this.opts.tracker?.track(record.request_id) : undefined;
    const ticket = journal?.append(record, link);
    if (ticket && link) {
      journal!.hold(ticket);
      void link.settled.then(() => journal!.unhold(ticket));
    }
    if (ticket && (this.spilled > 0 || ((this.queue.length >= this.maxQueuedRows || this.queuedBodyChars >= this.maxQueuedBodyChars) && journal!.canSpill))) {
      // The queue is full (the store is away): the record stays in the journal alone until the queue has room again.
      if (this.spilled++ === 0) journal!.spillFrom(ticket);
      this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
      return journal!.written();
    }
    this.queue.push({ record, ticket });
    if (record.body) this.queuedBodyChars += record.body.length;
    if (this.queue.length >= this.batchSize || this.queuedBodyChars >= this.batchBodyChars) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    return journal ? journal.written() : DONE;
  }

  /** Records not in the store yet (in memory, or in the journal alone). */
  get pending(): number {
    return this.queue.length + this.spilled;
  }

  /** Records in memory (bounded with a journal). */
  get queued(): number {
    return this.queue.length;
  }

  /** The journal is at its cap (journal.max_mb): requests with a budget are refused until the store catches up. */
  get full(): boolean {
    return this.journal?.full ?? false;
  }

  /** Reads back records left to the journal alone while the queue has room for them. */
  private refill(): void {
    if (this.spilled === 0 || this.queue.length > this.maxQueuedRows / 2 || this.queuedBodyChars > this.maxQueuedBodyChars / 2) return;
    const { rows, done } = this.journal!.readSpilled(this.maxQueuedRows - this.queue.length);
    for (const q of rows) {
      this.queue.push(q);
      if (q.record.body) this.queuedBodyChars += q.record.body.length;
    }
    this.spilled = done ? 0 : Math.max(1, this.spilled - rows.length);
  }

  /** Writes what is queued now (while held, up to where the hold began); concurrent callers share one pass. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.flushing ??= this.drain().finally(() => {
      this.flushing = undefined;
      if (this.pending > 0 && this.holdCutoff !== 0) this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    });
    return this.flushing;
  }

  /**
   * While the Redis counters are rebuilt from the usage rows: writes the rows queued so far, and holds back those queued
   * from now on until resume(), so the rebuild reads exactly the rows whose costs no later settle adds. Resolves once the
   * rows queued so far are in the database.
   */
  async hold(): Promise<void> {
    this.holdCutoff = this.queue.length + this.spilled;
    while (this.holdCutoff > 0) {
      await this.flush();
      if (this.holdCutoff > 0) await new Promise((r) => setTimeout(r, 20));
    }
  }

  resume(): void {
    if (this.holdCutoff === -1) return;
    this.holdCutoff = -1;
    if (this.pending > 0) void this.flush();
  }

  /** Rows written: counted off the hold's cutoff. */
  private wrote(rows: number): void {
    if (this.holdCutoff > 0) this.holdCutoff = Math.max(0, this.holdCutoff - rows);
  }

  private async drain(): Promise<void> {
    for (this.refill(); this.queue.length > 0 && this.holdCutoff !== 0; this.refill()) {
      // A row goes to the database only once it is in the journal's file (the end of the turn it came in): else a crash
      // in between would leave a row in the database that the journal never had, and so no settle for the counters.
      await this.journal?.written();
      const { batch, bodyChars } = this.nextBatch(this.holdCutoff > 0 ? this.holdCutoff : Number.POSITIVE_INFINITY);
      try {
        await this.store.insertUsage(batch.map((q) => q.record));
        this.failures = 0;
        this.queue.splice(0, batch.length);
        this.queuedBodyChars -= bodyChars;
        this.wrote(batch.length);
        this.journal?.committed(batch.map((q) => q.ticket));
      } catch (err) {
        this.opts.onError?.(err);
        // The database is away: every row waits for it (the row-by-row pass is for rows it refuses).
        if (isStoreUnavailableError(err)) return;
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
  private async isolate(batch: Queued[]): Promise<boolean> {
    const refused: Array<{ index: number; record: UsageRecord }> = [];
    let written = 0;
    let settled = 0;
    const insertOne = (record: UsageRecord) => this.store.insertUsage([record]).then(() => true, (err: unknown) => err);
    for (let i = 0; i < batch.length; i++) {
      // Nothing went in yet: unless the batch's last row does, the store itself is failing, and a row-by-row pass over
      // the rest would only add failed calls. (A row that goes in here is skipped as already written when its turn comes.)
      if (written === 0 && refused.length === PROBE_AFTER_REFUSALS && i < batch.length - 1 && (await insertOne(batch[batch.length - 1]!.record)) !== true) return false;
      const record = batch[i]!.record;
      const outcome = await insertOne(record);
      // The database went away mid-pass: stop; rows already written are sent again later and skipped as present.
      if (outcome !== true && isStoreUnavailableError(outcome)) return false;
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
      if (again !== true && isStoreUnavailableError(again)) return false;
      if (again !== true) this.opts.onDropped?.(record, again);
    }
    const done = this.queue.splice(0, settled);
    this.wrote(done.length);
    for (const q of done) this.queuedBodyChars -= q.record.body?.length ?? 0;
    this.journal?.committed(done.map((q) => q.ticket));
    return true;
  }

  /** The rows at the head of the queue that make one insert: batchSize of them, fewer once their bodies reach batchBodyChars. */
  private nextBatch(limit: number): { batch: Queued[]; bodyChars: number } {
    const max = Math.min(this.batchSize, this.queue.length, limit);
    let bodyChars = 0;
    let n = 0;
    while (n < max && (n === 0 || bodyChars < this.batchBodyChars)) bodyChars += this.queue[n++]!.record.body?.length ?? 0;
    return { batch: this.queue.slice(0, n), bodyChars };
  }

  /**
   * Flushes until empty, retrying a few times over a couple of seconds before giving up, then closes the journal: what
   * the store did not take stays in it for the next start.
   */
  async close(): Promise<void> {
    this.resume();
    for (let attempt = 0; attempt < 20 && this.pending > 0; attempt++) {
      await this.flush();
      if (this.pending > 0) await new Promise((r) => setTimeout(r, 100));
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.journal?.close();
  }
}
