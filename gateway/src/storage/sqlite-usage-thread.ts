import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { DatabaseTimeoutError } from './store-errors.js';
import type { UsageRecord } from './store.js';

/** Columns of a usage row, in the order the insert binds them. */
export const USAGE_COLUMNS = [
  'request_id', 'trace_id', 'tenant_id', 'agent_id', 'model', 'provider', 'stream', 'status', 'http_status', 'error_code',
  'prompt_tokens', 'completion_tokens', 'cost', 'estimated', 'latency_ms', 'ttft_ms', 'started_at', 'pii_types', 'body',
  'endpoint', 'cached_tokens', 'reasoning_tokens', 'response_id', 'tool', 'tool_calls', 'cleaned', 'requested_model',
] as const;

/** A record already written (a retried flush) is skipped rather than failing the batch. */
export const INSERT_USAGE_SQL = `INSERT INTO usage_records (${USAGE_COLUMNS.join(', ')}) VALUES (${USAGE_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (request_id) DO NOTHING`;

/** A usage record's values in USAGE_COLUMNS order, as SQLite stores them. */
export function usageParams(r: UsageRecord): unknown[] {
  return [
    r.request_id, r.trace_id, r.tenant_id, r.agent_id, r.model, r.provider, r.stream ? 1 : 0, r.status, r.http_status, r.error_code,
    r.prompt_tokens, r.completion_tokens, r.cost, r.estimated ? 1 : 0, r.latency_ms, r.ttft_ms, r.started_at,
    r.pii_types.length === 0 ? '[]' : JSON.stringify(r.pii_types), r.body,
    // A journal written by an earlier release has rows without response_id; SQLite binds no undefined.
    r.endpoint, r.cached_tokens, r.reasoning_tokens, r.response_id ?? null, r.tool ?? null,
    r.tool_calls ? JSON.stringify(r.tool_calls) : null,
    r.cleaned && r.cleaned.length > 0 ? JSON.stringify(r.cleaned) : null,
    r.requested_model ?? null,
  ];
}

/**
 * Rows per transaction on the thread, which holds the write lock for that long: admin writes on the main connection wait
 * for it. Measured with 500 traces in flight: 4 ms at p50 for 200 sorted rows, 56 ms for 1000.
 */
const TRANSACTION_ROWS = 200;

interface WorkerSetup {
  driver: string;
  path: string;
  sql: string;
  pragmas: string[];
  /** Positions of trace_id and started_at in a row's parameters: a batch is inserted in that order. */
  sortBy: [number, number];
  /** Most rows committed in one transaction: the main connection's admin writes wait for the thread's write lock. */
  transactionRows: number;
}

/**
 * The thread's whole program, sent as source (a worker cannot load the TypeScript module it is defined in). It opens
 * its own connection to the database file and inserts each batch it is sent, in transactions of TRANSACTION_ROWS rows.
 * It references nothing outside itself.
 */
function usageThreadMain(require: NodeJS.Require): void {
  const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
  const setup = workerData as WorkerSetup;
  const Sqlite = require(setup.driver) as typeof import('better-sqlite3');
  const db = new Sqlite(setup.path);
  // exec, not pragma(), and every statement kept while the thread lives: better-sqlite3 12 under Node 24 aborts when the
  // collector frees a statement after the thread's environment is gone (see withStatementCache)
  for (const p of setup.pragmas) db.exec(`PRAGMA ${p}`);
  const insert = db.prepare(setup.sql);
  const insertAll = db.transaction((batch: unknown[][]) => {
    for (const params of batch) insert.run(...params);
  });
  // Rows of one trace sit together in the trace index: inserted in its order, a batch walks the index once, front to
  // back, and writes each of its pages once, instead of a page per row in arrival order (the sort is stable, so rows
  // of one trace at the same time keep their order).
  const [trace, time] = setup.sortBy;
  const indexOrder = (a: unknown[], b: unknown[]) =>
    (a[trace] as string) < (b[trace] as string) ? -1 : (a[trace] as string) > (b[trace] as string) ? 1 : (a[time] as string) < (b[time] as string) ? -1 : (a[time] as string) > (b[time] as string) ? 1 : 0;
  const statements = new Map<string, import('better-sqlite3').Statement>();
  parentPort!.on('message', (m: { id: number; batch?: unknown[][]; sql?: string; params?: unknown[]; close?: true }) => {
    if (m.sql !== undefined) {
      try {
        let stmt = statements.get(m.sql);
        if (stmt === undefined) {
          stmt = db.prepare(m.sql);
          if (statements.size < 2000) statements.set(m.sql, stmt);
        }
        if (!stmt.reader) throw new Error('only queries that return rows are run here');
        parentPort!.postMessage({ id: m.id, rows: stmt.all(...m.params!) });
      } catch (e) {
        parentPort!.postMessage({ id: m.id, error: (e as Error).message ?? String(e) });
      }
      return;
    }
    if (m.close) {
      db.close();
      parentPort!.postMessage({ id: m.id });
      parentPort!.close();
      return;
    }
    try {
      // Consecutive slices of the sorted batch touch mostly different index pages, so committing them one by one
      // keeps the write lock short at little cost; a slice already committed is skipped when the batch comes again.
      const sorted = m.batch!.sort(indexOrder);
      for (let i = 0; i < sorted.length; i += setup.transactionRows) insertAll(sorted.slice(i, i + setup.transactionRows));
      parentPort!.postMessage({ id: m.id });
    } catch (e) {
      parentPort!.postMessage({ id: m.id, error: (e as Error).message ?? String(e) });
    }
  });
  parentPort!.postMessage({ id: 0 });
}

