import { isStoreOutage } from './store-errors.js';

/** Where the store reports that it lost, and regained, its database (a pino logger fits). */
export interface StoreLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Whether the database is known to be down: the last call failed for want of it (unreachable, or no answer within
 * limits.db_timeout_ms) and none has succeeded since. Every call reports here, the snapshot's polls included (at
 * least one every 2 s while it is away), so the state follows the database within a poll. Requests that would need
 * the database and can be refused before any work (a stored Responses turn) are refused at once while it is down,
 * instead of each waiting for the deadline. One log line when it goes, one when it is back.
 */
export class StoreHealth {
  private downSince: number | undefined;
  private failures = 0;

  constructor(private readonly log?: StoreLog) {}

  get reachable(): boolean {
    return this.downSince === undefined;
  }

  succeeded(): void {
    if (this.downSince === undefined) return;
    this.log?.warn({ after_ms: Date.now() - this.downSince, failed_calls: this.failures }, 'the database answers again');
    this.downSince = undefined;
    this.failures = 0;
  }

  /** A call failed: counted as an outage only when the error says the database is away (not a query it refused). */
  failed(err: unknown): void {
    if (!isStoreOutage(err)) return;
    this.failures++;
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    const e = err as { message?: unknown; code?: unknown };
    this.log?.error({ err: { message: String(e?.message ?? err), code: e?.code } }, 'the database is unreachable; requests that need it get 503 store_unavailable until it answers');
  }
}
