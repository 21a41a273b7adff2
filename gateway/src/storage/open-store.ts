import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import { KyselyStore } from './kysely-store.js';
import { migrate } from './migrations.js';
import { deadlinePool, type PgPool } from './pg-deadline-pool.js';
import { type CachingSqlite, ImmediateSqliteDialect, withStatementCache } from './sqlite-dialect.js';
import type { Database } from './schema.js';
import { INSERT_USAGE_SQL, SqliteUsageThread, usageParams } from './sqlite-usage-thread.js';
import { StoreHealth, type StoreLog } from './store-health.js';
import type { Store, UsageRecord } from './store.js';

export type { StoreLog } from './store-health.js';

/**
 * Default of limits.db_timeout_ms: the longest a database call (waiting for a connection, then its statements) may take.
 * The gateway's own statements take milliseconds and its reports well under a second on a healthy database; a call
 * that takes seconds is a database that is frozen, overloaded or cut off, and the request is better answered 503.
 */
export const DB_TIMEOUT_MS = 5000;

/** SQLite's page cache, in KiB as `PRAGMA cache_size` takes it (negative: a size, not a page count). */
export const SQLITE_CACHE_KIB = -2000;

/**
 * Usage rows per batch sent to the usage thread. It inserts a batch in trace-index order, so the larger the batch, the
 * more rows share each index page it writes. Measured with 500 traces in flight (200k rows alone): 22-24 us of the
 * thread's CPU a row against 28-30 for 200-row batches in arrival order, both committed 200 rows at a time. A batch
 * is sent sooner when the writer's flush interval passes.
 */
const SQLITE_THREAD_BATCH_ROWS = 1000;

/** SQLite's default: a checkpoint once the WAL holds this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/** Settings of every SQLite connection the gateway opens (the usage writer thread has its own). */
const sqlitePragmas = (timeoutMs: number) => [
  'synchronous = NORMAL',
  // A write waits this long at most for the usage thread's write lock, then fails SQLITE_BUSY (503 store_unavailable).
  `busy_timeout = ${timeoutMs}`,
  // better-sqlite3 builds SQLite with a 16 MB page cache, which usage-record inserts fill within minutes: most of the
  // gateway's malloc'd memory under load. SQLite's own default of 2 MB costs no measurable CPU per insert (the pages
  // it drops come back from the OS's file cache), and keeps ~20 MB of resident memory for the data plane.
  `cache_size = ${SQLITE_CACHE_KIB}`,
];

const usageThreads = new WeakMap<Store, SqliteUsageThread>();

/** The thread that writes a SQLite store's usage rows, if it has one. */
export function usageThreadOf(store: Store): SqliteUsageThread | undefined {
  return usageThreads.get(store);
}

export type StorageOptions =
  | {
      kind: 'sqlite';
      path: string;
      /** Usage rows written by a thread of their own (the default for a database file); false writes them on the main connection. */
      usageThread?: boolean;
      /** limits.db_timeout_ms: SQLite's busy timeout, and the longest wait for a report read on the usage thread. Default DB_TIMEOUT_MS. */
      timeoutMs?: number;
    }
  | {
      kind: 'postgres';
      url: string;
      schema?: string;
      /**
       * limits.db_timeout_ms: the deadline of every call, from waiting for a connection (a new one, or a pooled one to
       * come free) to its last statement; past it the call fails and requests answer 503 store_unavailable instead of
       * hanging while PostgreSQL is away or frozen. Default DB_TIMEOUT_MS.
       */
      timeoutMs?: number;
      /** Where connection losses and recoveries are reported (one line per outage, not per error). */
      log?: StoreLog;
    };


