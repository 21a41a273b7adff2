import { dayKeyEnd, monthKeyEnd, monthKeyOfDay, nextUtcDayStart, nextUtcMonthStart, utcDayKey, utcMonthKey } from '../budget-window.js';
import { RepeatTracker } from './repeat-tracker.js';
import { minuteOf, RATE_WINDOW_MS, rateLimitExceeded, refusal, tokenCount } from './sliding-window.js';
import {
  DEFAULT_RESERVATION_RECORD_TTL_MS,
  DEFAULT_RESERVATION_TTL_MS,
  DEFAULT_TRACE_TTL_MS,
  type CounterOptions,
  type Counters,
  type RateLimitRequest,
  type RateLimitResult,
  type RepeatRequest,
  type ReserveRequest,
  type ReserveResult,
  type SeedRows,
} from './spec.js';
import { fromUnits, limitToUnits, toUnits, WINDOW_GRACE_MS } from './units.js';

/** Spend and open holds of one budget window, in units; dropped after `expiresAt` once no hold remains. */
interface Window {
  spent: number;
  reserved: number;
  expiresAt: number;
}

interface Hold {
  agentId: string;
  traceId: string | null;
  day: string;
  amount: number;
  createdAt: number;
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

/**
 * Counters in this process's memory: the default for a single node. Every operation is synchronous work on maps,
 * so it is atomic without locks; stale state is dropped by a sweep at most once a minute.
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
  private readonly repeats = new RepeatTracker();
  private readonly holdTtl: number;
  private readonly recordTtl: number;
  private readonly traceTtl: number;
  private seq = 0;
  private lastSweep = -Infinity;

  constructor(options: CounterOptions = {}) {
    this.holdTtl = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
    this.recordTtl = Math.max(options.reservationRecordTtlMs ?? DEFAULT_RESERVATION_RECORD_TTL_MS, this.holdTtl);
    this.traceTtl = options.traceTtlMs ?? DEFAULT_TRACE_TTL_MS;
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const now = req.now.getTime();
    this.maintain(now);
    const amount = toUnits(req.amount);
    const day = utcDayKey(req.now);
    const scopes = this.scopes(req.agentId, req.traceId, day, now);
    const limits = [limitToUnits(req.dailyLimit), limitToUnits(req.monthlyLimit), limitToUnits(req.traceLimit)];
    for (let i = 0; i < scopes.length; i++) {
      const limit = limits[i];
      const w = scopes[i];
      if (limit !== null && w.spent + w.reserved + amount > limit) {
        const which = (['daily', 'monthly', 'trace'] as const)[i];
        const resetAt = which === 'daily' ? nextUtcDayStart(req.now) : which === 'monthly' ? nextUtcMonthStart(req.now) : null;
        return { ok: false, which, resetAt, limit: fromUnits(limit), used: fromUnits(w.spent + w.reserved) };
      }
    }
    if (req.traceId === null && limits[2] !== null && amount > limits[2]) {
      return { ok: false, which: 'trace', resetAt: null, limit: fromUnits(limits[2]), used: 0 };
    }
    for (const w of scopes) w.reserved += amount;
    const id = `m${++this.seq}`;
    this.holds.set(id, {
      agentId: req.agentId,
      traceId: req.traceId,
      day,
      amount,
      createdAt: now,
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

  async traceSpend(traceId: string): Promise<number> {
    return fromUnits(this.windows.get(traceKey(traceId))?.spent ?? 0);
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
    for (const t of rows.traces) this.window(traceKey(t.traceId), now + this.traceTtl).spent = toUnits(t.cost);
  }

  async close(): Promise<void> {
    this.windows.clear();
    this.holds.clear();
    this.lapsed.clear();
    this.rates.clear();
    this.repeats.clear();
  }

  /** The day, month and (when set) trace windows a reservation made at `now` counts in. */
  private scopes(agentId: string, traceId: string | null, day: string, now: number): Window[] {
    const month = monthKeyOfDay(day);
    const scopes = [
      this.window(dayKey(day, agentId), dayKeyEnd(day) + WINDOW_GRACE_MS),
      this.window(monthKey(month, agentId), monthKeyEnd(month) + WINDOW_GRACE_MS),
    ];
    if (traceId !== null) scopes.push(this.window(traceKey(traceId), now + this.traceTtl));
    return scopes;
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
    for (const w of this.scopes(hold.agentId, hold.traceId, hold.day, hold.createdAt)) {
      if (held) w.reserved -= hold.amount;
      w.spent += actualUnits;
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

  /** Expires holds on every call (cheap: oldest first); drops stale windows, rates and repeats once a minute. */
  private maintain(now: number): void {
    for (const [id, hold] of this.holds) {
      if (hold.holdUntil > now) break;
      this.holds.delete(id);
      for (const w of this.scopes(hold.agentId, hold.traceId, hold.day, hold.createdAt)) w.reserved -= hold.amount;
      this.lapsed.set(id, hold);
    }
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
const traceKey = (traceId: string) => `t|${traceId}`;
