import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { newRedis } from '../../storage/redis-client.js';
import { utcDayKey, utcMonthKey } from '../budget-window.js';
import { HeldReservations } from './held-reservations.js';
import { soleNode } from './node-registry.js';
import { RedisBreaker } from './redis-breaker.js';
import { DEFAULT_REDIS_PREFIX, decodeTicket, encodeTicket, holdMember, nonceOf, RedisKeys, type Ticket, type WindowKeys } from './redis-keys.js';
import { EPOCH_TTL_MS, EpochKeeper } from './redis-recovery.js';
import { defineScripts, type ScriptedRedis } from './redis-scripts.js';
import { minuteOf, RATE_WINDOW_MS, refusal, tokenCount } from './sliding-window.js';
import {
  DEFAULT_REDIS_BREAKER_FAILURES,
  DEFAULT_REDIS_TIMEOUT_MS,
  DEFAULT_RESERVATION_RECORD_TTL_MS,
  DEFAULT_RESERVATION_TTL_MS,
  DEFAULT_TRACE_TTL_MS,
  MAX_REPEATS_TRACKED,
  CountersUnavailableError,
  type BudgetWindow,
  type CounterLog,
  type CounterOptions,
  type Counters,
  type NodeRegistry,
  type RateLimitRequest,
  type RateLimitResult,
  type RepeatRequest,
  type ReserveRequest,
  type ReserveResult,
  type SeedRows,
  type SettleTracker,
  windowResetAt,
} from './spec.js';
import { fromUnits, limitToUnits, toUnits } from './units.js';

export interface RedisCounterOptions extends CounterOptions {
  /** A client to use (not closed by close()); otherwise one is made from `url`, set up to fail fast. */
  client?: Redis;
  url?: string;
  /** Prefix of every key (default `agentgw:`), so tests and several deployments can share one Redis. */
  prefix?: string;
  /**
   * Longest wait for one Redis command before the request that needs it is refused (limits.redis_timeout_ms, default
   * 1 s: a Redis that hangs costs the first requests this long, then the breaker refuses at once; a Redis that is down or
   * restarting refuses at once anyway, since nothing is queued while the connection is away).
   */
  commandTimeoutMs?: number;
  /** Failures in a row that open the circuit breaker (limits.redis_breaker_failures, default 5). */
  breakerFailures?: number;
  /** After the breaker opened, how long every call fails at once before one probe may try Redis again (default 1 s). */
  breakerCooldownMs?: number;
  /** How long a request waits for a rebuild of lost counters before it is refused (default 1 s). */
  rebuildWaitMs?: number;
  /** How often the node looks at the epoch, to find a Redis that lost its state while it has requests in flight (default 250 ms). */
  syncMs?: number;
}

/** How the first connection may take before requests are refused instead of waiting for it. */
const FIRST_CONNECT_WAIT_MS = 2_000;
/** At start-up, how long seeding waits for a rebuild under way. */
const START_REBUILD_WAIT_MS = 10_000;
/** Settles that failed while Redis was away and are kept to be tried again; past this, the oldest are given up. */
const MAX_FAILED_SETTLES = 10_000;
/** How often reservations no settle will come for are let go. */
const SWEEP_MS = 10_000;
const RATE_KEY_TTL_MS = 3 * RATE_WINDOW_MS;

/**
 * Counters in Redis, for several gateway nodes: every operation is one Lua script, atomic across nodes.
 * Keys carry the UTC day or month and expire a day after their window ends; traces expire `traceTtlMs` after their last request.
 * Keys of one budget operation span an agent, a trace and a tenant, so this needs a single Redis (or primary), not Redis Cluster.
 *
 * Faults fail closed and fast: every call gives up after `commandTimeoutMs`, nothing is queued while Redis is away, and
 * after failures in a row a circuit breaker refuses calls at once (CountersUnavailableError) until a probe gets through.
 *
 * Lost state: each node keeps the reservations it has made and not settled (HeldReservations). A Redis that lost its
 * state is rebuilt by every live node together before any budgeted request passes (EpochKeeper): each puts its holds
 * back, and the spend is read from the usage rows. A settle that fails while Redis is away is tried again once it answers.
 */
