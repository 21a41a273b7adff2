// What the Redis counters do when Redis loses its state (restarted without persistence, flushed): no budgeted request
// passes until every live node has put back the holds of its requests in flight and the spend is rebuilt from the
// usage rows, so neither the holds nor the rows of those requests are forgotten.
import { randomUUID } from 'node:crypto';
import { dayKeyEnd, monthKeyEnd, utcDayKey, utcMonthKey } from '../budget-window.js';
import type { HeldReservations } from './held-reservations.js';
import { holdMember, parseEpoch, type RedisKeys, type Ticket, type WindowKeys } from './redis-keys.js';
import type { ScriptedRedis } from './redis-scripts.js';
import { CountersUnavailableError, type CounterLog, type NodeRegistry, type SeedRows, type UsageGate } from './spec.js';
import { toUnits, WINDOW_GRACE_MS } from './units.js';

/** The epoch key lives this long after the last reservation (longer than any budget window): see RESERVE. */
export const EPOCH_TTL_MS = 40 * 24 * 60 * 60_000;
/** A node seeding an epoch must be done within this; after it another node seeds it. */
const SEED_MARKER_TTL_MS = 30_000;
/** Rows are held back from the database at most this long while a rebuild waits (then written: counted twice at worst). */
const MAX_USAGE_HOLD_MS = 5_000;
/** How long a node waits for its queued usage rows to reach the database before it says it has re-asserted. */
const USAGE_WRITE_WAIT_MS = 2_000;
/** How often a node waiting for others checks which of them are gone. */
const GONE_CHECK_MS = 500;
/** Reads of the usage rows to bring back settles given up on, at most this often. */
const RECONCILE_INTERVAL_MS = 10_000;

export interface RecoveryContext {
  readonly redis: ScriptedRedis;
  readonly keys: RedisKeys;
  readonly held: HeldReservations;
  readonly nodes: NodeRegistry;
  readonly holdTtl: number;
  readonly recordTtl: number;
  readonly traceTtl: number;
  readonly log: CounterLog | undefined;
  /** Runs one Redis call through the breaker (CountersUnavailableError on any failure). */
  call<T>(op: () => Promise<T>): Promise<T>;
  windows(t: Ticket): WindowKeys[];
  usage(): UsageGate | undefined;
  loadSeed(): Promise<SeedRows>;
  /** Settles that failed while Redis was away are tried again (called once the epoch is open). */
  retryFailedSettles(): void;
}

/**
 * Keeps this node in step with the epoch in Redis. An epoch key, written once the counters are seeded, is checked inside
 * every reservation; a Redis that lost its state has none, and the first node to notice starts a new one, gated:
 * 1. GATE: the new epoch lists the live nodes (the node registry, in the database) and admits nothing yet.
 * 2. Each node, when it sees it (every syncMs, or at once when a reservation or settle finds it): writes its queued usage
 *    rows to the database and holds back later ones; puts back the hold of each request it has in flight (REASSERT);
 *    marks the reservations whose rows it just wrote as counted by those rows (MARK); and says so (ACK). Nodes not
 *    heard from lately (crashed) stop being waited for.
 * 3. Once no node is waited for, one node reads the usage rows, seeds the spend from them and opens the epoch (SEEDED);
 *    every node then writes its held rows, and settles what finished meanwhile against the holds put back.
 * A cost is thus counted by its row (written before the read) or by its settle (after the seed), never both, never neither.
 */
export class EpochKeeper {
  /** The epoch this node saw last. */
  private known: { id: string; seeded: boolean } | undefined;
  /** Every hold this node made is in this epoch ('' until it has looked). */
  private assertedIn = '';
  /** A reservation came back under another epoch than assertedIn: look again. */
  private dirty = false;
  private syncing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private usageHeld: { gate: UsageGate; timer: NodeJS.Timeout } | undefined;
  private lastGoneCheck = 0;
  private lastSyncError = 0;
  private lastReconcile = 0;
  /** Settles given up on (too many failed while Redis was away): their costs are only in the usage rows. */
  lostWrites = 0;
  /** Rows given to seed() at start, used to seed when there is no loadSeed (tests). */
  startRows: SeedRows | undefined;
  private stopped = false;

