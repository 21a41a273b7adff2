// The usage journal: every usage row is appended to a local file before the answer's last bytes leave, so a crash or a
// kill -9 loses nothing billed. Rows are written once per event-loop turn (no fsync per request; an fsync every
// fsync_ms), read back at start-up for what the database lacks, and cut once the database has them.
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, fdatasync, fdatasyncSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, unlinkSync, writeFileSync, writeSync, close as closeFd } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Gauge, type Registry } from 'prom-client';
import type { GatewayConfig } from '../config.js';
import { type AgentgwError, storeUnavailableError } from '../contract/index.js';
import type { Store, UsageRecord } from '../storage/store.js';
import type { SettleTracker } from './counters/spec.js';

export interface JournalLog {
  warn: (obj: object, msg: string) => void;
  error: (obj: object, msg: string) => void;
}

export interface UsageJournalOptions {
  /** The directory of the journal's files. */
  dir: string;
  /** Names the database the rows belong to: a node replays only segments written for its own database. */
  storeId: string;
  /** Milliseconds between fsyncs of the file being written (0: after every write). Default 50. */
  fsyncMs?: number;
  /** Bytes of rows the database has not taken yet at which the journal is full (see `full`). Default 1 GiB. */
  maxBytes?: number;
  /** A segment is closed and a new one started past this size... */
  segmentBytes?: number;
  /** ...or this age, so that the rows the database took leave the disk soon. */
  segmentMs?: number;
  log?: JournalLog;
  /** The Redis counters: settles of the reservations found with replayed rows, markers forgotten with deleted segments. */
  tracker?: Pick<SettleTracker, 'replaySettle' | 'forget'>;
}

/** A row's reservation, journaled with it while its settle has not reached the counters (see SettleTracker.track). */
export interface JournalLink {
  reservationId: string;
  marker: string | undefined;
}

/** Where a row was journaled: the usage writer hands it back once the database has the row. */
export interface JournalTicket {
  readonly segment: Segment;
  readonly offset: number;
}

interface Segment {
  readonly seq: number;
  readonly path: string;
  /** Open for appending while the segment is written; null once it is sealed. */
  fd: number | null;
  /** Bytes appended (written or still in the turn's buffer). */
  size: number;
  /** Bytes written to the file. */
  written: number;
  /** Rows in it the database does not have yet, and rows whose settles have not reached the counters. */
  outstanding: number;
  /** Markers of the rows' settles (see JournalLink), forgotten once the segment is deleted. */
  markers: string[];
  sealed: boolean;
  deleted: boolean;
  readonly openedAt: number;
  dirty: boolean;
  syncing: Promise<void> | null;
}

export interface ReplayResult {
  /** Rows read from the segments of nodes that stopped without writing them all to the database. */
  rows: number;
  segments: number;
  /** Lines left out: a last line cut short by the crash, or a line that is no usage row. */
  skipped: number;
  /** Rows whose settles had not reached the counters, settled now. */
  settled: number;
  /** Rows the database refused while it took others (kept in usage-journal.rejected.jsonl). */
  rejected: number;
}

const PREFIX = 'usage-journal';
const SEGMENT = /^usage-journal\.([0-9a-f]+)\.([a-z0-9]+)\.(\d+)\.jsonl$/;
const LOCK = /^usage-journal\.([0-9a-f]+)\.([a-z0-9]+)\.lock$/;
/** Rows per insert when replaying. */
const REPLAY_BATCH = 500;
/** Bytes read at a time when rows that did not fit in memory are read back. */
const READ_CHUNK = 4 * 1024 * 1024;
/** Journals open in this process (a lock file with this process's pid is live only when its node is listed here). */
const LIVE_NODES = new Set<string>();

const NOOP_LOG: JournalLog = { warn: () => undefined, error: () => undefined };
const DONE: Promise<void> = Promise.resolve();

export class UsageJournal {
  readonly dir: string;
  readonly nodeId: string;
  readonly maxBytes: number;
  private readonly storeId: string;
  private readonly fsyncMs: number;
  private readonly segmentBytes: number;
  private readonly segmentMs: number;
  private readonly log: JournalLog;
  private readonly lockPath: string;
  private readonly tracker: UsageJournalOptions['tracker'];

