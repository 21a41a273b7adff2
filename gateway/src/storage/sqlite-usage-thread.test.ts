import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { usageRecord } from '../test-support/store.js';
import { openStore, usageThreadOf as threadOf } from './open-store.js';
import type { Store, UsageRecord } from './store.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(): Promise<{ store: Store; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-usage-thread-'));
  dirs.push(dir);
  const path = join(dir, 'agentgw.db');
  const store = await openStore({ kind: 'sqlite', path });
  stores.push(store);
  return { store, path };
}

const rows = (n: number, trace: string): UsageRecord[] =>
  Array.from({ length: n }, (_, i) => usageRecord({ trace_id: trace, tenant_id: 't1', agent_id: 'agt_1', started_at: new Date(Date.UTC(2033, 0, 1, 0, 0, i)).toISOString(), cost: 0.5 }));


describe('usage rows written by their own thread (SQLite file)', () => {
  test('rows written by the thread are read back on the main connection, a repeated batch is skipped', async () => {
    const { store } = await open();
    const batch = rows(250, 'trace-a');
    await store.insertUsage(batch);
    await store.insertUsage(batch.slice(0, 10));
    const trace = await store.getTrace('trace-a');
    expect(trace?.request_count).toBe(250);
    expect(trace?.cost).toBe(125);
    expect(trace?.requests.map((r) => r.request_id)).toEqual(batch.map((r) => r.request_id));
  });

  test('a batch is written in trace-index order; rows of one trace keep their order, ties included', async () => {
    const { store, path } = await open();
    expect(store.usageBatchRows).toBe(1000);
    const at = (s: number) => new Date(Date.UTC(2033, 0, 1, 0, 0, s)).toISOString();
    const row = (trace: string, s: number, id: string) => usageRecord({ request_id: id, trace_id: trace, tenant_id: 't1', agent_id: 'agt_1', started_at: at(s) });
    // Arrival order: trace b and a interleaved, b's times out of order, two rows of a at the same time.
    await store.insertUsage([row('b', 1, 'req_1'), row('a', 2, 'req_2'), row('b', 0, 'req_3'), row('a', 1, 'req_4'), row('a', 1, 'req_5')]);
    const raw = new Sqlite(path, { readonly: true });
    try {
      const bySeq = raw.prepare('select request_id from usage_records order by seq').all() as Array<{ request_id: string }>;
      expect(bySeq.map((r) => r.request_id)).toEqual(['req_4', 'req_5', 'req_2', 'req_3', 'req_1']);
    } finally {
      raw.close();
    }
    expect((await store.getTrace('a'))?.requests.map((r) => r.request_id)).toEqual(['req_4', 'req_5', 'req_2']);
    expect((await store.getTrace('b'))?.requests.map((r) => r.request_id)).toEqual(['req_3', 'req_1']);
  });

  test('a batch the database refuses rejects with the reason, and nothing of it is written', async () => {
    const { store } = await open();
    const bad = rows(3, 'trace-bad');
    (bad[1] as { tenant_id: string | null }).tenant_id = null;
    await expect(store.insertUsage(bad)).rejects.toThrow(/writing usage records failed: .*NOT NULL/);
    expect(await store.getTrace('trace-bad')).toBeUndefined();
    await store.insertUsage(rows(2, 'trace-after'));
    expect((await store.getTrace('trace-after'))?.request_count).toBe(2);
  });

  test('a large batch is committed a slice at a time: a refused slice fails the batch, and resending it writes nothing twice', async () => {
    const { store } = await open();
    const batch = rows(450, 'trace-big');
    const refused = batch.map((r, i) => (i === 420 ? { ...r, tenant_id: null as unknown as string } : r));
    await expect(store.insertUsage(refused)).rejects.toThrow(/NOT NULL/);
    // The slices before the refused one (200 rows each) are kept.
    expect((await store.getTrace('trace-big'))?.request_count).toBe(400);
    await store.insertUsage(batch);
    const trace = await store.getTrace('trace-big');
    expect(trace?.request_count).toBe(450);
    expect(trace?.requests.map((r) => r.request_id)).toEqual(batch.map((r) => r.request_id));
  });

  test('close writes every batch already sent before ending the thread', async () => {
    const { store, path } = await open();
    const sent = [store.insertUsage(rows(200, 'trace-c')), store.insertUsage(rows(200, 'trace-d'))];
    await Promise.all([store.close(), ...sent]);
    stores.splice(stores.indexOf(store), 1);
    const again = await openStore({ kind: 'sqlite', path });
    stores.push(again);
    expect((await again.getTrace('trace-c'))?.request_count).toBe(200);
    expect((await again.getTrace('trace-d'))?.request_count).toBe(200);
  });

  test('when the thread dies, rows are written on the main connection instead: none lost, none twice', async () => {
    const { store } = await open();
    await store.insertUsage(rows(5, 'trace-e'));
    const thread = threadOf(store)!;
    expect(thread.failed).toBe(false);
    expect(store.usageBatchRows).toBe(1000);
    const inFlight = store.insertUsage(rows(5, 'trace-e').map((r, i) => ({ ...r, started_at: new Date(Date.UTC(2033, 0, 2, 0, 0, i)).toISOString() })));
    const main = (store as unknown as { db: Kysely<unknown> }).db;
    const autocheckpoint = async () => (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(main)).rows[0]?.wal_autocheckpoint;
    // While the thread writes, it runs the checkpoints; the main connection takes them over with the writes.
    expect(await autocheckpoint()).toBe(0);
    await thread.kill();
    await inFlight;
    await store.insertUsage(rows(3, 'trace-f'));
    expect(await autocheckpoint()).toBe(1000);
    expect(thread.failed).toBe(true);
    // Rows now written on the event loop go in the writer's default, smaller batches.
    expect(store.usageBatchRows).toBeUndefined();
    expect((await store.getTrace('trace-e'))?.request_count).toBe(10);
    expect((await store.getTrace('trace-f'))?.request_count).toBe(3);
  });

  test('reports over usage rows are read on the thread, and on the main connection once it has died', async () => {
    const { store } = await open();
    await store.insertUsage([...rows(3, 'trace-r1'), ...rows(2, 'trace-r2').map((r) => ({ ...r, agent_id: 'agt_2' }))]);
    const thread = threadOf(store)!;
    const query = vi.spyOn(thread, 'query');
    const reports = async () => ({
      usage: await store.usage({ group_by: 'agent' }),
      traces: (await store.listTraces({ limit: 10 })).data.map((t) => [t.trace_id, t.request_count, t.cost]),
      trace: (await store.getTrace('trace-r2'))?.requests.length,
      spend: await store.spendSince('2033-01-01T00:00:00.000Z'),
      traceSpend: await store.traceSpendSince('2033-01-01T00:00:00.000Z'),
    });
    const onThread = await reports();
    expect(onThread.usage.map((r) => [r.key, r.requests, r.cost])).toEqual([['agt_1', 3, 1.5], ['agt_2', 2, 1]]);
    expect(onThread.traces).toEqual([['trace-r2', 2, 1], ['trace-r1', 3, 1.5]]);
    expect(onThread.trace).toBe(2);
    expect(onThread.spend).toEqual([{ agent_id: 'agt_1', cost: 1.5 }, { agent_id: 'agt_2', cost: 1 }]);
    expect(onThread.traceSpend).toHaveLength(2);
    // usage 1, listTraces 4 (scan, starts, aggregates, ends), getTrace 1, spend 2
    expect(query).toHaveBeenCalledTimes(8);
    await thread.kill();
    expect(await reports()).toEqual(onThread);
    expect(query).toHaveBeenCalledTimes(8);
  });

  test('admin transactions that read, then write, wait for the thread\'s commits instead of failing', async () => {
    const { store } = await open();
    // The thread commits a batch after another while the main connection checks, then deletes, tenants and policies:
    // a transaction that read before one of those commits may not write after it (SQLITE_BUSY).
    let writing = true;
    const writer = (async () => {
      for (let n = 0; writing; n++) await store.insertUsage(rows(200, `trace-w${n}`));
    })();
    const outcomes: string[] = [];
    try {
      for (let i = 0; i < 150; i++) {
        await store.createTenant({ id: `t-${i}`, name: `T ${i}`, labels: {} });
        await store.putPolicy(`p-${i}`, { tenant_id: `t-${i}`, monthly_budget: null, daily_budget: null, allowed_models: null, rules: {} as never, labels: {} });
        outcomes.push(await store.deleteTenant(`t-${i}`), await store.deletePolicy(`p-${i}`), await store.deleteTenant(`t-${i}`));
        // Let the thread's next batch begin before the next round.
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      writing = false;
      await writer;
    }
    expect(outcomes).toEqual(Array.from({ length: 150 }, () => ['not_empty', 'deleted', 'deleted']).flat());
  });

  test('an in-memory database writes on its own connection', async () => {
    const store = await openStore({ kind: 'sqlite', path: ':memory:' });
    stores.push(store);
    expect(threadOf(store)).toBeUndefined();
    await store.insertUsage(rows(4, 'trace-m'));
    expect((await store.getTrace('trace-m'))?.request_count).toBe(4);
  });
});
