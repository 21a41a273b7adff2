import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { KyselyStore } from './kysely-store.js';
import { migrate } from './migrations.js';
import type { Database } from './schema.js';
import type { Store } from './store.js';

// PostgreSQL bigint (sums, counts) as JS numbers: counts and token sums stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export type StorageOptions = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; schema?: string };

/** Opens the configured store and brings its schema up to date. */
export async function openStore(opts: StorageOptions): Promise<Store> {
  if (opts.kind === 'sqlite') {
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    const sqlite = new SQLite(opts.path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    await migrate(db, 'sqlite');
    return new KyselyStore(db, 'sqlite');
  }
  const options = opts.schema ? `-c search_path=${opts.schema}` : undefined;
  if (opts.schema) {
    const admin = new pg.Client({ connectionString: opts.url });
    await admin.connect();
    await admin.query(`create schema if not exists "${opts.schema.replace(/"/g, '')}"`);
    await admin.end();
  }
  const pool = new pg.Pool({ connectionString: opts.url, max: 10, options });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // Kysely's migrator takes a lock row, so nodes starting together migrate once.
  await migrate(db, 'postgres');
  return new KyselyStore(db, 'postgres');
}