  /** Live segments, oldest first; the last one is being written when `active` is set. */
  private segments: Segment[] = [];
  private active: Segment | null = null;
  private nextSeq = 1;
  /** Lines appended this turn, written at its end in one write. */
  private buffer: string[] = [];
  private scheduled = false;
  private waiter: { promise: Promise<void>; resolve: () => void } | null = null;
  private fsyncTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private closing = new Set<Promise<void>>();
  private closed = false;
  /** Where the rows that did not fit in the usage writer's memory start (see spillFrom, readSpilled). */
  private spill: { segment: Segment; offset: number } | null = null;

  private liveBytes = 0;
  private outstandingRows = 0;
  private isFull = false;
  private nearWarned = false;
  private writeError: unknown = null;

  private constructor(opts: UsageJournalOptions) {
    this.dir = resolve(opts.dir);
    this.storeId = opts.storeId;
    this.fsyncMs = opts.fsyncMs ?? 50;
    this.maxBytes = opts.maxBytes ?? 1024 * 1024 * 1024;
    this.segmentBytes = opts.segmentBytes ?? Math.min(8 * 1024 * 1024, Math.max(64 * 1024, Math.floor(this.maxBytes / 16)));
    this.segmentMs = opts.segmentMs ?? 2_000;
    this.log = opts.log ?? NOOP_LOG;
    this.tracker = opts.tracker;
    this.nodeId = `${process.pid.toString(36)}${randomBytes(4).toString('hex')}`;
    this.lockPath = join(this.dir, `${PREFIX}.${this.storeId}.${this.nodeId}.lock`);
  }

  /** Opens a journal of its own in `dir` (other nodes may share the directory: each writes and cuts only its own files). */
  static open(opts: UsageJournalOptions): UsageJournal {
    if (!/^[0-9a-f]+$/.test(opts.storeId)) throw new Error('the journal store id must be hex');
    const j = new UsageJournal(opts);
    mkdirSync(j.dir, { recursive: true });
    writeFileSync(j.lockPath, JSON.stringify({ pid: process.pid, host: hostname(), started_at: new Date().toISOString() }), { flag: 'wx' });
    LIVE_NODES.add(j.nodeId);
    if (j.fsyncMs > 0) {
      j.fsyncTimer = setInterval(() => j.syncActive(), j.fsyncMs);
      j.fsyncTimer.unref();
    }
    return j;
  }

  /** Bytes of journaled rows the database may not have yet. */
  get bytes(): number {
    return this.liveBytes;
  }

  /** Rows journaled that the database has not taken yet. */
  get pendingRows(): number {
    return this.outstandingRows;
  }

  /** At max_mb: requests with a budget are refused (503 store_unavailable) until the database catches up. */
  get full(): boolean {
    return this.isFull;
  }

  /** Rows may be left to the journal alone (it is writing): false after a failed write. */
  get canSpill(): boolean {
    return this.writeError === null;
  }

