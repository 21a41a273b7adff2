import { CompiledQuery, type DatabaseConnection, type Driver, SqliteDialect, type SqliteDatabase, type SqliteDialectConfig, SqliteDriver } from 'kysely';

/**
 * Transactions begun with `BEGIN IMMEDIATE`, which takes the write lock at once and waits for it (busy_timeout).
 * The usage thread writes on a connection of its own. A transaction begun the default way reads first, and its first
 * write then fails without waiting: SQLITE_BUSY when the thread holds the write lock at that moment (SQLite does not
 * wait there, as the two could deadlock), SQLITE_BUSY_SNAPSHOT when the thread committed since the transaction's read.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/** Kysely's SQLite dialect with ImmediateSqliteDriver's transactions. */
export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }
}

/**
 * Better-sqlite3 12 frees a statement or a connection from a garbage collector's callback, and under Node 24 that
 * callback can run after Node has torn down the thread's environment (at exit, or when a worker ends): the process then
 * aborts on a native assertion. Kysely prepares a statement per query, so a busy gateway leaves thousands behind. Here
 * each SQL text is prepared once and its statement kept as long as the process lives, with the connection: nothing of
 * SQLite's is ever left for the collector (and a query no longer pays for its preparation). The SQL texts the store runs
 * are the queries written in its code, times the lengths of the `in (...)` lists some of them bind (pages of ids), so
 * the cache stays in the hundreds; past MAX_STATEMENTS a text is prepared uncached, as before.
 */
const MAX_STATEMENTS = 2_000;
const KEPT = Symbol.for('agentgw.sqlite.kept');
const kept: Set<unknown> = ((globalThis as Record<symbol, unknown>)[KEPT] ??= new Set<unknown>()) as Set<unknown>;

export interface CachingSqlite extends SqliteDatabase {
  /** The statement of this SQL text, prepared on first use. */
  prepare(sql: string): import('better-sqlite3').Statement;
}

export function withStatementCache(db: import('better-sqlite3').Database): CachingSqlite {
  const statements = new Map<string, import('better-sqlite3').Statement>();
  kept.add(db);
  kept.add(statements);
  return {
    prepare(sql: string) {
      let stmt = statements.get(sql);
      if (stmt === undefined) {
        stmt = db.prepare(sql);
        if (statements.size < MAX_STATEMENTS) statements.set(sql, stmt);
      }
      return stmt;
    },
    close: () => db.close(),
  };
}
