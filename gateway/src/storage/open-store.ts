import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { KyselyStore } from './kysely-store.js';
import { migrate } from './migrations.js';
import type { Database } from './schema.js';
import type { Store, UsageRecord } from './store.js';

/** SQLite's page cache, in KiB as `PRAGMA cache_size` takes it (negative: a size, not a page count). */
export const SQLITE_CACHE_KIB = -2000;

export type StorageOptions = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; schema?: string };

/** Opens the configured store and brings its schema up to date. Only the chosen database's driver is loaded. */
export async function openStore(opts: StorageOptions): Promise<Store> {
  if (opts.kind === 'sqlite') {
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    const { default: Sqlite } = await import('better-sqlite3');
    const sqlite = new Sqlite(opts.path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    // better-sqlite3 builds SQLite with a 16 MB page cache, which usage-record inserts fill within minutes: most of the
    // gateway's malloc'd memory under load. SQLite's own default of 2 MB costs no measurable CPU per insert (the pages
    // it drops come back from the OS's file cache), and keeps ~20 MB of resident memory for the data plane.
    sqlite.pragma(`cache_size = ${SQLITE_CACHE_KIB}`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    await migrate(db, 'sqlite');
    return new KyselyStore(db, 'sqlite', sqliteUsageInserter(sqlite));
  }
  const { default: pg } = await import('pg');
  // PostgreSQL bigint (sums, counts) as JS numbers: counts and token sums stay far below 2^53.
  pg.types.setTypeParser(20, (v) => Number(v));
  pg.types.setTypeParser(1700, (v) => Number(v));
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

const USAGE_COLUMNS = [
  'request_id', 'trace_id', 'tenant_id', 'agent_id', 'model', 'provider', 'stream', 'status', 'http_status', 'error_code',
  'prompt_tokens', 'completion_tokens', 'cost', 'estimated', 'latency_ms', 'ttft_ms', 'started_at', 'pii_types', 'body',
] as const;

/**
 * One prepared statement in one transaction per batch, parameters bound by position straight from the records:
 * far cheaper than building a multi-row statement, or an object per row, each time.
 */
function sqliteUsageInserter(sqlite: SQLite.Database): (rows: UsageRecord[]) => void {
  const insert = sqlite.prepare(
    `INSERT INTO usage_records (${USAGE_COLUMNS.join(', ')}) VALUES (${USAGE_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (request_id) DO NOTHING`,
  );
  return sqlite.transaction((rows: UsageRecord[]) => {
    for (const r of rows) {
      insert.run(
        r.request_id, r.trace_id, r.tenant_id, r.agent_id, r.model, r.provider, r.stream ? 1 : 0, r.status, r.http_status, r.error_code,
        r.prompt_tokens, r.completion_tokens, r.cost, r.estimated ? 1 : 0, r.latency_ms, r.ttft_ms, r.started_at,
        r.pii_types.length === 0 ? '[]' : JSON.stringify(r.pii_types), r.body,
      );
    }
  });
}