  /**
   * Appends a row. It reaches the file at the end of this event-loop turn, with every row appended in the turn, in one
   * write: `written()` resolves then. Returns where the row is, to be handed back to `committed` once the database has it.
   */
  append(record: UsageRecord, link?: JournalLink): JournalTicket {
    const json = JSON.stringify(record);
    // The reservation goes with the row (read back by a replay, left out of what the database gets).
    const line = link ? `${json.slice(0, -1)},"${RESERVATION_FIELD}":${JSON.stringify(link.reservationId)}}\n` : `${json}\n`;
    const seg = this.active ?? this.openSegment();
    if (link?.marker !== undefined) seg.markers.push(link.marker);
    const bytes = Buffer.byteLength(line);
    const ticket: JournalTicket = { segment: seg, offset: seg.size };
    seg.size += bytes;
    seg.outstanding++;
    this.liveBytes += bytes;
    this.outstandingRows++;
    this.buffer.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.endOfTurn);
    }
    if (this.liveBytes >= this.maxBytes * 0.8) this.checkLevel();
    return ticket;
  }

  /** Resolves once every row appended so far is in the file (answers wait for it before their last bytes). */
  written(): Promise<void> {
    if (this.buffer.length === 0) return DONE;
    if (!this.waiter) {
      let resolveIt!: () => void;
      const promise = new Promise<void>((r) => (resolveIt = r));
      this.waiter = { promise, resolve: resolveIt };
    }
    return this.waiter.promise;
  }

  private readonly endOfTurn = (): void => {
    this.scheduled = false;
    this.writeNow();
  };

  /** Writes the turn's buffer to the segment being written, in one write. */
  private writeNow(): void {
    const seg = this.active;
    if (this.buffer.length > 0 && seg?.fd != null) {
      const data = Buffer.from(this.buffer.length === 1 ? this.buffer[0]! : this.buffer.join(''));
      try {
        let off = 0;
        while (off < data.length) off += writeSync(seg.fd, data, off, data.length - off, seg.written + off);
        this.buffer = [];
        seg.written = seg.size;
        seg.dirty = true;
        if (this.writeError !== null) {
          this.writeError = null;
          this.log.warn({ dir: this.dir }, 'usage journal writes work again');
          this.checkLevel();
        }
      } catch (err) {
        // A disk that is full or failing: the rows stay in memory (the usage writer keeps them) and are written again
        // later; budgeted requests are refused meanwhile (see full).
        if (this.writeError === null) this.log.error({ err, dir: this.dir }, 'writing the usage journal failed; budgeted requests are refused until it works');
        this.writeError = err;
        this.isFull = true;
        this.retryTimer ??= setTimeout(() => {
          this.retryTimer = undefined;
          this.writeNow();
        }, 1000);
        this.retryTimer.unref();
      }
    }
    // Nobody waits longer than the turn, even when the disk failed: the row is in the usage writer's memory too.
    const w = this.waiter;
    this.waiter = null;
    w?.resolve();
    if (!seg || seg.written !== seg.size) return;
    if (this.fsyncMs === 0 && seg.dirty) this.syncActive();
    if (seg.outstanding === 0) this.cut(seg);
    else if (seg.size >= this.segmentBytes || Date.now() - seg.openedAt >= this.segmentMs) this.seal(seg);
  }

  private openSegment(): Segment {
    const seq = this.nextSeq++;
    const path = join(this.dir, `${PREFIX}.${this.storeId}.${this.nodeId}.${String(seq).padStart(8, '0')}.jsonl`);
    const fd = openSync(path, 'w');
    const seg: Segment = { seq, path, fd, size: 0, written: 0, outstanding: 0, markers: [], sealed: false, deleted: false, openedAt: Date.now(), dirty: false, syncing: null };
    this.segments.push(seg);
    this.active = seg;
    return seg;
  }

  private syncActive(): void {
    const seg = this.active;
    if (!seg || !seg.dirty || seg.syncing || seg.fd === null) return;
    seg.dirty = false;
    const fd = seg.fd;
    seg.syncing = new Promise<void>((done) => fdatasync(fd, () => done())).then(() => {
      seg.syncing = null;
    });
  }

  /** No more rows go to this segment: it is synced and closed, and deleted once the database has all its rows. */
  private seal(seg: Segment): void {
    seg.sealed = true;
    if (this.active === seg) this.active = null;
    const fd = seg.fd;
    seg.fd = null;
    if (fd === null) return;
    const dirty = seg.dirty && !seg.deleted;
    const closing: Promise<void> = (seg.syncing ?? DONE)
      .then(() => (dirty ? new Promise<void>((done) => fdatasync(fd, () => done())) : undefined))
      .then(() => new Promise<void>((done) => closeFd(fd, () => done())))
      .finally(() => this.closing.delete(closing));
    this.closing.add(closing);
  }

  /** Deletes a segment whose rows the database has (the journal is cut). */
  private cut(seg: Segment): void {
    if (seg.deleted) return;
    seg.deleted = true;
    if (!seg.sealed) this.seal(seg);
    try {
      unlinkSync(seg.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn({ err, path: seg.path }, 'could not delete a usage journal segment');
    }
    this.segments.splice(this.segments.indexOf(seg), 1);
    this.liveBytes -= seg.size;
    if (seg.markers.length > 0) this.tracker?.forget(seg.markers);
    this.checkLevel();
  }

  /** The database has these rows (or refused them for good): segments left with none outstanding are deleted. */
  committed(tickets: Iterable<JournalTicket | undefined>): void {
    for (const t of tickets) {
      if (!t) continue;
      const seg = t.segment;
      seg.outstanding--;
      this.outstandingRows--;
      // A segment still being written is cut once its buffered rows are written (see writeNow).
      if (seg.outstanding === 0 && seg.written === seg.size) this.cut(seg);
    }
  }

  /** Keeps the row's segment until unhold() too: its settle has not reached the counters yet. */
  hold(ticket: JournalTicket): void {
    ticket.segment.outstanding++;
  }

  /** The row's settle reached the counters. */
  unhold(ticket: JournalTicket): void {
    const seg = ticket.segment;
    seg.outstanding--;
    if (seg.outstanding === 0 && seg.written === seg.size && !this.closed) this.cut(seg);
  }

  private checkLevel(): void {
    const level = this.liveBytes / this.maxBytes;
    const mb = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;
    const info = { dir: this.dir, journal_mb: mb(this.liveBytes), max_mb: mb(this.maxBytes), pending_rows: this.outstandingRows };
    if (!this.isFull && this.liveBytes >= this.maxBytes) {
      this.isFull = true;
      this.log.error(info, 'usage journal is full: the database is not taking usage rows; requests with a budget get 503 store_unavailable until it catches up');
    } else if (this.isFull && this.writeError === null && level < 0.9) {
      this.isFull = false;
      this.log.warn(info, 'usage journal below its cap again: requests with a budget are admitted');
    }
    if (!this.nearWarned && level >= 0.8 && !this.isFull) {
      this.nearWarned = true;
      this.log.warn(info, 'usage journal nears its cap (journal.max_mb): the database is not taking usage rows');
    } else if (this.nearWarned && level < 0.5) this.nearWarned = false;
  }

  /** Rows from this one on are left to the journal alone: `readSpilled` reads them back when the writer has room. */
  spillFrom(ticket: JournalTicket): void {
    this.spill ??= { segment: ticket.segment, offset: ticket.offset };
  }

  /**
   * Reads back up to `maxRows` rows that were left to the journal alone, in order. `done` when none is left: every row
   * appended from now on goes to the writer's memory again.
   */
  readSpilled(maxRows: number): { rows: Array<{ record: UsageRecord; ticket: JournalTicket }>; done: boolean } {
    const rows: Array<{ record: UsageRecord; ticket: JournalTicket }> = [];
    if (!this.spill) return { rows, done: true };
    // Everything appended so far goes to the file first, so that reading up to its end reads every spilled row.
    this.writeNow();
    if (this.buffer.length > 0) return { rows, done: false };
    while (this.spill && rows.length < maxRows) {
      const segment: Segment = this.spill.segment;
      const offset: number = this.spill.offset;
      if (offset >= segment.written) {
        const next: Segment | undefined = this.segments.find((s) => s.seq > segment.seq);
        this.spill = next ? { segment: next, offset: 0 } : null;
        continue;
      }
      const length = Math.min(READ_CHUNK, segment.written - offset);
      const buf = Buffer.allocUnsafe(length);
      const fd = openSync(segment.path, 'r');
      let got = 0;
      try {
        while (got < length) {
          const n = readSync(fd, buf, got, length - got, offset + got);
          if (n === 0) break;
          got += n;
        }
      } finally {
        closeSync(fd);
      }
      let pos = 0;
      while (rows.length < maxRows) {
        const nl = buf.indexOf(10, pos);
        if (nl === -1 || nl >= got) break;
        const ticket: JournalTicket = { segment, offset: offset + pos };
        const record = parseRow(buf.toString('utf8', pos, nl))?.record ?? null;
        pos = nl + 1;
        if (record) rows.push({ record, ticket });
        else {
          this.log.error({ path: segment.path, offset: ticket.offset }, 'an unreadable usage journal line was left out');
          this.committed([ticket]);
        }
      }
      if (pos === 0 && rows.length < maxRows) {
        // A line longer than a chunk: read it whole.
        this.log.error({ path: segment.path, offset }, 'a usage journal line longer than 4 MiB was left out');
        const end = readFileSync(segment.path).indexOf(10, offset);
        this.spill = { segment, offset: end === -1 ? segment.written : end + 1 };
        continue;
      }
      this.spill = { segment, offset: offset + pos };
    }
    return { rows, done: this.spill === null };
  }

  /** Writes what is buffered, syncs it, closes the files, deletes those the database has all rows of, and unlocks. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.fsyncTimer);
    clearTimeout(this.retryTimer);
    this.scheduled = false;
    this.writeNow();
    const active = this.active;
    if (active?.fd != null && active.dirty) {
      await active.syncing;
      try {
        fdatasyncSync(active.fd);
      } catch {
        // Closing anyway: the rows are in the file for any crash short of the machine's.
      }
      active.dirty = false;
    }
    if (active) this.seal(active);
    await Promise.all([...this.closing]);
    for (const seg of [...this.segments]) if (seg.outstanding === 0 && seg.written === seg.size) this.cut(seg);
    if (this.segments.length > 0) {
      this.log.warn({ dir: this.dir, rows: this.outstandingRows }, 'usage rows the database did not take stay in the journal; the next start writes them');
    }
    // Unlocked, what is left is replayed by the next node that starts on this database.
    try {
      unlinkSync(this.lockPath);
    } catch {
      // Already gone.
    }
    LIVE_NODES.delete(this.nodeId);
  }

  /** Stops as a killed process stops: files and lock stay as they are, for the next node to replay (tests). */
  abandon(): void {
    this.closed = true;
    clearInterval(this.fsyncTimer);
    clearTimeout(this.retryTimer);
    this.buffer = [];
    for (const seg of this.segments) {
      if (seg.fd !== null) closeSync(seg.fd);
      seg.fd = null;
    }
    this.active = null;
    LIVE_NODES.delete(this.nodeId);
  }

  /**
   * Writes to the database the rows of segments that nodes left behind (crashed, killed, or stopped while the database
   * was away), then deletes them. Rows the database already has are skipped by the insert (ON CONFLICT DO NOTHING).
   */
  async replay(store: Store): Promise<ReplayResult> {
    const result: ReplayResult = { rows: 0, segments: 0, skipped: 0, rejected: 0, settled: 0 };
    const orphans = orphanSegments(this.dir, this.storeId, this.nodeId);
    for (const [node, files] of orphans) {
      const unsettled: Array<{ reservationId: string; cost: number }> = [];
      for (const file of files) {
        const path = join(this.dir, file);
        let text: string;
        try {
          text = readFileSync(path, 'utf8');
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // another node replayed it meanwhile
          throw err;
        }
        const { rows, skipped, links } = parseSegment(text);
        result.skipped += skipped;
        for (let i = 0; i < rows.length; i += REPLAY_BATCH) result.rejected += await insertReplayed(store, rows.slice(i, i + REPLAY_BATCH), this.dir, this.log);
        result.rows += rows.length;
        result.segments++;
        unsettled.push(...links);
      }
      // Rows whose settles may not have reached the counters: settled now (a settle that did reach them does nothing).
      result.settled += await this.replaySettles(unsettled);
      // Every row of the node is in the database now: its files go.
      for (const file of files) removeQuietly(join(this.dir, file));
      removeQuietly(join(this.dir, `${PREFIX}.${this.storeId}.${node}.lock`));
    }
    if (result.skipped > 0) this.log.warn({ dir: this.dir, skipped: result.skipped }, 'usage journal lines cut short by a crash were left out (their answers had not completed)');
    return result;
  }

  /** Settles the reservations found with replayed rows; a counter store that fails is reported, and the rest go on. */
  private async replaySettles(links: ReadonlyArray<{ reservationId: string; cost: number }>): Promise<number> {
    const tracker = this.tracker;
    if (!tracker || links.length === 0) return 0;
    let failed = 0;
    let lastErr: unknown;
    for (const { reservationId, cost } of links) {
      await tracker.replaySettle(reservationId, cost).catch((err: unknown) => {
        failed++;
        lastErr = err;
      });
    }
    if (failed > 0) this.log.warn({ err: lastErr, failed }, 'settling replayed usage rows in the counters failed; their spend is raised to the usage rows once the counters answer');
    return links.length - failed;
  }

  /** The files of this node's live segments, oldest first. */
  get segmentPaths(): string[] {
    return this.segments.map((s) => s.path);
  }
}

