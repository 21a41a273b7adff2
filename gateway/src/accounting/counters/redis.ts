import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { dayKeyEnd, monthKeyEnd, monthKeyOfDay, utcDayKey, utcMonthKey } from '../budget-window.js';
import { ADD_SPEND, ADD_TOKENS, COMMIT_EPOCH, COUNT_REPEAT, FINISH, RATE_LIMIT, RESERVE, SEED, SPEND } from './redis-scripts.js';
import { minuteOf, RATE_WINDOW_MS, refusal, tokenCount } from './sliding-window.js';
import {
  DEFAULT_RESERVATION_RECORD_TTL_MS,
  DEFAULT_RESERVATION_TTL_MS,
  DEFAULT_TRACE_TTL_MS,
  MAX_REPEATS_TRACKED,
  CountersUnavailableError,
  type BudgetWindow,
  type CounterLog,
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

type Arg = string | number;

/** The scripts, registered with defineCommand so each call is one EVALSHA (ioredis falls back to EVAL once per script). */
interface ScriptCommands {
  agwReserve(numKeys: number, ...args: Arg[]): Promise<[number, (BudgetWindow | string)?, string?]>;
  agwFinish(numKeys: number, ...args: Arg[]): Promise<number>;
  agwAddSpend(numKeys: number, ...args: Arg[]): Promise<number>;
  agwSpend(epochKey: string, dayKey: string, monthKey: string): Promise<[string, string, number]>;
  agwRateLimit(cur: string, prev: string, ...args: Arg[]): Promise<[number, ('rpm' | 'tpm')?, ...string[]]>;
  agwAddTokens(cur: string, ...args: Arg[]): Promise<number>;
  agwCountRepeat(key: string, ...args: Arg[]): Promise<number>;
  agwSeed(key: string, ...args: Arg[]): Promise<number>;
  agwCommitEpoch(epochKey: string, marker: string, ...args: Arg[]): Promise<number>;
}

export interface RedisCounterOptions extends CounterOptions {
  /** A client to use (not closed by close()); otherwise one is made from `url`, set up to fail fast. */
  client?: Redis;
  url?: string;
  /** Prefix of every key (default `agentgw:`), so tests and several deployments can share one Redis. */
  prefix?: string;
  /**
   * Longest wait for one Redis command before the request that needs it is refused (default 250 ms: a Redis that hangs
   * costs the first requests this long, then the breaker refuses at once; a Redis that is down or restarting refuses at
   * once anyway, since nothing is queued while the connection is away).
   */
  commandTimeoutMs?: number;
  /** After failures in a row, how long every call fails at once before one probe may try Redis again (default 1 s). */
  breakerCooldownMs?: number;
  /** How long a request waits for a rebuild of lost counters before it is refused (default 1 s). */
  rebuildWaitMs?: number;
}

/** What a reservation id carries, so settle knows its keys without a lookup. */
interface Ticket {
  nonce: string;
  agentId: string;
  traceId: string | null;
  /** The tenant whose pool the request counts in; null when the reservation named none. */
  tenantId: string | null;
  day: string;
  amount: number;
  createdAt: number;
  /** The epoch the hold was made under; '' for a request no limit applied to, which holds nothing in Redis. */
  epoch: string;
}

/** One budget window of a reservation: its name, spend hash, holds zset and key TTL (ms from the reservation). */
interface WindowKeys {
  name: BudgetWindow;
  spend: string;
  holds: string;
  ttl: number;
}

const RATE_KEY_TTL_MS = 3 * RATE_WINDOW_MS;
/** The epoch key lives this long after the last reservation (longer than any budget window): see RESERVE. */
const EPOCH_TTL_MS = 40 * 24 * 60 * 60_000;
/** A rebuild's marker: a rebuild slower than this starts over. */
const REBUILD_MARKER_TTL_MS = 10 * 60_000;
/** After a failed rebuild, requests are refused at once for this long instead of each starting another one. */
const REBUILD_RETRY_MS = 1_000;
/** Reads of the usage rows to bring back settles lost in an outage, at most this often. */
const RECONCILE_INTERVAL_MS = 10_000;
/** Failures in a row (timeouts, lost connection) that open the circuit breaker. */
const BREAKER_THRESHOLD = 2;
/** How long the first connection may take before requests are refused instead of waiting for it. */
const FIRST_CONNECT_WAIT_MS = 2_000;
/** Redis error replies that mean the server cannot serve now, like a lost connection. */
const UNAVAILABLE_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|MISCONF)\b/;

