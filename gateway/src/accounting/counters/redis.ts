import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { dayKeyEnd, monthKeyEnd, monthKeyOfDay, nextUtcDayStart, nextUtcMonthStart, utcDayKey, utcMonthKey } from '../budget-window.js';
import { ADD_TOKENS, COUNT_REPEAT, FINISH, RATE_LIMIT, RESERVE, SEED, SPEND } from './redis-scripts.js';
import { minuteOf, RATE_WINDOW_MS, refusal, tokenCount } from './sliding-window.js';
import {
  DEFAULT_RESERVATION_RECORD_TTL_MS,
  DEFAULT_RESERVATION_TTL_MS,
  DEFAULT_TRACE_TTL_MS,
  MAX_REPEATS_TRACKED,
  type BudgetWindow,
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

type Arg = string | number;

/** The scripts, registered with defineCommand so each call is one EVALSHA (ioredis falls back to EVAL once per script). */
interface ScriptCommands {
  agwReserve(numKeys: number, ...args: Arg[]): Promise<[number, BudgetWindow?, string?]>;
  agwFinish(numKeys: number, ...args: Arg[]): Promise<number>;
  agwSpend(dayKey: string, monthKey: string): Promise<[string, string]>;
  agwRateLimit(cur: string, prev: string, ...args: Arg[]): Promise<[number, ('rpm' | 'tpm')?, ...string[]]>;
  agwAddTokens(cur: string, ...args: Arg[]): Promise<number>;
  agwCountRepeat(key: string, ...args: Arg[]): Promise<number>;
  agwSeed(key: string, ...args: Arg[]): Promise<number>;
}

export interface RedisCounterOptions extends CounterOptions {
  /** A client to use (not closed by close()); otherwise one is made from `url`. */
  client?: Redis;
  url?: string;
  /** Prefix of every key (default `agentgw:`), so tests and several deployments can share one Redis. */
  prefix?: string;
}

/** What a reservation id carries, so settle knows its keys without a lookup. */
interface Ticket {
  nonce: string;
  agentId: string;
  traceId: string | null;
  day: string;
  amount: number;
  createdAt: number;
}

const RATE_KEY_TTL_MS = 3 * RATE_WINDOW_MS;

/**
 * Counters in Redis, for several gateway nodes: every operation is one Lua script, atomic across nodes.
 * Keys carry the UTC day or month and expire a day after their window ends; traces expire `traceTtlMs` after their last request.
 * Keys of one budget operation span an agent and a trace, so this needs a single Redis (or primary), not Redis Cluster.
 */
export class RedisCounters implements Counters {
  readonly kind = 'redis' as const;
  private readonly redis: Redis & ScriptCommands;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly holdTtl: number;
  private readonly recordTtl: number;
  private readonly traceTtl: number;

  constructor(options: RedisCounterOptions = {}) {
    this.ownsClient = options.client === undefined;
    const client = options.client ?? new Redis(options.url ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 2 });
    client.defineCommand('agwReserve', { lua: RESERVE });
    client.defineCommand('agwFinish', { lua: FINISH });
    client.defineCommand('agwSpend', { lua: SPEND, numberOfKeys: 2 });
    client.defineCommand('agwRateLimit', { lua: RATE_LIMIT, numberOfKeys: 2 });
    client.defineCommand('agwAddTokens', { lua: ADD_TOKENS, numberOfKeys: 1 });
    client.defineCommand('agwCountRepeat', { lua: COUNT_REPEAT, numberOfKeys: 1 });
    client.defineCommand('agwSeed', { lua: SEED, numberOfKeys: 1 });
    this.redis = client as Redis & ScriptCommands;
    this.prefix = options.prefix ?? 'agentgw:';
    this.holdTtl = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
    this.recordTtl = Math.max(options.reservationRecordTtlMs ?? DEFAULT_RESERVATION_RECORD_TTL_MS, this.holdTtl);
    this.traceTtl = options.traceTtlMs ?? DEFAULT_TRACE_TTL_MS;
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const now = req.now.getTime();
    const ticket: Ticket = {
      nonce: randomUUID(),
      agentId: req.agentId,
      traceId: req.traceId,
      day: utcDayKey(req.now),
      amount: toUnits(req.amount),
      createdAt: now,
    };
    const keys = this.ticketKeys(ticket);
    const limit = (usd: number | null) => String(limitToUnits(usd) ?? '');
    const [ok, which, used] = await this.redis.agwReserve(
      keys.length,
      ...keys,
      now,
      ticket.amount,
      member(ticket),
      now + this.holdTtl,
      limit(req.dailyLimit),
      limit(req.monthlyLimit),
      limit(req.traceLimit),
      ...this.ttls(ticket),
      this.recordTtl,
    );
    if (ok === 1) return { ok: true, reservationId: encodeTicket(ticket) };
    const w = which as BudgetWindow;
    const resetAt = w === 'daily' ? nextUtcDayStart(req.now) : w === 'monthly' ? nextUtcMonthStart(req.now) : null;
    const limitUsd = (w === 'daily' ? req.dailyLimit : w === 'monthly' ? req.monthlyLimit : req.traceLimit) as number;
    return { ok: false, which: w, resetAt, limit: limitUsd, used: fromUnits(Number(used)) };
  }

  async settle(reservationId: string, actualCost: number): Promise<boolean> {
    return this.finish(reservationId, toUnits(actualCost));
  }

  async release(reservationId: string): Promise<boolean> {
    return this.finish(reservationId, 0);
  }

  async spend(agentId: string, now: Date): Promise<{ day: number; month: number }> {
    const [day, month] = await this.redis.agwSpend(this.spendKey('d', utcDayKey(now), agentId), this.spendKey('m', utcMonthKey(now), agentId));
    return { day: fromUnits(Number(day)), month: fromUnits(Number(month)) };
  }

  async traceSpend(traceId: string): Promise<number> {
    const spent = await this.redis.hget(this.traceKey('spend', traceId), 'spent');
    return fromUnits(Number(spent ?? 0));
  }

  async rateLimit(req: RateLimitRequest): Promise<RateLimitResult> {
    if (req.rpm === null && req.tpm === null) return { ok: true };
    const { minute, elapsedMs } = minuteOf(req.now);
    const tokens = tokenCount(req.tokens);
    const [ok, which, ...counts] = await this.redis.agwRateLimit(
      this.rateKey(minute, req.agentId),
      this.rateKey(minute - 1, req.agentId),
      req.rpm ?? '',
      req.tpm ?? '',
      tokens,
      elapsedMs,
      RATE_KEY_TTL_MS,
    );
    if (ok === 1) return { ok: true };
    const [prevRequests, curRequests, prevTokens, curTokens] = counts.map(Number);
    return refusal(which as 'rpm' | 'tpm', req, tokens, { prevRequests, curRequests, prevTokens, curTokens }, elapsedMs);
  }

  async addTokens(agentId: string, tokens: number, now: Date = new Date()): Promise<void> {
    if (!Number.isFinite(tokens) || Math.round(tokens) === 0) return;
    await this.redis.agwAddTokens(this.rateKey(minuteOf(now).minute, agentId), Math.round(tokens), RATE_KEY_TTL_MS);
  }

  async countRepeat(req: RepeatRequest): Promise<number> {
    const now = req.now.getTime();
    const windowMs = Math.max(1, Math.round(req.windowSeconds * 1000));
    return this.redis.agwCountRepeat(`${this.prefix}repeat:${req.key}`, now, windowMs, `${now}:${randomUUID()}`, MAX_REPEATS_TRACKED);
  }

  async seed(rows: SeedRows): Promise<void> {
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
    // Only windows Redis has no record of: other nodes may already have counted newer spend.
    for (let i = 0; i < writes.length; i += 1000) {
      await Promise.all(writes.slice(i, i + 1000).map(([key, units, ttl]) => this.redis.agwSeed(key, units, ttl)));
    }
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.redis.quit();
  }

  private async finish(reservationId: string, actualUnits: number): Promise<boolean> {
    const ticket = decodeTicket(reservationId);
    if (!ticket) return false;
    const keys = this.ticketKeys(ticket);
    const done = await this.redis.agwFinish(keys.length, ...keys, member(ticket), ticket.amount, actualUnits, ...this.ttls(ticket));
    return done === 1;
  }

  /** Record key, then (spend hash, holds zset) per window. */
  private ticketKeys(t: Ticket): string[] {
    const month = monthKeyOfDay(t.day);
    const keys = [
      `${this.prefix}res:${t.nonce}`,
      this.spendKey('d', t.day, t.agentId),
      `${this.prefix}holds:d:${t.day}:${t.agentId}`,
      this.spendKey('m', month, t.agentId),
      `${this.prefix}holds:m:${month}:${t.agentId}`,
    ];
    if (t.traceId !== null) keys.push(this.traceKey('spend', t.traceId), this.traceKey('holds', t.traceId));
    return keys;
  }

  /** TTLs of the day, month and trace keys, from the time of the reservation (relative, so injected clocks work too). */
  private ttls(t: Ticket): number[] {
    return [
      dayKeyEnd(t.day) + WINDOW_GRACE_MS - t.createdAt,
      monthKeyEnd(monthKeyOfDay(t.day)) + WINDOW_GRACE_MS - t.createdAt,
      this.traceTtl,
    ];
  }

  private spendKey(kind: 'd' | 'm', window: string, agentId: string): string {
    return `${this.prefix}spend:${kind}:${window}:${agentId}`;
  }

  private traceKey(kind: 'spend' | 'holds', traceId: string): string {
    return `${this.prefix}${kind}:t:${traceId}`;
  }

  private rateKey(minute: number, agentId: string): string {
    return `${this.prefix}rate:${minute}:${agentId}`;
  }
}

const member = (t: Ticket) => `${t.nonce}:${t.amount}`;

function encodeTicket(t: Ticket): string {
  const body = Buffer.from(JSON.stringify([t.agentId, t.traceId, t.day, t.amount, t.createdAt])).toString('base64url');
  return `${t.nonce}.${body}`;
}

function decodeTicket(id: string): Ticket | undefined {
  const dot = id.indexOf('.');
  if (dot <= 0) return undefined;
  try {
    const [agentId, traceId, day, amount, createdAt] = JSON.parse(Buffer.from(id.slice(dot + 1), 'base64url').toString('utf8')) as unknown[];
    if (typeof agentId !== 'string' || (traceId !== null && typeof traceId !== 'string') || typeof day !== 'string') return undefined;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || !Number.isSafeInteger(amount) || typeof createdAt !== 'number') return undefined;
    return { nonce: id.slice(0, dot), agentId, traceId, day, amount: amount as number, createdAt };
  } catch {
    return undefined;
  }
}
