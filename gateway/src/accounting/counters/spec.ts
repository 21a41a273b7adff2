/**
 * Shared counters for budgets, rate limits and retry blocking: one interface, an in-process implementation (one node)
 * and a Redis one (several nodes). Every operation is atomic and, for Redis, one round trip.
 */

import { nextUtcDayStart, nextUtcMonthStart } from '../budget-window.js';

/** The agent's windows, its trace, then its tenant's pool (shared by every agent of the tenant): CONTRACT's order. */
export type BudgetWindow = 'daily' | 'monthly' | 'trace' | 'tenant_daily' | 'tenant_monthly';

/** When a window starts over: the next UTC midnight (daily), the 1st of the next month (monthly); null for a trace. */
export function windowResetAt(which: BudgetWindow, now: Date): Date | null {
  if (which === 'daily' || which === 'tenant_daily') return nextUtcDayStart(now);
  if (which === 'monthly' || which === 'tenant_monthly') return nextUtcMonthStart(now);
  return null;
}

/** The tenant pool a reservation also counts in: spend is recorded there even when neither limit is set. */
export interface TenantBudget {
  tenantId: string;
  /** USD limits; null = unlimited. */
  dailyLimit: number | null;
  monthlyLimit: number | null;
}

export interface ReserveRequest {
  agentId: string;
  /**
   * The trace to charge, used as given: qualify it (e.g. with the tenant) if ids may collide.
   * null is a trace of one request (no client trace id): nothing is recorded, and traceLimit applies to this request alone.
   */
  traceId: string | null;
  /** Worst-case cost of the request in USD. */
  amount: number;
  /** USD limits; null = unlimited. */
  dailyLimit: number | null;
  monthlyLimit: number | null;
  traceLimit: number | null;
  /** The agent's tenant; without it the reservation counts in the agent's and trace's windows only. */
  tenant?: TenantBudget;
  now: Date;
  /**
   * The request's id (server-made): names the reservation, so that the usage row journaled for the request can be
   * matched with its settle (see SettleTracker). Without it the reservation gets a random name.
   */
  requestId?: string;
}

export type ReserveResult =
  | { ok: true; reservationId: string }
  | {
      ok: false;
      which: BudgetWindow;
      /** When the window starts over: the next UTC midnight (daily), the 1st of the next month (monthly); null for a trace. */
      resetAt: Date | null;
      /** The limit that refused, and spend plus open reservations in its window, in USD. */
      limit: number;
      used: number;
    };

export interface RateLimitRequest {
  agentId: string;
  /** Requests per minute; null = unlimited. */
  rpm: number | null;
  /** Tokens per minute; null = unlimited. */
  tpm: number | null;
  /** Tokens this request is estimated to use. */
  tokens: number;
  now: Date;
}

export type RateLimitResult = { ok: true } | { ok: false; which: 'rpm' | 'tpm'; retryAfterSeconds: number };

export interface RepeatRequest {
  /** A hash of agent or trace and the normalised request. */
  key: string;
  windowSeconds: number;
  now: Date;
}

/** Spend to restore after a restart, read from the usage store. */
export interface SeedRows {
  now: Date;
  /** USD spent by each agent in the current UTC day and month. */
  agents: ReadonlyArray<{ agentId: string; day: number; month: number }>;
  /** USD spent by each trace. */
  traces: ReadonlyArray<{ traceId: string; cost: number }>;
  /** USD spent by all the agents of each tenant in the current UTC day and month. */
  tenants?: ReadonlyArray<{ tenantId: string; day: number; month: number }>;
}

export interface Counters {
  readonly kind: 'memory' | 'redis';

  /**
   * Checks that spend + open reservations + amount stays within the daily, monthly, trace, tenant daily and tenant
   * monthly limits (in that order, in one atomic step) and, when all pass, holds `amount` in each window. A hold that is neither settled nor released expires after
   * `reservationTtlMs` (default 10 minutes), so a crashed node cannot block a budget for longer.
   */
  reserve(req: ReserveRequest): Promise<ReserveResult>;
  /**
   * Replaces the hold by the actual cost (lower or higher), in the day and month the reservation was made.
   * Still records the cost after the hold expired, for `reservationRecordTtlMs` (default 24 h). False when already done or unknown.
   */
  settle(reservationId: string, actualCost: number): Promise<boolean>;
  /** Drops the hold without spend (error paths). False when already done. */
  release(reservationId: string): Promise<boolean>;

  /** Recorded spend (no open reservations) of an agent in the UTC day and month of `now`, in USD. */
  spend(agentId: string, now: Date): Promise<{ day: number; month: number }>;
  /** Recorded spend of a trace in USD. */
  traceSpend(traceId: string): Promise<number>;
  /** Recorded spend (no open reservations) of all the agents of a tenant in the UTC day and month of `now`, in USD. */
  tenantSpend(tenantId: string, now: Date): Promise<{ day: number; month: number }>;

  /** Sliding one-minute window per agent; counts the request (and its tokens) only when both limits pass. */
  rateLimit(req: RateLimitRequest): Promise<RateLimitResult>;
  /** Corrects the tokens of the current minute once the real usage is known (negative gives tokens back). */
  addTokens(agentId: string, tokens: number, now?: Date): Promise<void>;

