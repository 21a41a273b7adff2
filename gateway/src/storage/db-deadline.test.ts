import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { describe, expect, test } from 'vitest';
import { toAgentgwError } from '../http/error-handler.js';
import { TEST_PG_URL, dropSchema } from '../test-support/pg.js';
import { openStore } from './open-store.js';
import { deadlinePool, type PgClient } from './pg-deadline-pool.js';
import { SqliteUsageThread } from './sqlite-usage-thread.js';
import { DatabaseTimeoutError, isStoreOutage, isStoreUnavailableError } from './store-errors.js';
import { StoreHealth } from './store-health.js';

/** A promise and its resolvers. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A pg pool whose statements answer only when the test says so. */
function fakePool() {
  const statements: Array<{ sql: string; answer: ReturnType<typeof deferred<{ command: 'SELECT'; rowCount: number; rows: unknown[] }>> }> = [];
  const released: unknown[] = [];
  const client: PgClient = {
    query(q) {
      const answer = deferred<{ command: 'SELECT'; rowCount: number; rows: unknown[] }>();
      statements.push({ sql: q, answer });
      return answer.promise;
    },
    release(err) {
      released.push(err);
    },
  };
  let connectDelay = 0;
  return {
    statements,
    released,
    setConnectDelay: (ms: number) => (connectDelay = ms),
    pool: {
      connect: () => new Promise<PgClient>((r) => setTimeout(() => r(client), connectDelay)),
      end: async () => undefined,
    },
  };
}

const within = async <T>(p: Promise<T>, ms: number): Promise<{ value?: T; error?: unknown; ms: number }> => {
  const t0 = performance.now();
  const timer = new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`still waiting after ${ms} ms`)), ms));
  try {
    return { value: await Promise.race([p, timer]), ms: performance.now() - t0 };
  } catch (error) {
    return { error, ms: performance.now() - t0 };
  }
};

