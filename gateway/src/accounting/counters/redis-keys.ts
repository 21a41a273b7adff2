// Where the Redis counters keep what, and what a reservation id carries so that its settle needs no lookup.
import { dayKeyEnd, monthKeyEnd, monthKeyOfDay } from '../budget-window.js';
import type { BudgetWindow } from './spec.js';
import { WINDOW_GRACE_MS } from './units.js';

/** What a reservation id carries, so settle knows its keys without a lookup. */
export interface Ticket {
  /** The reservation's name: the request id when it was given (see ReserveRequest.requestId), else random. */
  nonce: string;
  agentId: string;
  traceId: string | null;
  /** The tenant whose pool the request counts in; null when the reservation named none. */
  tenantId: string | null;
  day: string;
  /** Units of 1e-10 USD. */
  amount: number;
  createdAt: number;
  /** The epoch id the hold was made (or last put back) under; '' for a request no limit applied to, which holds nothing in Redis. */
  epoch: string;
}

/** One budget window of a reservation: its name, spend hash, holds zset and key TTL (ms from the reservation). */
export interface WindowKeys {
  name: BudgetWindow;
  spend: string;
  holds: string;
  ttl: number;
}

type WindowKind = 'd' | 'm' | 'td' | 'tm';

/** The prefix of every key when none is configured. */
export const DEFAULT_REDIS_PREFIX = 'agentgw:';

export class RedisKeys {
  readonly epoch: string;
  /** The nodes a new epoch waits for (see GATE). */
  readonly waiting: string;

  constructor(readonly prefix: string) {
    this.epoch = `${prefix}epoch`;
    this.waiting = `${prefix}epoch:waiting`;
  }

  /**
   * The windows a reservation counts in, in the order RESERVE checks them: the agent's day and month, its trace, its
   * tenant's day and month. TTLs run from the time of the reservation (relative, so injected clocks work too).
   */
  windows(t: Ticket, traceTtl: number): WindowKeys[] {
    const month = monthKeyOfDay(t.day);
    const dayTtl = dayKeyEnd(t.day) + WINDOW_GRACE_MS - t.createdAt;
    const monthTtl = monthKeyEnd(month) + WINDOW_GRACE_MS - t.createdAt;
    const windows: WindowKeys[] = [
      { name: 'daily', spend: this.spend('d', t.day, t.agentId), holds: this.holds('d', t.day, t.agentId), ttl: dayTtl },
      { name: 'monthly', spend: this.spend('m', month, t.agentId), holds: this.holds('m', month, t.agentId), ttl: monthTtl },
    ];
    if (t.traceId !== null) {
      windows.push({ name: 'trace', spend: this.trace('spend', t.traceId), holds: this.trace('holds', t.traceId), ttl: traceTtl });
    }
    if (t.tenantId !== null) {
      windows.push(
        { name: 'tenant_daily', spend: this.spend('td', t.day, t.tenantId), holds: this.holds('td', t.day, t.tenantId), ttl: dayTtl },
        { name: 'tenant_monthly', spend: this.spend('tm', month, t.tenantId), holds: this.holds('tm', month, t.tenantId), ttl: monthTtl },
      );
    }
    return windows;
  }

  /**
   * A reservation's record: '1' while it is open, 'r' once put back after a loss (see REASSERT), 'lost' or 'done' once its
   * cost is counted (see FINISH, ADD_SPEND, MARK), gone once settled otherwise.
   */
  record(nonce: string): string {
    return `${this.prefix}res:${nonce}`;
  }

  /** Spend of an agent's (d, m) or a tenant's (td, tm) window: the kinds keep ids that look alike apart. */
  spend(kind: WindowKind, window: string, id: string): string {
    return `${this.prefix}spend:${kind}:${window}:${id}`;
  }

  holds(kind: WindowKind, window: string, id: string): string {
    return `${this.prefix}holds:${kind}:${window}:${id}`;
  }

  trace(kind: 'spend' | 'holds', traceId: string): string {
    return `${this.prefix}${kind}:t:${traceId}`;
  }

  rate(minute: number, agentId: string): string {
    return `${this.prefix}rate:${minute}:${agentId}`;
  }

  /** The marker of the node that seeds an epoch (one at a time). */
  seeding(epochId: string): string {
    return `${this.prefix}epoch:seeding:${epochId}`;
  }
}

/** The hold's member in the holds zsets: its nonce and amount (the sweep in RESERVE reads the amount back). */
export const holdMember = (t: Ticket) => `${t.nonce}:${t.amount}`;

/** A request id used as the reservation's name when it is one (no '.', ':' or spaces), else a random name. */
export function nonceOf(requestId: string | undefined, random: () => string): string {
  return requestId !== undefined && /^[A-Za-z0-9_-]{1,128}$/.test(requestId) ? requestId : random();
}

/** An epoch value: '<id>|<ms the usage rows were read by>', or '<id>|0' while it waits for its seed (see GATE). */
export function parseEpoch(value: string): { id: string; seeded: boolean } {
  const bar = value.indexOf('|');
  if (bar === -1) return { id: value, seeded: true };
  return { id: value.slice(0, bar), seeded: value.slice(bar + 1) !== '0' };
}

export function encodeTicket(t: Ticket): string {
  const fields: unknown[] = [t.agentId, t.traceId, t.day, t.amount, t.createdAt];
  if (t.epoch !== '' || t.tenantId !== null) fields.push(t.epoch);
  if (t.tenantId !== null) fields.push(t.tenantId);
  return `${t.nonce}.${Buffer.from(JSON.stringify(fields)).toString('base64url')}`;
}

export function decodeTicket(id: string): Ticket | undefined {
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