/** The member of a journal line that carries the row's reservation (never a column of the database). */
const RESERVATION_FIELD = 'agentgw_reservation';

/** A line of the journal as a usage row and its reservation, or null when it is none (a line cut short by a crash). */
function parseRow(line: string): { record: UsageRecord; reservationId: string | undefined } | null {
  if (line.length === 0) return null;
  try {
    const r = JSON.parse(line) as UsageRecord & { [RESERVATION_FIELD]?: unknown };
    if (!r || typeof r !== 'object' || typeof r.request_id !== 'string' || typeof r.agent_id !== 'string' || typeof r.started_at !== 'string') return null;
    const { [RESERVATION_FIELD]: reservation, ...record } = r;
    return { record, reservationId: typeof reservation === 'string' ? reservation : undefined };
  } catch {
    return null;
  }
}

/** A segment's rows, and the reservations journaled with them; a last line without its newline counts only when it is a whole row. */
export function parseSegment(text: string): { rows: UsageRecord[]; skipped: number; links: Array<{ reservationId: string; cost: number }> } {
  const rows: UsageRecord[] = [];
  const links: Array<{ reservationId: string; cost: number }> = [];
  let skipped = 0;
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const line = text.slice(pos, nl === -1 ? text.length : nl);
    pos = nl === -1 ? text.length : nl + 1;
    if (line.length === 0) continue;
    const r = parseRow(line);
    if (!r) {
      skipped++;
      continue;
    }
    rows.push(r.record);
    if (r.reservationId !== undefined) links.push({ reservationId: r.reservationId, cost: r.record.cost });
  }
  return { rows, skipped, links };
}

