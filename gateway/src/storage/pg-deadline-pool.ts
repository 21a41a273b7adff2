import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { DatabaseTimeoutError } from './store-errors.js';
import type { StoreHealth } from './store-health.js';

/** What this module uses of pg's Pool and of a client checked out of it. */
export interface PgPool {
  connect(): Promise<PgClient>;
  end(): Promise<void>;
}
export interface PgClient {
  query(sql: string, params: unknown[]): Promise<PostgresQueryResult<unknown>>;
  /** With an error (or true), pg-pool closes the connection instead of pooling it. */
  release(err?: Error | boolean): void;
}

/**
 * pg's pool for Kysely, with a deadline on every database call: from asking for a connection to the last statement run
 * on it (a transaction as a whole), `timeoutMs`. A call past it fails with DatabaseTimeoutError; its connection is then
 * closed rather than pooled, so a statement the server answers late can never be read as another call's answer, and
 * a frozen server holds no pooled connection. Connecting is bounded by pg's own connectionTimeoutMillis (the same
 * value); the server's statement_timeout (the same value too) ends a statement whose client gave up. Each outcome is
 * reported to `health`.
 */
export function deadlinePool(pool: PgPool, timeoutMs: number, health: StoreHealth): PostgresPool {
  // One wrapper per connection, so that Kysely (which keys its connections by the client it is given) sees a pooled
  // connection again as the same one, and runs its onCreateConnection once per connection.
  const wrappers = new WeakMap<PgClient, DeadlineClient>();
  return {
    async connect() {
      const deadline = performance.now() + timeoutMs;
      let client: PgClient;
      try {
        client = await pool.connect();
      } catch (err) {
        health.failed(err);
        throw err;
      }
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = new DeadlineClient(client, timeoutMs, health);
        wrappers.set(client, wrapper);
      }
      wrapper.checkedOut(deadline);
      return wrapper as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}

class DeadlineClient {
  private deadline = 0;
  /** Set once the deadline passed: every later statement fails at once, and release closes the connection. */
  private expired: DatabaseTimeoutError | undefined;

  constructor(
    private readonly client: PgClient,
    private readonly timeoutMs: number,
    private readonly health: StoreHealth,
  ) {}

  checkedOut(deadline: number): void {
    this.deadline = deadline;
    this.expired = undefined;
  }

  query(sql: string, params: readonly unknown[]): Promise<PostgresQueryResult<unknown>> {
    if (this.expired) return Promise.reject(this.expired);
    const left = this.deadline - performance.now();
    if (left <= 0) return Promise.reject(this.expire());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(this.expire()), left);
      this.client.query(sql, [...params]).then(
        (result) => {
          clearTimeout(timer);
          if (this.expired) return;
          this.health.succeeded();
          resolve(result);
        },
        (err: unknown) => {
          clearTimeout(timer);
          // Past the deadline the connection is being closed: its "Connection terminated" is nobody's answer.
          if (this.expired) return;
          this.health.failed(err);
          reject(err);
        },
      );
    });
  }

  release(): void {
    this.client.release(this.expired ?? undefined);
  }

  private expire(): DatabaseTimeoutError {
    this.expired ??= new DatabaseTimeoutError(this.timeoutMs);
    this.health.failed(this.expired);
    return this.expired;
  }
}