type Pending = { resolve: (rows?: unknown[]) => void; reject: (e: Error) => void; what: string };

/**
 * Usage rows written, and reports over them read, by a thread of their own, on its own connection to the SQLite file. SQLite's writes are
 * synchronous, and the connection that commits also runs the WAL checkpoints, each with an fsync of the database
 * (about 30 ms here, several times a second under load when many traces are active): on the event loop they would
 * hold up every request in flight. The thread costs about 6 MB of memory.
 */
export class SqliteUsageThread {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private dead: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (m: { id: number; error?: string; rows?: unknown[] }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error === undefined) p.resolve(m.rows);
      else p.reject(new Error(`${p.what} failed: ${m.error}`));
      if (this.pending.size === 0) worker.unref();
    });
    const fail = (e: Error) => {
      this.dead ??= e;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the usage writer thread exited (code ${code})`)));
  }

  /** Starts the thread; resolves once its connection is open and its statement prepared. */
  static async start(path: string, pragmas: string[]): Promise<SqliteUsageThread> {
    const setup: WorkerSetup = {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      path,
      sql: INSERT_USAGE_SQL,
      pragmas,
      sortBy: [USAGE_COLUMNS.indexOf('trace_id'), USAGE_COLUMNS.indexOf('started_at')],
      transactionRows: TRANSACTION_ROWS,
    };
    const worker = new Worker(`(${usageThreadMain.toString()})(require)`, {
      eval: true,
      workerData: setup,
      // A small young generation keeps the thread's heap small; its old generation is not capped, as a report's rows
      // (a month of trace spend, a long trace) may need more than batches do.
      resourceLimits: { maxYoungGenerationSizeMb: 1 },
      stdout: false,
      stderr: false,
    });
    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      worker.once('error', onError);
      worker.once('exit', (code) => reject(new Error(`the usage writer thread exited (code ${code}) before it was ready`)));
      worker.once('message', () => {
        worker.off('error', onError);
        worker.removeAllListeners('exit');
        resolve();
      });
    });
    worker.unref();
    return new SqliteUsageThread(worker);
  }

  /** True once the thread has died: callers write on their own connection instead. */
  get failed(): boolean {
    return this.dead !== undefined;
  }

  insert(rows: UsageRecord[]): Promise<void> {
    return this.send({ batch: rows.map(usageParams) }, 'writing usage records').then(() => undefined);
  }

  /**
   * Runs a read-only query on the thread's connection and resolves with its rows. Reports over the usage table
   * (usage by day or agent, trace listings) read many rows: here they do not stall the requests in flight.
   * With `timeoutMs`, a query the thread has not answered by then (it is busy with a batch or an earlier report)
   * fails with DatabaseTimeoutError; the thread still runs it, and its late answer is dropped.
   */
  async query<R>(sql: string, params: readonly unknown[], timeoutMs?: number): Promise<R[]> {
    return ((await this.send({ sql, params }, 'reading usage records', timeoutMs)) ?? []) as R[];
  }

  /** Posts one message and settles with the thread's answer; the thread is kept alive while an answer is due. */
  private send(message: { batch?: unknown[][]; sql?: string; params?: readonly unknown[]; close?: true }, what: string, timeoutMs?: number): Promise<unknown[] | undefined> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = <A>(f: (a: A) => void) => (a: A) => {
        clearTimeout(timer);
        f(a);
      };
      this.pending.set(id, { resolve: settle(resolve), reject: settle(reject), what });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          if (!this.pending.delete(id)) return;
          if (this.pending.size === 0) this.worker.unref();
          reject(new DatabaseTimeoutError(timeoutMs));
        }, timeoutMs);
      }
      this.worker.ref();
      this.worker.postMessage({ id, ...message });
    });
  }

  /** Stops the thread at once, as a crash would: batches in flight are rejected (the store then writes them itself). */
  async kill(): Promise<void> {
    await this.worker.terminate();
  }

  /** Closes the thread's connection once the batches sent before have been written, then ends the thread. */
  async close(): Promise<void> {
    if (this.dead) return;
    await this.send({ close: true }, 'closing').catch(() => undefined);
    await this.worker.terminate();
  }
}