export class RedisCounters implements Counters {
  readonly kind = 'redis' as const;
  private readonly redis: ScriptedRedis;
  private readonly ownsClient: boolean;
  private readonly keys: RedisKeys;
  private readonly holdTtl: number;
  private readonly recordTtl: number;
  private readonly traceTtl: number;
  private readonly log: CounterLog | undefined;
  private readonly rebuildWaitMs: number;
  private readonly breaker: RedisBreaker;
  private readonly held = new HeldReservations();
  private readonly keeper: EpochKeeper;
  private readonly nodes: NodeRegistry;
  private readonly sweepTimer: NodeJS.Timeout;
  private everReady = false;
  private failedSettles = 0;
  private closed = false;

  constructor(options: RedisCounterOptions = {}) {
    this.ownsClient = options.client === undefined;
    const client =
      options.client ??
      newRedis(options.url ?? 'redis://127.0.0.1:6379', {
        // Nothing waits for a Redis that is away: a command fails at once (no offline queue, no retry) or after the
        // breaker's deadline (see RedisBreaker: ioredis's own timeout would count event-loop lag as a Redis that hangs).
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: FIRST_CONNECT_WAIT_MS,
        retryStrategy: (times) => Math.min(50 * times, 500),
      });
    this.redis = defineScripts(client);
    this.keys = new RedisKeys(options.prefix ?? DEFAULT_REDIS_PREFIX);
    this.holdTtl = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
    this.recordTtl = Math.max(options.reservationRecordTtlMs ?? DEFAULT_RESERVATION_RECORD_TTL_MS, this.holdTtl);
    this.traceTtl = options.traceTtlMs ?? DEFAULT_TRACE_TTL_MS;
    this.log = options.log;
    this.rebuildWaitMs = options.rebuildWaitMs ?? 1_000;
    this.nodes = options.nodes ?? soleNode();
    this.breaker = new RedisBreaker({
      timeoutMs: options.commandTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS,
      failures: options.breakerFailures ?? DEFAULT_REDIS_BREAKER_FAILURES,
      cooldownMs: options.breakerCooldownMs ?? 1_000,
      log: options.log,
      onRecovered: () => void this.keeper.sync().catch(() => undefined),
    });
    const loadSeed = options.loadSeed;
    this.keeper = new EpochKeeper({
      redis: this.redis,
      keys: this.keys,
      held: this.held,
      nodes: this.nodes,
      holdTtl: this.holdTtl,
      recordTtl: this.recordTtl,
      traceTtl: this.traceTtl,
      log: this.log,
      call: (op) => this.call(op),
      windows: (t) => this.windows(t),
      usage: () => options.usage?.(),
      loadSeed: loadSeed ?? (async () => this.keeper.startRows ?? { now: new Date(), agents: [], traces: [] }),
      retryFailedSettles: () => this.retryFailedSettles(),
    });
    if (client.status === 'ready') this.everReady = true;
    client.on('ready', () => this.onReady());
    // Connection errors are seen by the calls that fail; without a listener ioredis would print each one.
    client.on('error', () => undefined);
    this.keeper.start(options.syncMs ?? 250, () => this.everReady && this.redis.status === 'ready');
    this.sweepTimer = setInterval(() => this.held.sweep(Date.now(), this.recordTtl), SWEEP_MS);
    this.sweepTimer.unref();
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const now = req.now.getTime();
    const ticket: Ticket = {
      nonce: nonceOf(req.requestId, randomUUID),
      agentId: req.agentId,
      traceId: req.traceId,
      tenantId: req.tenant?.tenantId ?? null,
      day: utcDayKey(req.now),
      amount: toUnits(req.amount),
      createdAt: now,
      epoch: '',
    };
    // No limit applies: nothing to check or hold, so no round trip (and no refusal when Redis is away). The cost is still
    // recorded at settle, for the spend the admin interface shows and for limits set later.
    const limits: Record<BudgetWindow, number | null> = {
      daily: req.dailyLimit,
      monthly: req.monthlyLimit,
      trace: req.traceLimit,
      tenant_daily: req.tenant?.dailyLimit ?? null,
      tenant_monthly: req.tenant?.monthlyLimit ?? null,
    };
    if (Object.values(limits).every((l) => l === null)) {
      this.held.add(ticket);
      return { ok: true, reservationId: encodeTicket(ticket) };
    }
    const windows = this.windows(ticket);
    const keys = [this.keys.epoch, this.keys.record(ticket.nonce), ...windows.flatMap((w) => [w.spend, w.holds])];
    const limit = (usd: number | null) => String(limitToUnits(usd) ?? '');
    const perWindow = windows.flatMap((w) => [w.name, limit(limits[w.name]), w.ttl]);
    // Without trace keys the trace limit applies to this request alone.
    const oneShotTraceLimit = ticket.traceId === null ? limit(req.traceLimit) : '';
    for (let attempt = 0; ; attempt++) {
      const [ok, which, used] = await this.call(() =>
        this.redis.agwReserve(
          keys.length,
          ...keys,
          now,
          ticket.amount,
          holdMember(ticket),
          now + this.holdTtl,
          this.recordTtl,
          EPOCH_TTL_MS,
          oneShotTraceLimit,
          ...perWindow,
        ),
      );
      if (ok === 1) {
        const made = { ...ticket, epoch: String(which) };
        this.held.add(made);
        this.keeper.noteReserved(made.epoch);
        return { ok: true, reservationId: encodeTicket(made) };
      }
      if (ok === -1 || ok === -2) {
        // Redis lost the spend it held: rebuilt (with this node's part) before this request may pass.
        if (attempt >= 2) throw new CountersUnavailableError('the counters are being rebuilt after Redis lost its state');
        await this.keeper.awaitOpen(this.rebuildWaitMs);
        continue;
      }
      const w = which as BudgetWindow;
      return { ok: false, which: w, resetAt: windowResetAt(w, req.now), limit: limits[w] as number, used: fromUnits(Number(used)) };
    }
  }