/** Opens the configured store and brings its schema up to date. Only the chosen database's driver is loaded. */
export async function openStore(opts: StorageOptions): Promise<Store> {
  if (opts.kind === 'sqlite') {
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    const { default: Sqlite } = await import('better-sqlite3');
    const timeoutMs = opts.timeoutMs ?? DB_TIMEOUT_MS;
    const pragmas = sqlitePragmas(timeoutMs);
    const sqlite = new Sqlite(opts.path);
    // exec, not pragma(): no statement object is made (see withStatementCache)
    sqlite.exec('PRAGMA journal_mode = WAL');
    for (const p of pragmas) sqlite.exec(`PRAGMA ${p}`);
    sqlite.exec('PRAGMA foreign_keys = ON');
    const cached = withStatementCache(sqlite);
    const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: cached }) });
    await migrate(db, 'sqlite');
    const local = sqliteUsageInserter(sqlite, cached);
    // An in-memory database is one connection's own: its rows are written on it.
    if (opts.path === ':memory:' || opts.usageThread === false) return new KyselyStore(db, 'sqlite', { usageInserter: local });
    let thread: SqliteUsageThread;
    try {
      thread = await SqliteUsageThread.start(opts.path, pragmas);
    } catch {
      // Without its thread the store still works: rows and reports on this connection, as for an in-memory database.
      return new KyselyStore(db, 'sqlite', { usageInserter: local });
    }
    // The thread's commits run the checkpoints; here an admin write would otherwise take one on (fsync included).
    sqlite.exec('PRAGMA wal_autocheckpoint = 0');
    let takenOver = false;
    const writeHere = (rows: UsageRecord[]) => {
      if (!takenOver) {
        takenOver = true;
        sqlite.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
      }
      local(rows);
    };
    // On the thread while it lives; here once it has died, including for the call it died on (a batch it may have
    // committed is written again, and its rows are skipped as already present).
    const onThread = async <T>(there: () => Promise<T>, here: () => T): Promise<T> => {
      if (thread.failed) return here();
      try {
        return await there();
      } catch (e) {
        if (thread.failed) return here();
        throw e;
      }
    };
    const inserter = (rows: UsageRecord[]) => onThread(() => thread.insert(rows), () => writeHere(rows));
    // A report waits for the thread (busy with a batch, or an earlier report) no longer than the deadline.
    const reader = <R>(q: CompiledQuery<R>) => onThread(() => thread.query<R>(q.sql, q.parameters, timeoutMs), () => cached.prepare(q.sql).all(...q.parameters) as R[]);
    // Once the thread has died, rows are written on the event loop: in the writer's default, smaller batches.
    const batchRows = () => (thread.failed ? undefined : SQLITE_THREAD_BATCH_ROWS);
    const store = new KyselyStore(db, 'sqlite', { usageInserter: inserter, beforeClose: () => thread.close(), reportReader: reader, preferredBatchRows: batchRows });
    usageThreads.set(store, thread);
    return store;
  }
  const { default: pg } = await import('pg');
  // PostgreSQL bigint (sums, counts) as JS numbers: counts and token sums stay far below 2^53.
  pg.types.setTypeParser(20, (v) => Number(v));
  pg.types.setTypeParser(1700, (v) => Number(v));
  const options = opts.schema ? `-c search_path=${opts.schema}` : undefined;
  const timeoutMs = opts.timeoutMs ?? DB_TIMEOUT_MS;
  const connectionTimeoutMillis = timeoutMs;
  if (opts.schema) {
    const admin = new pg.Client({ connectionString: opts.url, connectionTimeoutMillis });
    // A connection error while idle is an 'error' event: unheard, it would end the process.
    admin.on('error', () => undefined);
    try {
      await admin.connect();
      await admin.query(`create schema if not exists "${opts.schema.replace(/"/g, '')}"`);
    } finally {
      await admin.end().catch(() => undefined);
    }
  }
  const poolOptions = {
    connectionString: opts.url,
    options,
    connectionTimeoutMillis,
    // A peer that vanished without closing the connection (a host gone, a partition) is noticed by the kernel.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
  // Migrations run on connections of their own, without the deadline: building an index on a large table takes long.
  const migrationPool = new pg.Pool({ ...poolOptions, max: 1 });
  migrationPool.on('error', () => undefined);
  try {
    // Kysely's migrator takes a lock row, so nodes starting together migrate once.
    await migrate(new Kysely<Database>({ dialect: new PostgresDialect({ pool: migrationPool }) }), 'postgres');
  } finally {
    await migrationPool.end().catch(() => undefined);
  }
  const health = new StoreHealth(opts.log);
  const pool = new pg.Pool({ ...poolOptions, max: 10 });
  watchPool(pool, health);
  const dialect = new PostgresDialect({
    pool: deadlinePool(pool as unknown as PgPool, timeoutMs, health),
    // The server ends a statement whose client gave up at the deadline (set per session, which poolers such as
    // PgBouncer pass on, unlike a startup parameter).
    onCreateConnection: (c) => c.executeQuery(CompiledQuery.raw(`set statement_timeout = ${Math.floor(timeoutMs)}`)).then(() => undefined),
  });
  return new KyselyStore(new Kysely<Database>({ dialect }), 'postgres', { health });
}

/**
 * One prepared statement in one transaction per batch, parameters bound by position straight from the records:
 * far cheaper than building a multi-row statement, or an object per row, each time.
 */
function sqliteUsageInserter(sqlite: SQLite.Database, statements: CachingSqlite): (rows: UsageRecord[]) => void {
  const insert = statements.prepare(INSERT_USAGE_SQL);
  return sqlite.transaction((rows: UsageRecord[]) => {
    for (const r of rows) insert.run(...usageParams(r));
  });
}

/** The pool's events this module listens to (pg's Pool and Client are EventEmitters). */
interface PoolEvents {
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'connect', listener: (client: { on(event: 'error', listener: (err: Error) => void): unknown }) => void): unknown;
}

/**
 * pg reports a connection the server closed (PostgreSQL restarted: 57P01 "terminating connection due to administrator
 * command", or the socket reset) as an 'error' event, on the pool for an idle connection and on the client for one
 * checked out; an 'error' event that nobody listens to ends the process. Both are heard here, and reported to the
 * store's health (which logs one line per outage). A connection that failed is not reused (the pool drops an idle one
 * at once, and one checked out when it is released, as it is no longer queryable), and the pool opens new connections
 * on demand, so the store reconnects by itself when PostgreSQL is back: the callers' retries (snapshot polls, usage
 * flushes, admin requests) pace the attempts.
 */
function watchPool(pool: PoolEvents, health: StoreHealth): void {
  const lost = (err: Error) => health.failed(err);
  pool.on('error', lost);
  pool.on('connect', (client) => client.on('error', lost));
}
