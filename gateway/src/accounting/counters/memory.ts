import { dayKeyEnd, monthKeyEnd, monthKeyOfDay, utcDayKey, utcMonthKey } from '../budget-window.js';
import { EvictedTraces } from './evicted-traces.js';
import { RepeatTracker } from './repeat-tracker.js';
import { minuteOf, RATE_WINDOW_MS, rateLimitExceeded, refusal, tokenCount } from './sliding-window.js';
import {
  DEFAULT_RESERVATION_RECORD_TTL_MS,
  DEFAULT_RESERVATION_TTL_MS,
  DEFAULT_TRACE_TTL_MS,
  CountersUnavailableError,
  type BudgetWindow,
  type CounterOptions,
  type Counters,
  type RateLimitRequest,
  type RateLimitResult,
  type RepeatRequest,
  type ReserveRequest,
  type ReserveResult,
  type SeedRows,
  windowResetAt,
} from './spec.js';
import { fromUnits, limitToUnits, toUnits, WINDOW_GRACE_MS } from './units.js';

/** Spend and open holds of one budget window, in units; dropped after `expiresAt` once no hold remains. */
interface Window {
  spent: number;
  reserved: number;
  expiresAt: number;
}

/** Spend and open holds of one trace, in units, and when it was last used (ms). */
interface TraceWindow {
  spent: number;
  reserved: number;
  usedAt: number;
  /** Steps settled and not yet recorded that keep the trace in memory (keepTrace). */
  kept?: number;
}

type Scope = Window | TraceWindow;

interface Hold {
  agentId: string;
  traceId: string | null;
  /** The tenant pool the hold also counts in, when the request named one. */
  tenantId: string | null;
  day: string;
  amount: number;
  createdAt: number;
  /** performance.now() at the reservation: how long the step took, on the clock of `createdAt`, when it ends. */
  createdTick: number;
  holdUntil: number;
  recordUntil: number;
}

interface Rate {
  minute: number;
  prevRequests: number;
  curRequests: number;
  prevTokens: number;
  curTokens: number;
}

const SWEEP_INTERVAL_MS = 60_000;
/** With loadTraceSpend: how long a trace stays in memory after its last use, by default (a trace back after longer costs one indexed read). */
export const DEFAULT_TRACE_IDLE_MS = 60_000;
/** Traces held in memory at most, by default (about 150 bytes each): past it the least recently used leave first. */
export const DEFAULT_MAX_TRACES = 200_000;

export interface MemoryCounterOptions extends CounterOptions {
  /** Traces held in memory at most (default DEFAULT_MAX_TRACES). */
  maxTraces?: number;
  /** Retry-block entries held at most (default 1 M; see RepeatTracker). */
  maxRepeatEntries?: number;
  /** Memory for the ids of traces that left memory, in bytes (default 8 MiB; see EvictedTraces). */
  evictedTracesBytes?: number;
}

/**
 * Counters in this process's memory: the default for a single node. Every operation is synchronous work on maps,
 * so it is atomic without locks; stale state is dropped by a sweep at most once a minute.
 *
 * Memory stays bounded whatever the number of distinct traces (issue 23): a trace's spend lives in `traces`, in order of
 * last use, and leaves memory once idle for `traceIdleMs` from the end of its last step (or, past `maxTraces`, least
 * recently used first; never while it holds a reservation). Its id then goes to a compact filter (EvictedTraces, about
 * 1.8 bytes an id); a trace not in memory whose id the filter knows is read back from the usage rows (`loadTraceSpend`,
 * one query, shared by concurrent requests of that trace) before its reservation, so max_cost_per_trace still holds
 * when it comes back. A trace id the filter does not know is new (or idle for longer than `traceTtlMs`): it starts at
 * zero with no database round trip.
 * When the read fails, a request with a trace limit is refused (CountersUnavailableError: budgets fail closed); one
 * without is counted in the usage rows only, and the trace is read again on its next request.
 */