  async settle(reservationId: string, actualCost: number): Promise<boolean> {
    return this.finish(reservationId, toUnits(actualCost));
  }

  async release(reservationId: string): Promise<boolean> {
    return this.finish(reservationId, 0);
  }

  async spend(agentId: string, now: Date): Promise<{ day: number; month: number }> {
    return this.daySpend(this.keys.spend('d', utcDayKey(now), agentId), this.keys.spend('m', utcMonthKey(now), agentId));
  }

  async tenantSpend(tenantId: string, now: Date): Promise<{ day: number; month: number }> {
    return this.daySpend(this.keys.spend('td', utcDayKey(now), tenantId), this.keys.spend('tm', utcMonthKey(now), tenantId));
  }

  /** Recorded spend of a day and a month window (an agent's or a tenant's). */
  private async daySpend(dayKey: string, monthKey: string): Promise<{ day: number; month: number }> {
    for (let attempt = 0; ; attempt++) {
      const [day, month, seeded] = await this.call(() => this.redis.agwSpend(this.keys.epoch, dayKey, monthKey));
      // Without a seeded epoch these numbers may be what is left after Redis lost its state: not an answer to give.
      if (seeded === 1) return { day: fromUnits(Number(day)), month: fromUnits(Number(month)) };
      if (attempt >= 1) throw new CountersUnavailableError('the counters are being rebuilt after Redis lost its state');
      await this.keeper.awaitOpen(this.rebuildWaitMs);
    }
  }

  async traceSpend(traceId: string): Promise<number> {
    const spent = await this.call(() => this.redis.hget(this.keys.trace('spend', traceId), 'spent'));
    return fromUnits(Number(spent ?? 0));
  }