/**
 * Counters in Redis, for several gateway nodes: every operation is one Lua script, atomic across nodes.
 * Keys carry the UTC day or month and expire a day after their window ends; traces expire `traceTtlMs` after their last request.
 * Keys of one budget operation span an agent, a trace and a tenant, so this needs a single Redis (or primary), not Redis Cluster.
 *
 * Faults fail closed and fast: every call gives up after `commandTimeoutMs`, nothing is queued while Redis is away, and
 * after failures in a row a circuit breaker refuses calls at once (CountersUnavailableError) until a probe gets through.
 *
 * Lost state: an epoch key, written once the counters are seeded, is checked inside every reservation. A Redis that
 * restarted without persistence has none, so the reservation is refused until one node (any node; each may, and doing it
 * twice changes nothing) has rebuilt the agent, trace and tenant spend from the usage rows (`loadSeed`) and written a new epoch.
 */
export class RedisCounters implements Counters {
  readonly kind = 'redis' as const;
  private readonly redis: Redis & ScriptCommands;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly holdTtl: number;
  private readonly recordTtl: number;
  private readonly traceTtl: number;
  private readonly loadSeed: (() => Promise<SeedRows>) | undefined;
  private readonly log: CounterLog | undefined;
  private readonly cooldownMs: number;
  private readonly rebuildWaitMs: number;
  private readonly epochKey: string;

  /** Circuit breaker: failures in a row, and until when calls fail at once (0 = closed). */
  private failures = 0;
  private openUntil = 0;
  private probing = false;
  private everReady = false;
  private wasDown = false;
  /** Writes (settles) that failed since the last reconciliation: their costs are only in the usage rows. */
  private lostWrites = 0;
  private rebuilding: Promise<void> | undefined;
  private lastRebuildFailure = 0;
  private lastReconcile = 0;
  private closed = false;