export class MemoryCounters implements Counters {
  readonly kind = 'memory' as const;
  private readonly windows = new Map<string, Window>();
  /** Holds still counted against budgets, in creation order, so the oldest expire first. */
  private readonly holds = new Map<string, Hold>();
  /** Expired holds, kept so a late settle still records its cost. */
  private readonly lapsed = new Map<string, Hold>();
  private readonly rates = new Map<string, Rate>();
  /** Retry-block sightings per (key, window), 15-24 bytes a key seen once (12-byte slots at load 0.5-0.8): see RepeatTracker. */
  private readonly repeats: RepeatTracker;
  /** Spend of the traces in memory, least recently used first (a use moves a trace to the end). */
  private readonly traces = new Map<string, TraceWindow>();
  /** Ids of traces whose spend left memory (or was seeded without loading it): read back from the usage rows on their next use. */
  private readonly evicted: EvictedTraces;
  /** Reads of a trace's spend under way, shared by the requests of that trace that arrive meanwhile. */
  private readonly loading = new Map<string, Promise<boolean>>();
  private readonly loadTraceSpend: ((traceId: string) => Promise<number>) | undefined;
  private readonly holdTtl: number;
  private readonly recordTtl: number;
  private readonly traceTtl: number;
  private readonly traceIdle: number;
  private readonly maxTraces: number;
  private seq = 0;
  private lastSweep = -Infinity;

  constructor(options: MemoryCounterOptions = {}) {
    this.holdTtl = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
    this.recordTtl = Math.max(options.reservationRecordTtlMs ?? DEFAULT_RESERVATION_RECORD_TTL_MS, this.holdTtl);
    this.traceTtl = options.traceTtlMs ?? DEFAULT_TRACE_TTL_MS;
    this.loadTraceSpend = options.loadTraceSpend;
    // Without a way to read a trace back, its spend stays in memory as long as it counts.
    this.traceIdle = this.loadTraceSpend ? Math.min(options.traceIdleMs ?? DEFAULT_TRACE_IDLE_MS, this.traceTtl) : this.traceTtl;
    this.maxTraces = Math.max(1, options.maxTraces ?? DEFAULT_MAX_TRACES);
    this.evicted = new EvictedTraces(this.traceTtl, options.evictedTracesBytes);
    this.repeats = new RepeatTracker(options.maxRepeatEntries);
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const now = req.now.getTime();
    this.maintain(now);
    let traceId = req.traceId;
    if (traceId !== null && !this.traces.has(traceId)) {
      const loaded = this.reload(traceId, now);
      if (loaded !== true && !(await loaded)) {
        if (req.traceLimit !== null) throw new CountersUnavailableError(`the spend of trace ${traceId} could not be read back from the usage records`);
        // No trace limit to keep: counted in the usage rows alone, and the trace is read again on its next request.
        traceId = null;
      }
    }
    const amount = toUnits(req.amount);
    const day = utcDayKey(req.now);
    const tenantId = req.tenant?.tenantId ?? null;
    const [agentDay, agentMonth] = this.agentScopes(req.agentId, day);
    // Without a trace the request is a trace of one: its limit applies to this request alone (an empty window held nowhere).
    const trace: Scope = traceId !== null ? this.trace(traceId, now) : { spent: 0, reserved: 0, usedAt: now };
    const checks: Array<[BudgetWindow, Scope, number | null]> = [
      ['daily', agentDay, limitToUnits(req.dailyLimit)],
      ['monthly', agentMonth, limitToUnits(req.monthlyLimit)],
      ['trace', trace, limitToUnits(req.traceLimit)],
    ];
    if (req.tenant) {
      const [tenantDay, tenantMonth] = this.tenantScopes(req.tenant.tenantId, day);
      checks.push(['tenant_daily', tenantDay, limitToUnits(req.tenant.dailyLimit)], ['tenant_monthly', tenantMonth, limitToUnits(req.tenant.monthlyLimit)]);
    }
    // Every window is checked before any is held, with no await between: concurrent requests of the tenant's agents cannot pass together.
    for (const [which, w, limit] of checks) {
      if (limit !== null && w.spent + w.reserved + amount > limit) {
        return { ok: false, which, resetAt: windowResetAt(which, req.now), limit: fromUnits(limit), used: fromUnits(w.spent + w.reserved) };
      }
    }
    for (const [, w] of checks) w.reserved += amount;
    const id = `m${++this.seq}`;
    this.holds.set(id, {
      agentId: req.agentId,
      traceId,
      tenantId,
      day,
      amount,
      createdAt: now,
      createdTick: performance.now(),
      holdUntil: now + this.holdTtl,
      recordUntil: now + this.recordTtl,
    });
    return { ok: true, reservationId: id };
  }