  async rateLimit(req: RateLimitRequest): Promise<RateLimitResult> {
    if (req.rpm === null && req.tpm === null) return { ok: true };
    const { minute, elapsedMs } = minuteOf(req.now);
    const tokens = tokenCount(req.tokens);
    const [ok, which, ...counts] = await this.call(() =>
      this.redis.agwRateLimit(
        this.keys.rate(minute, req.agentId),
        this.keys.rate(minute - 1, req.agentId),
        req.rpm ?? '',
        req.tpm ?? '',
        tokens,
        elapsedMs,
        RATE_KEY_TTL_MS,
      ),
    );
    if (ok === 1) return { ok: true };
    const [prevRequests, curRequests, prevTokens, curTokens] = counts.map(Number);
    return refusal(which as 'rpm' | 'tpm', req, tokens, { prevRequests, curRequests, prevTokens, curTokens }, elapsedMs);
  }

  async addTokens(agentId: string, tokens: number, now: Date = new Date()): Promise<void> {
    if (!Number.isFinite(tokens) || Math.round(tokens) === 0) return;
    await this.call(() => this.redis.agwAddTokens(this.keys.rate(minuteOf(now).minute, agentId), Math.round(tokens), RATE_KEY_TTL_MS));
  }

  async countRepeat(req: RepeatRequest): Promise<number> {
    const now = req.now.getTime();
    const windowMs = Math.max(1, Math.round(req.windowSeconds * 1000));
    return this.call(() => this.redis.agwCountRepeat(`${this.keys.prefix}repeat:${req.key}`, now, windowMs, `${now}:${randomUUID()}`, MAX_REPEATS_TRACKED));
  }

  /**
   * At start-up: beside a Redis that kept its state (the epoch is there), fills only windows it has no record of; beside
   * one that has none (new, or restarted without persistence), takes part in its rebuild.
   */
  async seed(rows: SeedRows): Promise<void> {
    await this.keeper.seed(rows, Math.max(this.rebuildWaitMs, START_REBUILD_WAIT_MS));
  }

  readonly tracker: SettleTracker = {
    track: (requestId) => {
      const h = this.held.get(requestId);
      if (!h || h.tracked || h.covered || h.finishing !== undefined) return undefined;
      h.tracked = true;
      h.trackedAt = Date.now();
      // Journaled with the epoch its hold is in now: a replay compares it with Redis's (see FINISH).
      return { reservationId: encodeTicket({ ...h.ticket, epoch: h.ticket.epoch === '' ? '' : h.asserted }), marker: h.ticket.epoch === '' ? h.ticket.nonce : undefined, settled: h.settled };
    },
    replaySettle: async (reservationId, cost) => {
      const ticket = decodeTicket(reservationId);
      if (!ticket) return;
      try {
        // -1 (no seeded epoch): the rebuild under way reads the replayed rows, which are in the database by now.
        await this.finishOnce(ticket, ticket.epoch, toUnits(cost), this.recordTtl);
      } catch (err) {
        this.keeper.lostWrites++;
        throw err;
      }
    },
    forget: (markers) => {
      if (markers.length === 0 || this.closed) return;
      const records = markers.map((m) => this.keys.record(m));
      void this.call(() => this.redis.del(...records)).catch(() => undefined);
    },
  };