/** Segments of nodes that are gone, written for this database: node id -> file names in order. */
function orphanSegments(dir: string, storeId: string, self: string): Map<string, string[]> {
  const files = readdirSync(dir);
  const locks = new Set<string>();
  const byNode = new Map<string, string[]>();
  for (const f of files) {
    const l = LOCK.exec(f);
    if (l && l[1] === storeId) locks.add(l[2]!);
    const m = SEGMENT.exec(f);
    if (!m || m[1] !== storeId || m[2] === self) continue;
    let list = byNode.get(m[2]!);
    if (!list) byNode.set(m[2]!, (list = []));
    list.push(f);
  }
  // Nodes without their files are left out, so their locks are cleared too.
  for (const node of locks) if (node !== self && !byNode.has(node) && !nodeAlive(dir, storeId, node)) removeQuietly(join(dir, `${PREFIX}.${storeId}.${node}.lock`));
  for (const node of [...byNode.keys()]) if (locks.has(node) && nodeAlive(dir, storeId, node)) byNode.delete(node);
  for (const list of byNode.values()) list.sort();
  return new Map([...byNode.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Whether the node of a lock file is running: a process of this machine with its pid (in this process, a journal still open). */
function nodeAlive(dir: string, storeId: string, node: string): boolean {
  let lock: { pid?: number; host?: string };
  try {
    lock = JSON.parse(readFileSync(join(dir, `${PREFIX}.${storeId}.${node}.lock`), 'utf8')) as typeof lock;
  } catch {
    return false;
  }
  if (typeof lock.pid !== 'number') return false;
  // Another machine's node (a shared directory): only it knows; its files are left alone.
  if (lock.host !== undefined && lock.host !== hostname()) return true;
  if (lock.pid === process.pid) return LIVE_NODES.has(node);
  try {
    process.kill(lock.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already (another node replayed it).
  }
}

/**
 * Inserts replayed rows: the batch at once, else row by row. A row refused while others go in is kept aside in
 * usage-journal.rejected.jsonl and reported; when no row goes in, the database is failing and start-up stops.
 */
async function insertReplayed(store: Store, rows: UsageRecord[], dir: string, log: JournalLog): Promise<number> {
  try {
    await store.insertUsage(rows);
    return 0;
  } catch (batchErr) {
    const refused: Array<{ record: UsageRecord; err: unknown }> = [];
    for (const r of rows) {
      try {
        await store.insertUsage([r]);
      } catch (err) {
        refused.push({ record: r, err });
      }
    }
    if (refused.length === rows.length) throw new Error(`replaying the usage journal failed: the database refused every row (${(batchErr as Error).message})`, { cause: batchErr });
    for (const { record, err } of refused) {
      log.error({ err, request_id: record.request_id }, 'a usage row of the journal the database refused was left out (kept in usage-journal.rejected.jsonl)');
      writeFileSync(join(dir, `${PREFIX}.rejected.jsonl`), `${JSON.stringify(record)}\n`, { flag: 'a' });
    }
    return refused.length;
  }
}

/** The journal's directory: `journal.path`, else beside the SQLite file, else ./data/ (PostgreSQL). */
export function journalDir(config: Pick<GatewayConfig, 'journal' | 'storage'>): string {
  if (config.journal.path) return resolve(config.journal.path);
  if (config.storage.kind === 'sqlite') {
    if (config.storage.path === ':memory:') return join(tmpdir(), `agentgw-journal-${process.pid}`);
    return dirname(resolve(config.storage.path));
  }
  return resolve('data');
}

/**
 * The database's journal id, made at its first start: journals of several databases may share a directory (tests,
 * ./data/), and each node replays only its own database's rows.
 */
export async function journalStoreId(store: Pick<Store, 'initSetting'>): Promise<string> {
  return (await store.initSetting('usage_journal_id', randomUUID().replace(/-/g, ''))).replace(/[^0-9a-f]/g, '').slice(0, 16) || '0';
}

/**
 * Opens this node's journal and replays what stopped nodes left behind, before anything reads spend from the database:
 * counters seeded afterwards include the replayed rows.
 */
export async function openUsageJournal(
  config: Pick<GatewayConfig, 'journal' | 'storage'>,
  store: Store,
  log?: JournalLog & { info?: (obj: object, msg: string) => void },
  tracker?: UsageJournalOptions['tracker'],
): Promise<UsageJournal> {
  const journal = UsageJournal.open({
    dir: journalDir(config),
    storeId: await journalStoreId(store),
    fsyncMs: config.journal.fsync_ms,
    maxBytes: Math.round(config.journal.max_mb * 1024 * 1024),
    log,
    tracker,
  });
  try {
    const replayed = await journal.replay(store);
    const msg = 'usage journal replayed: rows a stopped node had not written to the database are in it now';
    if (replayed.rows > 0 && log) {
      if (log.info) log.info({ dir: journal.dir, ...replayed }, msg);
      else log.warn({ dir: journal.dir, ...replayed }, msg);
    }
  } catch (e) {
    await journal.close();
    throw e;
  }
  return journal;
}

/** The refusal of a request with a budget while the journal is full (CONTRACT: 503 store_unavailable with Retry-After). */
export function journalFullError(): AgentgwError {
  return storeUnavailableError('The gateway cannot record spend right now (the database is not taking usage rows and the usage journal is full)');
}

/** Prometheus gauges of the journal, read at each scrape: its size and cap, the rows the database lacks, whether it is full. */
export function registerJournalMetrics(registry: Registry, journal: UsageJournal, writer?: { queued: number }): void {
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge('agentgw_usage_journal_bytes', 'Bytes of usage rows in the journal that the database may not have yet.', () => journal.bytes);
  gauge('agentgw_usage_journal_max_bytes', 'The journal cap (journal.max_mb) in bytes: at it, requests with a budget get 503 store_unavailable.', () => journal.maxBytes);
  gauge('agentgw_usage_journal_pending_rows', 'Usage rows journaled that the database has not taken yet.', () => journal.pendingRows);
  gauge('agentgw_usage_journal_full', '1 while the journal is at its cap (requests with a budget are refused), else 0.', () => (journal.full ? 1 : 0));
  if (writer) gauge('agentgw_usage_queue_rows', 'Usage rows held in memory for the database (bounded; the rest wait in the journal).', () => writer.queued);
}