  async settle(reservationId: string, actualCost: number): Promise<boolean> {
    return this.finish(reservationId, toUnits(actualCost));
  }

  async release(reservationId: string): Promise<boolean> {
    return this.finish(reservationId, 0);
  }

  async spend(agentId: string, now: Date): Promise<{ day: number; month: number }> {
    const day = this.windows.get(dayKey(utcDayKey(now), agentId))?.spent ?? 0;
    const month = this.windows.get(monthKey(utcMonthKey(now), agentId))?.spent ?? 0;
    return { day: fromUnits(day), month: fromUnits(month) };
  }

  async tenantSpend(tenantId: string, now: Date): Promise<{ day: number; month: number }> {
    const day = this.windows.get(tenantDayKey(utcDayKey(now), tenantId))?.spent ?? 0;
    const month = this.windows.get(tenantMonthKey(utcMonthKey(now), tenantId))?.spent ?? 0;
    return { day: fromUnits(day), month: fromUnits(month) };
  }

  async traceSpend(traceId: string): Promise<number> {
    const t = this.traces.get(traceId);
    if (t) return fromUnits(t.spent);
    if (this.loadTraceSpend && this.evicted.has(traceId, Date.now())) return this.loadTraceSpend(traceId);
    return 0;
  }

  async rateLimit(req: RateLimitRequest): Promise<RateLimitResult> {
    if (req.rpm === null && req.tpm === null) return { ok: true };
    const now = req.now.getTime();
    this.maintain(now);
    const { minute, elapsedMs } = minuteOf(req.now);
    const rate = this.rate(req.agentId, minute);
    const tokens = tokenCount(req.tokens);
    const which = rateLimitExceeded(req, tokens, rate, elapsedMs);
    if (which) return refusal(which, req, tokens, rate, elapsedMs);
    rate.curRequests += 1;
    rate.curTokens += tokens;
    return { ok: true };
  }

  async addTokens(agentId: string, tokens: number, now: Date = new Date()): Promise<void> {
    if (!Number.isFinite(tokens) || tokens === 0) return;
    const rate = this.rate(agentId, minuteOf(now).minute);
    rate.curTokens = Math.max(0, rate.curTokens + Math.round(tokens));
  }

  async countRepeat(req: RepeatRequest): Promise<number> {
    const now = req.now.getTime();
    this.maintain(now);
    return this.repeats.count(req.key, req.windowSeconds * 1000, now);
  }

