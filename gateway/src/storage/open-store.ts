import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type SQLite from 'better-sqlite3';
import { type CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import { KyselyStore } from './kysely-store.js';
import { migrate } from './migrations.js';
import { ImmediateSqliteDialect } from './sqlite-dialect.js';
import type { Database } from './schema.js';
import { INSERT_USAGE_SQL, SqliteUsageThread, usageParams } from './sqlite-usage-thread.js';
import type { Store, UsageRecord } from './store.js';

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
const SQLITE_PRAGMAS = [
  'synchronous = NORMAL',
  'busy_timeout = 5000',
  // better-sqlite3 builds SQLite with a 16 MB page cache, which usage-record inserts fill within minutes: most of the
  // gateway's malloc'd memory under load. SQLite's own default of 2 MB costs no measurable CPU per insert (the pages
  // it drops come back from the OS's file cache), and keeps ~20 MB of resident memory for the data plane.
  `cache_size = ${SQLITE_CACHE_KIB}`,
] as const;

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
    }
  | {
      kind: 'postgres';
      url: string;
      schema?: string;
      /**
       * Longest wait for a connection (a new one, or a pooled one to come free) before the call fails: admin calls
       * answer 503 store_unavailable instead of hanging while PostgreSQL is away. Default PG_CONNECT_TIMEOUT_MS.
       */
      connectTimeoutMs?: number;
      /** Where connection losses and recoveries are reported (one line per outage, not per error). */
      log?: StoreLog;
    };

/** Where the store reports that it lost, and regained, its database (a pino logger fits). */
export interface StoreLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Default of StorageOptions.connectTimeoutMs: connecting to PostgreSQL takes milliseconds, even over TLS well under a second. */
export const PG_CONNECT_TIMEOUT_MS = 2000;

/** Opens the configured store and brings its schema up to date. Only the chosen database's driver is loaded. */
export async function openStore(opts: StorageOptions): Promise<Store> {
  if (opts.kind === 'sqlite') {
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    const { default: Sqlite } = await import('better-sqlite3');
    const sqlite = new Sqlite(opts.path);
    sqlite.pragma('journal_mode = WAL');
    for (const p of SQLITE_PRAGMAS) sqlite.pragma(p);
    sqlite.pragma('foreign_keys = ON');
    const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: sqlite }) });
    await migrate(db, 'sqlite');
    const local = sqliteUsageInserter(sqlite);
    // An in-memory database is one connection's own: its rows are written on it.
    if (opts.path === ':memory:' || opts.usageThread === false) return new KyselyStore(db, 'sqlite', local);
    let thread: SqliteUsageThread;
    try {
      thread = await SqliteUsageThread.start(opts.path, [...SQLITE_PRAGMAS]);
    } catch {
      // Without its thread the store still works: rows and reports on this connection, as for an in-memory database.
      return new KyselyStore(db, 'sqlite', local);
    }
    // The thread's commits run the checkpoints; here an admin write would otherwise take one on (fsync included).
    sqlite.pragma('wal_autocheckpoint = 0');
    let takenOver = false;
    const writeHere = (rows: UsageRecord[]) => {
      if (!takenOver) {
        takenOver = true;
        sqlite.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
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
    const reader = <R>(q: CompiledQuery<R>) => onThread(() => thread.query<R>(q.sql, q.parameters), () => sqlite.prepare(q.sql).all(...q.parameters) as R[]);
    // Once the thread has died, rows are written on the event loop: in the writer's default, smaller batches.
    const batchRows = () => (thread.failed ? undefined : SQLITE_THREAD_BATCH_ROWS);
    const store = new KyselyStore(db, 'sqlite', inserter, () => thread.close(), reader, batchRows);
    usageThreads.set(store, thread);
    return store;
  }
  const { default: pg } = await import('pg');
  // PostgreSQL bigint (sums, counts) as JS numbers: counts and token sums stay far below 2^53.
  pg.types.setTypeParser(20, (v) => Number(v));
  pg.types.setTypeParser(1700, (v) => Number(v));
  const options = opts.schema ? `-c search_path=${opts.schema}` : undefined;
  const connectionTimeoutMillis = opts.connectTimeoutMs ?? PG_CONNECT_TIMEOUT_MS;
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
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: 10,
    options,
    connectionTimeoutMillis,
    // A peer that vanished without closing the connection (a host gone, a partition) is noticed by the kernel.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  watchPool(pool, opts.log);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // Kysely's migrator takes a lock row, so nodes starting together migrate once.
  await migrate(db, 'postgres');
  return new KyselyStore(db, 'postgres');
}

/**
 * One prepared statement in one transaction per batch, parameters bound by position straight from the records:
 * far cheaper than building a multi-row statement, or an object per row, each time.
 */
function sqliteUsageInserter(sqlite: SQLite.Database): (rows: UsageRecord[]) => void {
  const insert = sqlite.prepare(INSERT_USAGE_SQL);
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
 * checked out; an 'error' event that nobody listens to ends the process. Both are heard here. A connection that failed
 * is not reused (the pool drops an idle one at once, and one checked out when it is released, as it is no longer
 * queryable), and the pool opens new connections on demand, so the store reconnects by itself when PostgreSQL is back:
 * the callers' retries (snapshot polls, usage flushes, admin requests) pace the attempts. One log line when the
 * connection is lost, one when a new connection has been made after that.
 */
function watchPool(pool: PoolEvents, log: StoreLog | undefined): void {
  let lostAt: number | undefined;
  let errors = 0;
  const lost = (err: Error) => {
    errors++;
    if (lostAt !== undefined) return;
    lostAt = Date.now();
    log?.error({ err: { message: err.message, code: (err as { code?: string }).code } }, 'lost a connection to PostgreSQL; reconnecting as requests need it');
  };
  pool.on('error', lost);
  pool.on('connect', (client) => {
    client.on('error', lost);
    if (lostAt === undefined) return;
    log?.warn({ after_ms: Date.now() - lostAt, connection_errors: errors }, 'connected to PostgreSQL again');
    lostAt = undefined;
    errors = 0;
  });
}