  constructor(private readonly ctx: RecoveryContext) {}

  /** Looks every `ms` (while the client is connected): a flush that nobody's request finds is found this way. */
  start(ms: number, connected: () => boolean): void {
    this.timer = setInterval(() => {
      if (this.stopped || !connected()) return;
      this.sync().catch((err: unknown) => {
        if (Date.now() - this.lastSyncError < 30_000) return;
        this.lastSyncError = Date.now();
        this.ctx.log?.warn({ err }, 'checking the Redis counters epoch failed');
      });
    }, ms);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.resumeUsage();
  }

  /** The id of the open epoch this node saw last, if it saw one. */
  get openEpoch(): string | undefined {
    return this.known?.seeded && !this.dirty ? this.known.id : undefined;
  }

  /** A reservation was made under `epochId`: if this node's other holds are in another one, they are put back now. */
  noteReserved(epochId: string): void {
    if (epochId === this.assertedIn) return;
    this.dirty = true;
    void this.sync().catch(() => undefined);
  }

  /** One look at a time on this node; concurrent callers share it. */
  sync(): Promise<void> {
    this.syncing ??= this.syncOnce().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  /** Waits (at most waitMs) for an open epoch, taking this node's part in a rebuild; CountersUnavailableError after that. */
  async awaitOpen(waitMs: number): Promise<void> {
    const deadline = Date.now() + waitMs;
    const unavailable = () => new CountersUnavailableError('the counters are being rebuilt after Redis lost its state');
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(unavailable()), Math.max(0, deadline - Date.now()));
        timer.unref();
      });
      try {
        await Promise.race([this.sync(), late]);
      } finally {
        clearTimeout(timer);
      }
      if (this.openEpoch !== undefined) return;
      if (Date.now() >= deadline) throw unavailable();
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * At start-up: beside a Redis that kept its state, fills only windows it has no record of (other nodes may already have
   * counted newer spend); beside one that has none (new, or restarted without persistence), takes part in its rebuild.
   */
  async seed(rows: SeedRows, waitMs: number): Promise<void> {
    this.startRows = rows;
    const [value] = await this.state();
    if (value !== null && parseEpoch(value).seeded) {
      await this.writeSeed(rows, 'fill');
      await this.sync();
      return;
    }
    await this.awaitOpen(waitMs);
  }

  private state(): Promise<[string | null, number, number]> {
    const { redis, keys, nodes } = this.ctx;
    return this.ctx.call(() => redis.agwState(keys.epoch, keys.waiting, nodes.self));
  }

  private async syncOnce(): Promise<void> {
    try {
      for (let step = 0; step < 8 && !this.stopped; step++) {
        const [value, waiting, amWaiting] = await this.state();
        if (value === null) {
          await this.openGate();
          continue;
        }
        const { id, seeded } = parseEpoch(value);
        this.known = { id, seeded };
        if (seeded) {
          this.resumeUsage();
          // This node was not waited for (it was not heard from when the epoch started): its holds go back now.
          if (this.assertedIn !== id || this.dirty) {
            if (!(await this.reassert(id, new Set()))) continue;
            this.assertedIn = id;
            this.dirty = false;
          }
          this.ctx.retryFailedSettles();
          await this.reconcileLostWrites();
          return;
        }
        if (amWaiting === 1 || this.assertedIn !== id || this.dirty) {
          if (!(await this.acknowledge(id))) return;
          continue;
        }
        if (waiting > 0) {
          await this.dropGone(id);
          return;
        }
        if (!(await this.seedGate(id))) return;
      }
    } catch (err) {
      // The database (node registry, usage rows) failing is, for the requests waiting here, the counters failing.
      throw err instanceof CountersUnavailableError ? err : new CountersUnavailableError('rebuilding the counters failed', { cause: err });
    }
  }

  /** Redis has no epoch: a new one, gated until the live nodes have re-asserted and the spend is seeded. */
  private async openGate(): Promise<void> {
    const ids = await this.ctx.nodes.live();
    const id = randomUUID().slice(0, 8);
    const { redis, keys } = this.ctx;
    const made = await this.ctx.call(() => redis.agwGate(keys.epoch, keys.waiting, `${id}|0`, EPOCH_TTL_MS, ...ids));
    if (made === 1) {
      this.ctx.log?.warn({ epoch: id, nodes: ids.length }, 'Redis counters have lost their state (no epoch): budgeted requests wait until every node has put back its holds and the spend is rebuilt from the usage rows');
    }
  }

  /**
   * This node's part: its queued rows to the database (later ones held), its holds back, the reservations those rows
   * count marked as counted, then ACK. False when it cannot now (the database did not take the rows in time).
   */
  private async acknowledge(id: string): Promise<boolean> {
    const { held, redis, keys, nodes } = this.ctx;
    const written = this.holdUsage();
    // Requests over whose settles have not reached Redis (their rows journaled, or their settle failed while Redis was
    // away: their rows follow it): those rows are written now, so the seed counts their costs.
    const covered = [...held.values()].filter((h) => (h.tracked || h.failed) && !h.covered && h.finishing !== 0);
    const skip = new Set(covered);
    if (!(await this.reassert(id, skip))) return true;
    try {
      await written;
    } catch (err) {
      this.ctx.log?.warn({ err }, 'the usage rows could not be written for the rebuild of the counters; trying again');
      return false;
    }
    if (covered.length > 0) {
      const records = covered.map((h) => keys.record(h.ticket.nonce));
      await this.ctx.call(() => redis.agwMark(records.length, ...records, this.ctx.recordTtl));
      for (const h of covered) {
        h.covered = true;
        held.release(h);
      }
    }
    const left = await this.ctx.call(() => redis.agwAck(keys.epoch, keys.waiting, id, nodes.self));
    if (left !== -1) {
      this.assertedIn = id;
      this.dirty = false;
    }
    return true;
  }

  /** Puts back each hold this node has in flight (except `skip`) under epoch `id`; false when the epoch changed meanwhile. */
  private async reassert(id: string, skip: ReadonlySet<unknown>): Promise<boolean> {
    const { held, redis, keys } = this.ctx;
    for (const h of [...held.values()]) {
      const t = h.ticket;
      if (t.epoch === '' || h.asserted === id || h.covered || h.finishing === 0 || skip.has(h)) continue;
      const windows = this.ctx.windows(t);
      const k = [keys.epoch, keys.record(t.nonce), ...windows.flatMap((w) => [w.spend, w.holds])];
      const args = [id, holdMember(t), t.amount, t.createdAt + this.ctx.holdTtl, this.ctx.recordTtl, ...windows.map((w) => w.ttl)];
      const done = await this.ctx.call(() => redis.agwReassert(k.length, ...k, ...args));
      if (done === -1) return false;
      h.asserted = id;
    }
    return true;
  }

  /** No node is waited for: this one seeds the spend from the usage rows and opens the epoch, unless another one does. */
  private async seedGate(id: string): Promise<boolean> {
    const { redis, keys } = this.ctx;
    const marker = keys.seeding(id);
    if ((await this.ctx.call(() => redis.set(marker, '1', 'PX', SEED_MARKER_TTL_MS, 'NX'))) !== 'OK') return false;
    const started = Date.now();
    try {
      const rows = await this.ctx.loadSeed();
      const readEnd = Date.now();
      await this.writeSeed(rows, 'max');
      const done = await this.ctx.call(() => redis.agwSeeded(keys.epoch, keys.waiting, marker, id, `${id}|${readEnd}`));
      if (done === 1) {
        this.lostWrites = 0;
        this.ctx.log?.warn(
          { epoch: id, agents: rows.agents.length, traces: rows.traces.length, tenants: rows.tenants?.length ?? 0, ms: Date.now() - started },
          'Redis counters rebuilt: holds put back by every node, spend from the usage rows',
        );
      }
      return true;
    } catch (err) {
      await this.ctx.call(() => redis.del(marker)).catch(() => undefined);
      throw err;
    }
  }

  /** Nodes not heard from lately (crashed: their requests went with them) are no longer waited for. */
  private async dropGone(id: string): Promise<void> {
    if (Date.now() - this.lastGoneCheck < GONE_CHECK_MS) return;
    this.lastGoneCheck = Date.now();
    const { redis, keys } = this.ctx;
    const [live, members] = await Promise.all([this.ctx.nodes.live(), this.ctx.call(() => redis.smembers(keys.waiting))]);
    const alive = new Set(live);
    const gone = members.filter((m) => !alive.has(m));
    if (gone.length === 0) return;
    await this.ctx.call(() => redis.agwAck(keys.epoch, keys.waiting, id, ...gone));
    this.ctx.log?.warn({ epoch: id, nodes: gone }, 'nodes not heard from lately are no longer waited for by the rebuild of the Redis counters');
  }

  /** Writes the rows queued so far; holds later ones back until the epoch opens (or MAX_USAGE_HOLD_MS passed). */
  private holdUsage(): Promise<void> {
    const gate = this.ctx.usage();
    if (!gate) return Promise.resolve();
    if (!this.usageHeld) {
      const timer = setTimeout(() => this.resumeUsage(), MAX_USAGE_HOLD_MS);
      timer.unref();
      this.usageHeld = { gate, timer };
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the usage rows were not written within ${USAGE_WRITE_WAIT_MS} ms`)), USAGE_WRITE_WAIT_MS);
      timer.unref();
    });
    return Promise.race([gate.hold(), late]).finally(() => clearTimeout(timer));
  }

  private resumeUsage(): void {
    const held = this.usageHeld;
    if (!held) return;
    this.usageHeld = undefined;
    clearTimeout(held.timer);
    held.gate.resume();
  }

  /** Settles given up on while Redis was away: spend raised to the usage rows (the 'max' seed never counts anything twice). */
  private async reconcileLostWrites(): Promise<void> {
    if (this.lostWrites === 0 || Date.now() - this.lastReconcile < RECONCILE_INTERVAL_MS) return;
    this.lostWrites = 0;
    this.lastReconcile = Date.now();
    await this.writeSeed(await this.ctx.loadSeed(), 'max');
  }

  /** 'fill': only windows Redis has no record of; 'max': raised to the rows' spend where it is below. */
  async writeSeed(rows: SeedRows, mode: 'fill' | 'max'): Promise<void> {
    const { redis, keys, traceTtl } = this.ctx;
    const now = rows.now.getTime();
    const day = utcDayKey(rows.now);
    const month = utcMonthKey(rows.now);
    const dayTtl = dayKeyEnd(day) + WINDOW_GRACE_MS - now;
    const monthTtl = monthKeyEnd(month) + WINDOW_GRACE_MS - now;
    const writes: Array<[string, number, number]> = [];
    for (const a of rows.agents) {
      writes.push([keys.spend('d', day, a.agentId), toUnits(a.day), dayTtl]);
      writes.push([keys.spend('m', month, a.agentId), toUnits(a.month), monthTtl]);
    }
    for (const t of rows.traces) writes.push([keys.trace('spend', t.traceId), toUnits(t.cost), traceTtl]);
    for (const t of rows.tenants ?? []) {
      writes.push([keys.spend('td', day, t.tenantId), toUnits(t.day), dayTtl]);
      writes.push([keys.spend('tm', month, t.tenantId), toUnits(t.month), monthTtl]);
    }
    for (let i = 0; i < writes.length; i += 1000) {
      await Promise.all(writes.slice(i, i + 1000).map(([key, units, ttl]) => this.ctx.call(() => redis.agwSeed(key, units, ttl, mode))));
    }
  }
}
