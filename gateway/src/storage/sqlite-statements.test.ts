// The SQLite store prepares each SQL text once and keeps its statement: better-sqlite3 12 under Node 24 aborts the
// process when the collector frees a statement after the environment is gone (at exit, or when the usage thread ends).
import Sqlite from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { withStatementCache } from './sqlite-dialect.js';
import { openStore } from './open-store.js';

const dir = mkdtempSync(join(tmpdir(), 'agentgw-statements-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the statement cache', () => {
  test('one statement per SQL text, reused by every query', () => {
    const db = new Sqlite(':memory:');
    const spy = vi.spyOn(db, 'prepare');
    const cached = withStatementCache(db);
    cached.prepare('create table t (a integer)').run();
    for (let i = 0; i < 50; i++) cached.prepare('insert into t values (?)').run(i);
    expect(cached.prepare('select count(*) as n from t').get()).toEqual({ n: 50 });
    expect(cached.prepare('insert into t values (?)')).toBe(cached.prepare('insert into t values (?)'));
    expect(spy).toHaveBeenCalledTimes(3);
    cached.close();
    expect(db.open).toBe(false);
  });

  test('a store on a file prepares each query text once however often it runs', async () => {
    const prepare = vi.spyOn(Sqlite.prototype, 'prepare');
    const store = await openStore({ kind: 'sqlite', path: join(dir, 'a.db') });
    try {
      await store.createTenant({ id: 't1', name: 'T1', labels: {} });
      prepare.mockClear();
      for (let i = 0; i < 20; i++) await store.getTenant('t1');
      expect(prepare.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      await store.close();
      prepare.mockRestore();
    }
  });
});
