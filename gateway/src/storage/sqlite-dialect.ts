import { CompiledQuery, type DatabaseConnection, type Driver, SqliteDialect, SqliteDriver } from 'kysely';

/**
 * Kysely's SQLite dialect with transactions that take the write lock when they begin (`BEGIN IMMEDIATE`).
 * The usage thread commits on a connection of its own: a transaction begun the default way reads first and, once the
 * thread has committed in between, may no longer write (SQLITE_BUSY, which no busy timeout waits out). Taking the lock
 * first waits for the thread's commit (busy_timeout) and then reads what it wrote.
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver() as SqliteDriver;
    driver.beginTransaction = async (connection: DatabaseConnection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}