  constructor(options: RedisCounterOptions = {}) {
    this.ownsClient = options.client === undefined;
    const client =
      options.client ??
      new Redis(options.url ?? 'redis://127.0.0.1:6379', {
        // Nothing waits for a Redis that is away: a command fails at once (no offline queue, no retry) or after the timeout.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: options.commandTimeoutMs ?? 250,
        connectTimeout: FIRST_CONNECT_WAIT_MS,
        retryStrategy: (times) => Math.min(50 * times, 500),
      });
    client.defineCommand('agwReserve', { lua: RESERVE });
    client.defineCommand('agwFinish', { lua: FINISH });
    client.defineCommand('agwAddSpend', { lua: ADD_SPEND });
    client.defineCommand('agwSpend', { lua: SPEND, numberOfKeys: 3 });
    client.defineCommand('agwRateLimit', { lua: RATE_LIMIT, numberOfKeys: 2 });
    client.defineCommand('agwAddTokens', { lua: ADD_TOKENS, numberOfKeys: 1 });
    client.defineCommand('agwCountRepeat', { lua: COUNT_REPEAT, numberOfKeys: 1 });
    client.defineCommand('agwSeed', { lua: SEED, numberOfKeys: 1 });
    client.defineCommand('agwCommitEpoch', { lua: COMMIT_EPOCH, numberOfKeys: 2 });
    this.redis = client as Redis & ScriptCommands;
    this.prefix = options.prefix ?? 'agentgw:';
    this.epochKey = `${this.prefix}epoch`;
    this.holdTtl = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
    this.recordTtl = Math.max(options.reservationRecordTtlMs ?? DEFAULT_RESERVATION_RECORD_TTL_MS, this.holdTtl);
    this.traceTtl = options.traceTtlMs ?? DEFAULT_TRACE_TTL_MS;
    this.loadSeed = options.loadSeed;
    this.log = options.log;
    this.cooldownMs = options.breakerCooldownMs ?? 1_000;
    this.rebuildWaitMs = options.rebuildWaitMs ?? 1_000;
    if (client.status === 'ready') this.everReady = true;
    client.on('ready', () => this.onReady());
    client.on('close', () => {
      if (this.everReady) this.wasDown = true;
    });
    // Connection errors are seen by the calls that fail; without a listener ioredis would print each one.
    client.on('error', () => undefined);
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const now = req.now.getTime();
    const ticket: Ticket = {
      nonce: randomUUID(),
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
      return { ok: true, reservationId: encodeTicket(ticket) };
    }
    const windows = this.windows(ticket);
    const keys = [this.epochKey, this.recordKey(ticket), ...windows.flatMap((w) => [w.spend, w.holds])];
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
          member(ticket),
          now + this.holdTtl,
          this.recordTtl,
          EPOCH_TTL_MS,
          oneShotTraceLimit,
          ...perWindow,
        ),
      );
      if (ok === 1) return { ok: true, reservationId: encodeTicket({ ...ticket, epoch: String(which) }) };
      if (ok === -1) {
        // Redis lost the spend it held: rebuilt (here or on another node) before this request may pass.
        if (attempt >= 2) throw new CountersUnavailableError('the counters are being rebuilt after Redis lost its state');
        await this.awaitRebuild();
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
    return this.daySpend(this.spendKey('d', utcDayKey(now), agentId), this.spendKey('m', utcMonthKey(now), agentId));
  }

  async tenantSpend(tenantId: string, now: Date): Promise<{ day: number; month: number }> {
    return this.daySpend(this.spendKey('td', utcDayKey(now), tenantId), this.spendKey('tm', utcMonthKey(now), tenantId));
  }

  /** Recorded spend of a day and a month window (an agent's or a tenant's). */
  private async daySpend(dayKey: string, monthKey: string): Promise<{ day: number; month: number }> {
    for (let attempt = 0; ; attempt++) {
      const [day, month, seeded] = await this.call(() => this.redis.agwSpend(this.epochKey, dayKey, monthKey));
      // Without an epoch these numbers may be what is left after Redis lost its state: not an answer to give.
      if (seeded === 1 || attempt >= 1) {
        if (seeded !== 1) throw new CountersUnavailableError('the counters are being rebuilt after Redis lost its state');
        return { day: fromUnits(Number(day)), month: fromUnits(Number(month)) };
      }
      await this.awaitRebuild();
    }
  }

  async traceSpend(traceId: string): Promise<number> {
    const spent = await this.call(() => this.redis.hget(this.traceKey('spend', traceId), 'spent'));
    return fromUnits(Number(spent ?? 0));
  }

  async rateLimit(req: RateLimitRequest): Promise<RateLimitResult> {
    if (req.rpm === null && req.tpm === null) return { ok: true };
    const { minute, elapsedMs } = minuteOf(req.now);
    const tokens = tokenCount(req.tokens);
    const [ok, which, ...counts] = await this.call(() =>
      this.redis.agwRateLimit(
        this.rateKey(minute, req.agentId),
        this.rateKey(minute - 1, req.agentId),
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
    await this.call(() => this.redis.agwAddTokens(this.rateKey(minuteOf(now).minute, agentId), Math.round(tokens), RATE_KEY_TTL_MS));
  }

  async countRepeat(req: RepeatRequest): Promise<number> {
    const now = req.now.getTime();
    const windowMs = Math.max(1, Math.round(req.windowSeconds * 1000));
    return this.call(() => this.redis.agwCountRepeat(`${this.prefix}repeat:${req.key}`, now, windowMs, `${now}:${randomUUID()}`, MAX_REPEATS_TRACKED));
  }

  /**
   * At start-up: beside a Redis that kept its state (the epoch is there), fills only windows it has no record of; beside
   * one that has none (new, or restarted without persistence), rebuilds from these rows and writes the epoch.
   */
  async seed(rows: SeedRows): Promise<void> {
    const seeded = await this.call(() => this.redis.exists(this.epochKey));
    if (seeded === 1) return this.writeSeed(rows, 'fill');
    // A rebuild already under way (a request found the epoch missing first) reads newer rows than these.
    await (this.rebuilding ?? this.startRebuild(async () => rows));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (!this.ownsClient) return;
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  /** Whether the circuit breaker refuses calls right now (for tests and metrics). */
  get breakerOpen(): boolean {
    return this.openUntil > Date.now();
  }

  /**
   * Runs one Redis call through the circuit breaker. Every failure comes out as CountersUnavailableError: a lost
   * connection or a timeout counts towards opening the breaker; an error reply (the server answered) does not.
   */
  private async call<T>(op: () => Promise<T>): Promise<T> {
    if (this.redis.status !== 'ready') {
      const connecting = this.redis.status === 'wait' || this.redis.status === 'connecting' || this.redis.status === 'connect';
      // Only the very first connection is waited for (a node starting); afterwards a Redis that is away fails at once.
      if (this.everReady || !connecting || !(await this.firstConnect())) {
        throw new CountersUnavailableError(`Redis is not connected (${this.redis.status})`);
      }
    }
    const probe = this.openUntil !== 0;
    if (probe) {
      if (this.openUntil > Date.now() || this.probing) throw new CountersUnavailableError('Redis failed recently: the circuit breaker is open');
      this.probing = true;
    }
    try {
      const result = await op();
      if (this.failures > 0 || probe) {
        if (probe) this.log?.warn({}, 'Redis counters answer again: circuit breaker closed');
        this.failures = 0;
        this.openUntil = 0;
        this.reconcileLater();
      }
      return result;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const replied = err instanceof Error && err.name === 'ReplyError' && !UNAVAILABLE_REPLY.test(message);
      if (replied && probe) {
        // The server answered (with an error of its own): it is reachable again.
        this.failures = 0;
        this.openUntil = 0;
      } else if (!replied && (++this.failures >= BREAKER_THRESHOLD || probe)) {
        if (this.openUntil === 0) this.log?.error({ err }, 'Redis counters failing: circuit breaker open, requests that need counters are refused');
        this.openUntil = Date.now() + this.cooldownMs;
      }
      throw err instanceof CountersUnavailableError ? err : new CountersUnavailableError(`Redis counters: ${message}`, { cause: err });
    } finally {
      if (probe) this.probing = false;
    }
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

  /** Connected again after an outage: rebuild at once if Redis lost its state, so no request waits for it later. */
  private onReady(): void {
    const first = !this.everReady;
    this.everReady = true;
    if (first || !this.wasDown || this.closed) return;
    this.wasDown = false;
    this.log?.warn({}, 'Redis counters reconnected');
    // A probe is not needed to find out: the connection answers.
    this.failures = 0;
    this.openUntil = 0;
    this.reconcileLater();
  }

  /**
   * After an outage: a Redis without its epoch is rebuilt now; one that kept its state but missed settles while it was
   * away is raised to the usage rows (the 'max' seed: it never counts anything twice).
   */
  private reconcileLater(): void {
    void (async () => {
      const seeded = await this.call(() => this.redis.exists(this.epochKey));
      if (seeded !== 1) return this.rebuild();
      if (this.lostWrites === 0 || !this.loadSeed || Date.now() - this.lastReconcile < RECONCILE_INTERVAL_MS) return;
      this.lostWrites = 0;
      this.lastReconcile = Date.now();
      await this.writeSeed(await this.loadSeed(), 'max');
    })().catch((err) => this.log?.warn({ err }, 'reconciling the Redis counters after an outage failed'));
  }

  /** Waits (at most rebuildWaitMs) for the rebuild of lost counters, starting it unless one is under way on this node. */
  private async awaitRebuild(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CountersUnavailableError('the counters are being rebuilt after Redis lost its state')), this.rebuildWaitMs);
      timer.unref();
    });
    try {
      await Promise.race([this.rebuild(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One rebuild at a time on this node; several nodes may rebuild at once (each write only raises spend). */
  private rebuild(): Promise<void> {
    if (this.rebuilding) return this.rebuilding;
    if (Date.now() - this.lastRebuildFailure < REBUILD_RETRY_MS) {
      return Promise.reject(new CountersUnavailableError('rebuilding the counters failed a moment ago'));
    }
    return this.startRebuild(this.loadSeed ?? (async () => ({ now: new Date(), agents: [], traces: [] })));
  }

  private startRebuild(load: () => Promise<SeedRows>): Promise<void> {
    const started = Date.now();
    const run = (async () => {
      // The marker goes if Redis loses its state again meanwhile: the epoch is then not written over half a seed.
      const marker = `${this.prefix}rebuild:${randomUUID()}`;
      await this.call(() => this.redis.set(marker, '1', 'PX', REBUILD_MARKER_TTL_MS));
      this.log?.warn({}, 'Redis counters have lost their state (no epoch): rebuilding agent, trace and tenant spend from the usage rows');
      const rows = await load();
      // Costs settled after this moment are not in the rows: settles of holds of the lost state add them (FINISH).
      const readEnd = Date.now();
      await this.writeSeed(rows, 'max');
      const done = await this.call(() => this.redis.agwCommitEpoch(this.epochKey, marker, `${randomUUID().slice(0, 8)}|${readEnd}`, EPOCH_TTL_MS));
      if (done === 0) throw new CountersUnavailableError('Redis lost its state again during the rebuild');
      this.lostWrites = 0;
      this.log?.warn(
        { agents: rows.agents.length, traces: rows.traces.length, ms: Date.now() - started, committed: done === 1 },
        'Redis counters rebuilt from the usage rows',
      );
    })();
    const tracked = run.then(
      () => {
        this.rebuilding = undefined;
      },
      (err: unknown) => {
        this.rebuilding = undefined;
        this.lastRebuildFailure = Date.now();
        this.log?.error({ err }, 'rebuilding the Redis counters failed; requests that need them are refused until it succeeds');
        throw err instanceof CountersUnavailableError ? err : new CountersUnavailableError('rebuilding the counters failed', { cause: err });
      },
    );
    tracked.catch(() => undefined);
    this.rebuilding = tracked;
    return tracked;
  }

  private async writeSeed(rows: SeedRows, mode: 'fill' | 'max'): Promise<void> {
    const now = rows.now.getTime();
    const day = utcDayKey(rows.now);
    const month = utcMonthKey(rows.now);
    const dayTtl = dayKeyEnd(day) + WINDOW_GRACE_MS - now;
    const monthTtl = monthKeyEnd(month) + WINDOW_GRACE_MS - now;
    const writes: Array<[string, number, number]> = [];
    for (const a of rows.agents) {
      writes.push([this.spendKey('d', day, a.agentId), toUnits(a.day), dayTtl]);
      writes.push([this.spendKey('m', month, a.agentId), toUnits(a.month), monthTtl]);
    }
    for (const t of rows.traces) writes.push([this.traceKey('spend', t.traceId), toUnits(t.cost), this.traceTtl]);
    for (const t of rows.tenants ?? []) {
      writes.push([this.spendKey('td', day, t.tenantId), toUnits(t.day), dayTtl]);
      writes.push([this.spendKey('tm', month, t.tenantId), toUnits(t.month), monthTtl]);
    }
    // 'fill': only windows Redis has no record of, since other nodes may already have counted newer spend.
    for (let i = 0; i < writes.length; i += 1000) {
      await Promise.all(writes.slice(i, i + 1000).map(([key, units, ttl]) => this.call(() => this.redis.agwSeed(key, units, ttl, mode))));
    }
  }

  private async finish(reservationId: string, actualUnits: number): Promise<boolean> {
    const ticket = decodeTicket(reservationId);
    if (!ticket) return false;
    if (ticket.epoch === '' && actualUnits === 0) return true; // nothing was held, nothing to record
    try {
      let done = await this.finishOnce(ticket, actualUnits, Date.now());
      if (done === -1 && actualUnits > 0) {
        // Redis lost its state and is being rebuilt: whether the rebuild reads this cost's usage row is a race, so once it
        // is done the cost is added (counted twice at worst, never missed: budgets fail closed).
        await this.awaitRebuild();
        // As settled after the rebuild's read, even within the same millisecond (else the script would take it for read).
        done = await this.finishOnce(ticket, actualUnits, Number.MAX_SAFE_INTEGER);
      } else if (done === -1) {
        this.rebuild().catch(() => undefined);
      }
      return done === 1 || done === 2;
    } catch (err) {
      // The usage row still has the cost; once Redis answers again it is brought back (reconcileLater).
      if (actualUnits > 0) this.lostWrites++;
      throw err;
    }
  }

  /** One settle or release: 1 done, 2 added without a hold (reserved under a lost state), 0 nothing to do, -1 no epoch. */
  private async finishOnce(ticket: Ticket, actualUnits: number, settledAt: number): Promise<number> {
    const windows = this.windows(ticket);
    const ttls = windows.map((w) => w.ttl);
    if (ticket.epoch === '') {
      // Nothing was held: only a cost to record.
      const keys = [this.epochKey, ...windows.map((w) => w.spend)];
      return this.call(() => this.redis.agwAddSpend(keys.length, ...keys, actualUnits, settledAt, ...ttls));
    }
    const keys = [this.epochKey, this.recordKey(ticket), ...windows.flatMap((w) => [w.spend, w.holds])];
    return this.call(() => this.redis.agwFinish(keys.length, ...keys, member(ticket), ticket.amount, actualUnits, ticket.epoch, settledAt, ...ttls));
  }

  /**
   * The windows a reservation counts in, in the order RESERVE checks them: the agent's day and month, its trace, its
   * tenant's day and month. TTLs run from the time of the reservation (relative, so injected clocks work too).
   */
  private windows(t: Ticket): WindowKeys[] {
    const month = monthKeyOfDay(t.day);
    const dayTtl = dayKeyEnd(t.day) + WINDOW_GRACE_MS - t.createdAt;
    const monthTtl = monthKeyEnd(month) + WINDOW_GRACE_MS - t.createdAt;
    const windows: WindowKeys[] = [
      { name: 'daily', spend: this.spendKey('d', t.day, t.agentId), holds: this.holdsKey('d', t.day, t.agentId), ttl: dayTtl },
      { name: 'monthly', spend: this.spendKey('m', month, t.agentId), holds: this.holdsKey('m', month, t.agentId), ttl: monthTtl },
    ];
    if (t.traceId !== null) {
      windows.push({ name: 'trace', spend: this.traceKey('spend', t.traceId), holds: this.traceKey('holds', t.traceId), ttl: this.traceTtl });
    }
    if (t.tenantId !== null) {
      windows.push(
        { name: 'tenant_daily', spend: this.spendKey('td', t.day, t.tenantId), holds: this.holdsKey('td', t.day, t.tenantId), ttl: dayTtl },
        { name: 'tenant_monthly', spend: this.spendKey('tm', month, t.tenantId), holds: this.holdsKey('tm', month, t.tenantId), ttl: monthTtl },
      );
    }
    return windows;
  }

  private recordKey(t: Ticket): string {
    return `${this.prefix}res:${t.nonce}`;
  }

  /** Spend of an agent's (d, m) or a tenant's (td, tm) window: the kinds keep ids that look alike apart. */
  private spendKey(kind: WindowKind, window: string, id: string): string {
    return `${this.prefix}spend:${kind}:${window}:${id}`;
  }

  private holdsKey(kind: WindowKind, window: string, id: string): string {
    return `${this.prefix}holds:${kind}:${window}:${id}`;
  }

  private traceKey(kind: 'spend' | 'holds', traceId: string): string {
    return `${this.prefix}${kind}:t:${traceId}`;
  }

  private rateKey(minute: number, agentId: string): string {
    return `${this.prefix}rate:${minute}:${agentId}`;
  }
}

type WindowKind = 'd' | 'm' | 'td' | 'tm';

const member = (t: Ticket) => `${t.nonce}:${t.amount}`;

function encodeTicket(t: Ticket): string {
  const fields: unknown[] = [t.agentId, t.traceId, t.day, t.amount, t.createdAt];
  if (t.epoch !== '' || t.tenantId !== null) fields.push(t.epoch);
  if (t.tenantId !== null) fields.push(t.tenantId);
  return `${t.nonce}.${Buffer.from(JSON.stringify(fields)).toString('base64url')}`;
}

function decodeTicket(id: string): Ticket | undefined {
  const dot = id.indexOf('.');
  if (dot <= 0) return undefined;
  try {
    const [agentId, traceId, day, amount, createdAt, epoch = '', tenantId = null] = JSON.parse(Buffer.from(id.slice(dot + 1), 'base64url').toString('utf8')) as unknown[];
    if (typeof agentId !== 'string' || (traceId !== null && typeof traceId !== 'string') || typeof day !== 'string') return undefined;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || !Number.isSafeInteger(amount) || typeof createdAt !== 'number' || typeof epoch !== 'string') return undefined;
    if (tenantId !== null && typeof tenantId !== 'string') return undefined;
    return { nonce: id.slice(0, dot), agentId, traceId, tenantId, day, amount: amount as number, createdAt, epoch };
  } catch {
    return undefined;
  }
}