  keepTrace(traceId: string): () => void {
    // Not in memory (it never spent, or left already): its next request reads it back, as for any trace; an empty
    // window made here would hide that read.
    if (!this.traces.has(traceId)) return () => undefined;
    const t = this.trace(traceId, Date.now());
    t.kept = (t.kept ?? 0) + 1;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      t.kept = (t.kept ?? 1) - 1;
      // In use until now: its idle time starts here (the window is the one in the map: a kept trace never leaves it).
      if (this.traces.get(traceId) === t) this.trace(traceId, Date.now());
    };
  }

  /** Traces whose spend is in memory: for tests and measurements. */
  traceEntries(): number {
    return this.traces.size;
  }

  /** Sizes of every table that grows with traffic, for tests and measurements. */
  memoryStats(): { windows: number; traces: number; holds: number; lapsed: number; rates: number; repeats: number; loading: number; evictedBytes: number } {
    return {
      windows: this.windows.size,
      traces: this.traces.size,
      holds: this.holds.size,
      lapsed: this.lapsed.size,
      rates: this.rates.size,
      repeats: this.repeats.entries(),
      loading: this.loading.size,
      evictedBytes: this.evicted.stats().bytes,
    };
  }

  /** Retry-block entries held (keys per window not yet swept): for tests and measurements. */
  repeatEntries(): number {
    return this.repeats.entries();
  }

  /** Retry-block table sizes: entries, entries with exact times (seen more than once), table slots of 12 bytes. */
  repeatStats(): { entries: number; multi: number; slots: number } {
    return this.repeats.stats();
  }

  async seed(rows: SeedRows): Promise<void> {
    const now = rows.now.getTime();
    const day = utcDayKey(rows.now);
    const month = utcMonthKey(rows.now);
    for (const a of rows.agents) {
      this.window(dayKey(day, a.agentId), dayKeyEnd(day) + WINDOW_GRACE_MS).spent = toUnits(a.day);
      this.window(monthKey(month, a.agentId), monthKeyEnd(month) + WINDOW_GRACE_MS).spent = toUnits(a.month);
    }
    for (const t of rows.tenants ?? []) {
      this.window(tenantDayKey(day, t.tenantId), dayKeyEnd(day) + WINDOW_GRACE_MS).spent = toUnits(t.day);
      this.window(tenantMonthKey(month, t.tenantId), monthKeyEnd(month) + WINDOW_GRACE_MS).spent = toUnits(t.month);
    }
    for (const t of rows.traces) {
      const held = this.traces.get(t.traceId);
      if (held) held.spent = toUnits(t.cost);
      // With a way to read it back, a trace is loaded on its next request only: memory holds the traces in use.
      else if (this.loadTraceSpend) this.evicted.add(t.traceId, now);
      else this.traces.set(t.traceId, { spent: toUnits(t.cost), reserved: 0, usedAt: now });
    }
    this.evictTraces(now);
  }

  async close(): Promise<void> {
    this.windows.clear();
    this.holds.clear();
    this.lapsed.clear();
    this.rates.clear();
    this.repeats.clear();
    this.traces.clear();
    this.evicted.clear();
  }

  /**
   * Before a reservation on a trace not in memory: true when there is nothing to read back (a new trace), else the read
   * of its spend from the usage rows (shared with the requests of that trace already waiting), false when it failed.
   */
  private reload(traceId: string, now: number): true | Promise<boolean> {
    const pending = this.loading.get(traceId);
    if (pending) return pending;
    if (!this.loadTraceSpend || !this.evicted.has(traceId, now)) return true;
    const load = this.loadTraceSpend;
    const p = (async () => {
      try {
        const cost = await load(traceId);
        // A request that went ahead meanwhile (none should: they wait on this read) keeps what it recorded.
        const t = this.traces.get(traceId);
        if (t) t.spent = Math.max(t.spent, toUnits(cost));
        else this.traces.set(traceId, { spent: toUnits(cost), reserved: 0, usedAt: now });
        return true;
      } catch {
        return false;
      } finally {
        this.loading.delete(traceId);
      }
    })();
    this.loading.set(traceId, p);
    return p;
  }

  /** The day and month windows of the agent and, when the hold names one, of its tenant: what a hold counts in besides its trace. */
  private holdScopes(hold: Hold): Window[] {
    const scopes = this.agentScopes(hold.agentId, hold.day);
    if (hold.tenantId !== null) scopes.push(...this.tenantScopes(hold.tenantId, hold.day));
    return scopes;
  }

  private tenantScopes(tenantId: string, day: string): Window[] {
    const month = monthKeyOfDay(day);
    return [
      this.window(tenantDayKey(day, tenantId), dayKeyEnd(day) + WINDOW_GRACE_MS),
      this.window(tenantMonthKey(month, tenantId), monthKeyEnd(month) + WINDOW_GRACE_MS),
    ];
  }

  private agentScopes(agentId: string, day: string): Window[] {
    const month = monthKeyOfDay(day);
    return [
      this.window(dayKey(day, agentId), dayKeyEnd(day) + WINDOW_GRACE_MS),
      this.window(monthKey(month, agentId), monthKeyEnd(month) + WINDOW_GRACE_MS),
    ];
  }

  /** The trace's window, created empty when absent, moved to the end of the use order. */
  private trace(traceId: string, now: number): TraceWindow {
    let t = this.traces.get(traceId);
    if (t) this.traces.delete(traceId);
    else t = { spent: 0, reserved: 0, usedAt: now };
    if (now > t.usedAt) t.usedAt = now;
    this.traces.set(traceId, t);
    return t;
  }

  private window(key: string, expiresAt: number): Window {
    let w = this.windows.get(key);
    if (!w) {
      w = { spent: 0, reserved: 0, expiresAt };
      this.windows.set(key, w);
    } else if (expiresAt > w.expiresAt) {
      w.expiresAt = expiresAt;
    }
    return w;
  }

  private finish(reservationId: string, actualUnits: number): boolean {
    let hold = this.holds.get(reservationId);
    const held = hold !== undefined;
    if (hold) this.holds.delete(reservationId);
    else {
      hold = this.lapsed.get(reservationId);
      if (!hold) return false;
      this.lapsed.delete(reservationId);
    }
    for (const w of this.holdScopes(hold)) {
      if (held) w.reserved -= hold.amount;
      w.spent += actualUnits;
    }
    if (hold.traceId !== null) {
      const t = this.traces.get(hold.traceId);
      if (t) {
        if (held) t.reserved -= hold.amount;
        t.spent += actualUnits;
        // The trace was in use until its step ended: its idle time starts now, not at the reservation (a step longer
        // than traceIdleMs would otherwise leave memory as it settles, and the trace's next step read it back).
        this.trace(hold.traceId, hold.createdAt + (performance.now() - hold.createdTick));
      } else if (actualUnits > 0) {
        // The trace left memory after its hold expired (a settle up to reservationRecordTtlMs late): the cost is in the
        // usage rows, where its next request reads it.
        this.evicted.add(hold.traceId, Date.now());
      }
    }
    return true;
  }

  private rate(agentId: string, minute: number): Rate {
    let r = this.rates.get(agentId);
    if (!r) {
      r = { minute, prevRequests: 0, curRequests: 0, prevTokens: 0, curTokens: 0 };
      this.rates.set(agentId, r);
    } else if (r.minute !== minute) {
      const adjacent = minute === r.minute + 1;
      r.prevRequests = adjacent ? r.curRequests : 0;
      r.prevTokens = adjacent ? r.curTokens : 0;
      r.curRequests = 0;
      r.curTokens = 0;
      r.minute = minute;
    }
    return r;
  }

  /**
   * Traces idle for traceIdleMs leave memory, and the least recently used while there are more than maxTraces; a trace
   * that holds a reservation, or that keepTrace keeps, stays (it is moved to the end). Cheap on every call: it stops at the first trace still in use.
   */
  private evictTraces(now: number): void {
    const idleBefore = now - this.traceIdle;
    let visits = this.traces.size;
    for (const [id, t] of this.traces) {
      if (visits-- <= 0) break;
      const idle = t.usedAt <= idleBefore;
      // Room for one more: the trace of the call that got here may be new.
      if (!idle && this.traces.size < this.maxTraces) break;
      this.traces.delete(id);
      if (t.reserved > 0 || (t.kept ?? 0) > 0) {
        this.traces.set(id, t);
        continue;
      }
      // A trace that spent nothing reads back as nothing: only traces with spend need remembering.
      if (t.spent > 0 && this.loadTraceSpend) this.evicted.add(id, now);
    }
  }

  /** Expires holds on every call (cheap: oldest first); drops stale windows, rates and repeats once a minute. */
  private maintain(now: number): void {
    for (const [id, hold] of this.holds) {
      if (hold.holdUntil > now) break;
      this.holds.delete(id);
      for (const w of this.holdScopes(hold)) w.reserved -= hold.amount;
      const t = hold.traceId === null ? undefined : this.traces.get(hold.traceId);
      if (t) t.reserved -= hold.amount;
      this.lapsed.set(id, hold);
    }
    this.evictTraces(now);
    for (const [id, hold] of this.lapsed) {
      if (hold.recordUntil > now) break;
      this.lapsed.delete(id);
    }
    if (Math.abs(now - this.lastSweep) < SWEEP_INTERVAL_MS) return;
    this.lastSweep = now;
    for (const [key, w] of this.windows) if (w.expiresAt <= now && w.reserved === 0) this.windows.delete(key);
    const minute = Math.floor(now / RATE_WINDOW_MS);
    for (const [key, r] of this.rates) if (r.minute < minute - 1) this.rates.delete(key);
    this.repeats.sweep(now);
  }
}

const dayKey = (day: string, agentId: string) => `d|${day}|${agentId}`;
const monthKey = (month: string, agentId: string) => `m|${month}|${agentId}`;
// Tenant ids and agent ids may look alike: their windows never share a key.
const tenantDayKey = (day: string, tenantId: string) => `td|${day}|${tenantId}`;
const tenantMonthKey = (month: string, tenantId: string) => `tm|${month}|${tenantId}`;
