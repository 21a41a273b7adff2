import { CompiledQuery, type DatabaseConnection, type Driver, SqliteDialect, type SqliteDialectConfig, SqliteDriver } from 'kysely';

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