  async close(): Promise<void> {
    this.closed = true;
    this.keeper.stop();
    clearInterval(this.sweepTimer);
    if (!this.ownsClient) return;
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  /** Whether the circuit breaker refuses calls right now (for tests and metrics). */
  get breakerOpen(): boolean {
    return this.breaker.open;
  }

  /** The reservations this node has made and not settled in Redis (for tests and metrics). */
  get heldCount(): number {
    return this.held.size;
  }

  /** Runs one Redis call through the circuit breaker; every failure comes out as CountersUnavailableError. */
  private async call<T>(op: () => Promise<T>): Promise<T> {
    if (this.redis.status !== 'ready') {
      const connecting = this.redis.status === 'wait' || this.redis.status === 'connecting' || this.redis.status === 'connect';
      // Only the very first connection is waited for (a node starting); afterwards a Redis that is away fails at once.
      if (this.everReady || !connecting || !(await this.firstConnect())) {
        throw new CountersUnavailableError(`Redis is not connected (${this.redis.status})`);
      }
    }
    return this.breaker.run(op);
  }

  private firstConnect(): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        this.redis.off('close', onClose);
        resolve(ok);
      };
      const onReady = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => done(false), FIRST_CONNECT_WAIT_MS);
      timer.unref();
      this.redis.once('ready', onReady);
      this.redis.once('close', onClose);
    });
  }

  /** Connected (again): a Redis that restarted without its state is found and rebuilt now, not by the next request. */
  private onReady(): void {
    const first = !this.everReady;
    this.everReady = true;
    if (first || this.closed) return;
    this.log?.warn({}, 'Redis counters reconnected');
    this.breaker.reset();
    void this.keeper.sync().catch(() => undefined);
  }

  /**
   * A settle or release. The reservation's entry (HeldReservations) stays until its settle has reached Redis: a settle
   * that fails is tried again once Redis answers (each settle counts once: see FINISH, ADD_SPEND).
   */
  private async finish(reservationId: string, units: number): Promise<boolean> {
    const ticket = decodeTicket(reservationId);
    if (!ticket) return false;
    const h = this.held.get(ticket.nonce);
    // Its usage row was in the database when the counters were rebuilt: counted there.
    if (h?.covered || (ticket.epoch === '' && units === 0)) {
      this.held.drop(h);
      return true;
    }
    if (h) {
      if (h.busy) return false;
      h.busy = true;
      h.finishing = units;
    }
    try {
      const done = await this.finishUntilOpen(ticket, units);
      this.held.drop(h);
      return done === 1 || done === 2;
    } catch (err) {
      if (h) {
        h.busy = false;
        h.failed = true;
        this.failedSettles++;
      }
      throw err;
    }
  }

  /** One settle, waiting for a rebuild under way: 1 done, 2 added without a hold, 0 nothing to do. */
  private async finishUntilOpen(ticket: Ticket, units: number): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      const h = this.held.get(ticket.nonce);
      if (h?.covered) return 1;
      const done = await this.finishOnce(ticket, h?.asserted ?? ticket.epoch, units, h?.tracked ? this.recordTtl : undefined);
      // No seeded epoch and no record: a released hold went with the lost state.
      if (done !== -1 || units === 0) return done === -1 ? 1 : done;
      if (attempt >= 2) throw new CountersUnavailableError('the counters are being rebuilt after Redis lost its state');
      await this.keeper.awaitOpen(this.rebuildWaitMs);
    }
  }

  /**
   * One settle or release in Redis: 1 done, 2 added without a hold (its record went with an earlier state), 0 nothing to
   * do, -1 no seeded epoch. `markerTtl`: the cost of a request that held nothing is added once only (see ADD_SPEND).
   */
  private async finishOnce(ticket: Ticket, asserted: string, units: number, markerTtl: number | undefined): Promise<number> {
    const windows = this.windows(ticket);
    const ttls = windows.map((w) => w.ttl);
    if (ticket.epoch === '') {
      if (units === 0) return 1;
      const keys = [this.keys.epoch, this.keys.record(ticket.nonce), ...windows.map((w) => w.spend)];
      return this.call(() => this.redis.agwAddSpend(keys.length, ...keys, units, markerTtl ?? '', ...ttls));
    }
    const keys = [this.keys.epoch, this.keys.record(ticket.nonce), ...windows.flatMap((w) => [w.spend, w.holds])];
    return this.call(() => this.redis.agwFinish(keys.length, ...keys, holdMember(ticket), ticket.amount, units, asserted, ...ttls));
  }

  /** Once the epoch is open: settles that failed while Redis was away are tried again (the oldest given up past a cap). */
  private retryFailedSettles(): void {
    if (this.failedSettles === 0) return;
    let failed = 0;
    for (const h of this.held.values()) if (h.failed) failed++;
    let giveUp = Math.max(0, failed - MAX_FAILED_SETTLES);
    this.failedSettles = 0;
    for (const h of [...this.held.values()]) {
      if (!h.failed || h.busy) continue;
      h.failed = false;
      if (giveUp > 0) {
        giveUp--;
        this.keeper.lostWrites++;
        this.held.drop(h);
        continue;
      }
      void this.finish(encodeTicket(h.ticket), h.finishing ?? 0).catch(() => undefined);
    }
  }

  private windows(t: Ticket): WindowKeys[] {
    return this.keys.windows(t, this.traceTtl);
  }
}