  /** Records one sighting of `key` and returns how many times it was seen in the last `windowSeconds`, this one included. */
  countRepeat(req: RepeatRequest): Promise<number>;

  /**
   * Restores spend after a restart (memory: replaces; Redis: fills only windows it has no record of, or, when Redis lost
   * its state, takes this node's part in its rebuild before a budgeted request is admitted).
   */
  seed(rows: SeedRows): Promise<void>;

  /** Redis: links the usage rows the journal holds with the settles of their reservations (see SettleTracker). */
  readonly tracker?: SettleTracker;

  /**
   * Memory counters that read an idle trace back from the usage rows: keeps the trace's spend in memory until the
   * returned function is called (once). A step settled before its usage row is written (an answer whose tool call waits
   * for approval, up to approvals.timeout_s) holds its trace this way, so that the trace is not read back meanwhile
   * without that step's cost. Counters that never drop a trace's spend early (Redis) leave it out.
   */
  keepTrace?(traceId: string): () => void;

  close(): Promise<void>;
}

/**
 * What the usage writer and its journal ask the counters, so that after a crash the counters' spend equals the usage
 * rows: a row whose settle has not reached the counters stays in the journal with its reservation until it has, and a
 * node that replays the journal of a stopped node settles what it finds there (each settle counts once).
 */
export interface SettleTracker {
  /**
   * The reservation of the request whose usage row is being journaled, when its settle has not reached the counters yet:
   * its id (journaled with the row), a marker to forget once the row's journal segment is gone (undefined: none), and a
   * promise that resolves once the settle has reached the counters (or was given up).
   */
  track(requestId: string): { reservationId: string; marker: string | undefined; settled: Promise<void> } | undefined;
  /** Settles a reservation read back from the journal of a node that stopped (a second settle of it does nothing). */
  replaySettle(reservationId: string, cost: number): Promise<void>;
  /** Markers of settled rows whose journal segment was deleted: nothing can replay them any more. */
  forget(markers: readonly string[]): void;
}

/** The gateway nodes that share the counters: after Redis loses its state, each live one re-asserts its holds. */
export interface NodeRegistry {
  /** This node's id. */
  readonly self: string;
  /** The ids of the nodes heard from lately, this one included. */
  live(): Promise<string[]>;
}

/** The usage writer as the counters see it while they are rebuilt. */
export interface UsageGate {
  /** Writes the usage rows queued so far to the database, and holds back those queued from now on until resume(). */
  hold(): Promise<void>;
  resume(): void;
}

/**
 * The counter store cannot answer (Redis down, timed out, restarted and still rebuilding): callers that need counters
 * refuse the request (503 store_unavailable: budgets fail closed); callers after the answer log it and go on.
 */
export class CountersUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CountersUnavailableError';
  }
}

export interface CounterLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface CounterOptions {
  /**
   * Reads the spend to restore from the usage rows (what seed() takes). Redis calls it whenever it finds that it lost its
   * state (restarted without persistence), to rebuild before admitting a budgeted request. Without it a Redis that lost
   * its state starts over empty.
   */
  loadSeed?: () => Promise<SeedRows>;
  log?: CounterLog;
  /** How long an unsettled hold counts against budgets. */
  reservationTtlMs?: number;
  /** How long a reservation can still be settled (its cost recorded) after it was made. */
  reservationRecordTtlMs?: number;
  /** How long a trace's spend is kept after its last request. */
  traceTtlMs?: number;
  /**
   * Memory counters: the recorded spend of one trace (tenant-qualified id, as in ReserveRequest) from the usage rows.
   * With it, a trace idle for `traceIdleMs` leaves memory and is read back on its next request (issue 23); without it
   * a trace's spend stays in memory for `traceTtlMs`. Redis ignores it (its keys expire after `traceTtlMs`).
   */
  loadTraceSpend?: (traceId: string) => Promise<number>;
  /** Memory counters with loadTraceSpend: how long a trace's spend stays in memory after its last use (default 1 minute). */
  traceIdleMs?: number;
  /** Redis: the nodes to wait for after Redis lost its state (default: this node alone). */
  nodes?: NodeRegistry;
  /** Redis: the usage writer, once there is one (rows are written, then held, while the counters are rebuilt). */
  usage?: () => UsageGate | undefined;
}

export const DEFAULT_RESERVATION_TTL_MS = 10 * 60_000;
export const DEFAULT_RESERVATION_RECORD_TTL_MS = 24 * 60 * 60_000;
export const DEFAULT_TRACE_TTL_MS = 7 * 24 * 60 * 60_000;
/** max_repeats is at most 10,000 (contract), so counting further changes no decision and would only grow memory. */
export const MAX_REPEATS_TRACKED = 10_001;
/**
 * Redis: the longest wait for one command (limits.redis_timeout_ms). The deadline is checked after the event loop has
 * read what came meanwhile, so a loop busy for longer (a burst on a small machine) does not count as a Redis that hangs.
 */
export const DEFAULT_REDIS_TIMEOUT_MS = 1_000;
/** Redis: failures in a row that open the circuit breaker (limits.redis_breaker_failures). */
export const DEFAULT_REDIS_BREAKER_FAILURES = 5;