describe('the deadline of a PostgreSQL call (connection and statements share limits.db_timeout_ms)', () => {
  test('a statement the server does not answer fails at the deadline; its connection is closed, not pooled; the store is known down until a call succeeds', async () => {
    const fake = fakePool();
    const health = new StoreHealth();
    const pool = deadlinePool(fake.pool, 200, health);
    const client = await pool.connect();
    const r = await within(client.query('select 1', []), 5000);
    expect(r.error).toBeInstanceOf(DatabaseTimeoutError);
    expect((r.error as Error).message).toMatch(/limits\.db_timeout_ms \(200 ms\)/);
    expect(r.ms).toBeGreaterThanOrEqual(150);
    expect(health.reachable).toBe(false);
    // Every later statement of the call fails at once (a transaction's rollback included), without reaching the server.
    const again = await within(client.query('rollback', []), 50);
    expect(again.error).toBeInstanceOf(DatabaseTimeoutError);
    expect(fake.statements).toHaveLength(1);
    client.release();
    expect(fake.released).toHaveLength(1);
    expect(fake.released[0]).toBeInstanceOf(DatabaseTimeoutError);
    // The late answer is nobody's.
    fake.statements[0]!.answer.resolve({ command: 'SELECT', rowCount: 1, rows: [{ late: true }] });
    await new Promise((r) => setTimeout(r, 10));
    expect(health.reachable).toBe(false);

    // The same connection checked out again (it was not, as pg-pool closed it; a fresh one here) answers, and the
    // store is known reachable again.
    const next = await pool.connect();
    const answered = next.query('select 2', []);
    fake.statements[1]!.answer.resolve({ command: 'SELECT', rowCount: 1, rows: [{ n: 2 }] });
    expect((await answered).rows).toEqual([{ n: 2 }]);
    next.release();
    expect(fake.released[1]).toBeUndefined();
    expect(health.reachable).toBe(true);
  });

  test('waiting for a connection counts against the same deadline', async () => {
    const fake = fakePool();
    const pool = deadlinePool(fake.pool, 300, new StoreHealth());
    fake.setConnectDelay(200);
    const client = await pool.connect();
    const r = await within(client.query('select 1', []), 5000);
    expect(r.error).toBeInstanceOf(DatabaseTimeoutError);
    // The 300 ms began with the wait for the connection: about 100 ms were left for the statement.
    expect(r.ms).toBeLessThan(250);
  });

  test('outages and refusals are told apart: a refused query leaves the store reachable', () => {
    const health = new StoreHealth();
    health.failed(Object.assign(new Error('duplicate key'), { code: '23505' }));
    expect(health.reachable).toBe(true);
    // statement_timeout passed on a server that answers: a 503 for the request, but the database is there.
    const canceled = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    expect(isStoreUnavailableError(canceled)).toBe(true);
    expect(isStoreOutage(canceled)).toBe(false);
    health.failed(canceled);
    expect(health.reachable).toBe(true);
    health.failed(new DatabaseTimeoutError(100));
    expect(health.reachable).toBe(false);
    health.succeeded();
    expect(health.reachable).toBe(true);
  });

  test('the answer is 503 store_unavailable with Retry-After, naming the deadline', () => {
    const e = toAgentgwError(new DatabaseTimeoutError(2500));
    expect(e.status).toBe(503);
    expect(e.code).toBe('store_unavailable');
    expect(Number(e.headers['retry-after'])).toBeGreaterThan(0);
    expect(e.message).toMatch(/did not answer within limits\.db_timeout_ms \(2500 ms\)/);
    expect(toAgentgwError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })).code).toBe('store_unavailable');
  });

  test('on a real server: sessions carry the deadline as statement_timeout; a statement past it fails, and the store goes on working', async () => {
    const schema = `s_${randomBytes(6).toString('hex')}`;
    const store = await openStore({ kind: 'postgres', url: TEST_PG_URL, schema, timeoutMs: 800 });
    try {
      const db = (store as unknown as { db: Kysely<unknown> }).db;
      const { rows } = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db);
      expect(rows[0]!.statement_timeout).toBe('800ms');
      const r = await within(sql`select pg_sleep(5)`.execute(db), 10_000);
      expect(isStoreUnavailableError(r.error), String(r.error)).toBe(true);
      expect(r.ms).toBeLessThan(800 + 3000);
      expect(await store.getTenant('nobody')).toBeUndefined();
      expect(store.reachable).toBe(true);
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  });
});

describe('the deadline of a report read on the SQLite usage thread', () => {
  test('a report the busy thread has not answered by the deadline fails with DatabaseTimeoutError; the thread goes on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-deadline-'));
    const store = await openStore({ kind: 'sqlite', path: join(dir, 'agentgw.db') });
    const thread = await SqliteUsageThread.start(join(dir, 'agentgw.db'), []);
    try {
      // Seconds of work on the thread, then a report that waits behind it.
      const long = thread.query<{ n: number }>('with recursive c(x) as (select 1 union all select x + 1 from c where x < 3000000) select count(*) as n from c', []);
      const r = await within(thread.query('select 1 as one', [], 200), 5000);
      expect(r.error).toBeInstanceOf(DatabaseTimeoutError);
      expect(r.ms).toBeLessThan(200 + 2000);
      expect((await long)[0]!.n).toBe(3_000_000);
      expect(await thread.query('select 1 as one', [], 5000)).toEqual([{ one: 1 }]);
    } finally {
      await thread.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('SQLite waits for a lock no longer than the deadline (busy_timeout)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-deadline-'));
    const store = await openStore({ kind: 'sqlite', path: join(dir, 'agentgw.db'), timeoutMs: 1234 });
    try {
      const db = (store as unknown as { db: Kysely<unknown> }).db;
      const { rows } = await sql<{ timeout: number }>`pragma busy_timeout`.execute(db);
      expect(rows).toEqual([{ timeout: 1234 }]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
