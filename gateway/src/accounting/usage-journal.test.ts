import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { Store, UsageRecord } from '../storage/store.js';
import { usageRecord } from '../test-support/store.js';
import { adminClient } from '../test-support/admin.js';
import { startTestGateway } from '../test-support/gateway.js';
import { type JournalTicket, UsageJournal, journalDir, journalStoreId, registerJournalMetrics } from './usage-journal.js';
import { UsageWriter } from './usage-writer.js';

const STORE_ID = 'abc123';
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentgw-journal-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const row = (extra: Partial<UsageRecord> = {}) =>
  usageRecord({ request_id: `req_${++n}`, trace_id: 't', tenant_id: 'acme', agent_id: 'agt_1', started_at: new Date().toISOString(), cost: 0.001, ...extra });

/** A store that only takes usage rows, skipping a request id it already has (ON CONFLICT DO NOTHING); refuses everything while down. */
function fakeStore() {
  const rows = new Map<string, UsageRecord>();
  const state = { down: false, inserts: 0 };
  const store = {
    async insertUsage(batch: UsageRecord[]) {
      if (state.down) throw new Error('connection refused');
      state.inserts++;
      for (const r of batch) if (!rows.has(r.request_id)) rows.set(r.request_id, r);
    },
  } as unknown as Store;
  return { store, rows, state };
}

const open = (opts: Partial<Parameters<typeof UsageJournal.open>[0]> = {}) => UsageJournal.open({ dir, storeId: STORE_ID, fsyncMs: 50, ...opts });
const segments = () => readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort();
const linesOf = (file: string) => readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as UsageRecord);

describe('UsageJournal', () => {
  test("a turn's rows reach the file together at its end, as JSON lines; written() resolves then", async () => {
    const j = open();
    const sent = [row(), row(), row()];
    for (const r of sent) j.append(r);
    // Nothing is written before the turn ends: one write for the three.
    expect(segments()).toHaveLength(1);
    expect(statSync(join(dir, segments()[0]!)).size).toBe(0);
    await j.written();
    expect(linesOf(segments()[0]!)).toEqual(sent);
    expect(j.pendingRows).toBe(3);
    expect(j.bytes).toBe(statSync(join(dir, segments()[0]!)).size);
    await j.close();
  });

  test('cut after commit: a segment goes once the database has every row of it; rows appended meanwhile stay', async () => {
    const j = open();
    const first = [row(), row()];
    const tickets = first.map((r) => j.append(r));
    await j.written();
    const later = row();
    const laterTicket = j.append(later);
    await j.written();
    // The database took the first two: the segment also holds the third, so it stays.
    j.committed(tickets);
    expect(segments()).toHaveLength(1);
    expect(linesOf(segments()[0]!).map((r) => r.request_id)).toContain(later.request_id);
    expect(j.pendingRows).toBe(1);
    j.committed([laterTicket]);
    expect(segments()).toEqual([]);
    expect(j.bytes).toBe(0);
    expect(j.pendingRows).toBe(0);
    // Appending goes on in a new segment.
    j.append(row());
    await j.written();
    expect(segments()).toHaveLength(1);
    await j.close();
    // Closed with a row the database lacks: the segment stays for the next start, unlocked.
    expect(segments()).toHaveLength(1);
    expect(readdirSync(dir).filter((f) => f.endsWith('.lock'))).toEqual([]);
  });

  test('a commit that comes before the turn is written waits for the write, then cuts', async () => {
    const j = open();
    const t = j.append(row());
    j.committed([t]);
    expect(segments()).toHaveLength(1);
    await j.written();
    expect(segments()).toEqual([]);
    await j.close();
  });

  test('segments rotate by size; each goes when its own rows are in the database', async () => {
    const j = open({ segmentBytes: 1000 });
    const tickets: JournalTicket[][] = [];
    for (let turn = 0; turn < 4; turn++) {
      const t: JournalTicket[] = [];
      for (let i = 0; i < 4; i++) t.push(j.append(row()));
      tickets.push(t);
      await j.written();
    }
    const before = segments();
    expect(before.length).toBeGreaterThan(1);
    j.committed(tickets[0]!);
    expect(segments().length).toBeLessThanOrEqual(before.length);
    for (const t of tickets.slice(1)) j.committed(t);
    expect(segments()).toEqual([]);
    await j.close();
  });

  test('replay: a node that died leaves rows; the next start inserts those the database lacks, then deletes the files', async () => {
    const { store, rows } = fakeStore();
    const dead = open();
    const sent = Array.from({ length: 7 }, () => row());
    for (const r of sent) dead.append(r);
    await dead.written();
    // The database already has two of them (written before the crash): skipped, not doubled.
    await store.insertUsage(sent.slice(0, 2));
    dead.abandon();

    const next = open();
    const result = await next.replay(store);
    expect(result).toEqual({ rows: 7, segments: 1, skipped: 0, rejected: 0, settled: 0 });
    expect([...rows.keys()].sort()).toEqual(sent.map((r) => r.request_id).sort());
    expect(rows.get(sent[6]!.request_id)).toEqual(sent[6]);
    // The dead node's files and lock are gone; the new node's lock remains.
    expect(segments()).toEqual([]);
    expect(readdirSync(dir).filter((f) => f.endsWith('.lock'))).toEqual([`usage-journal.${STORE_ID}.${next.nodeId}.lock`]);
    await next.close();
  });

  test('a torn last line (the crash cut the write short) is left out; every whole line is replayed', async () => {
    const { store, rows } = fakeStore();
    const dead = open();
    const sent = [row(), row()];
    for (const r of sent) dead.append(r);
    await dead.written();
    dead.abandon();
    const file = join(dir, segments()[0]!);
    appendFileSync(file, JSON.stringify(row()).slice(0, 40));
    const next = open();
    const result = await next.replay(store);
    expect(result.rows).toBe(2);
    expect(result.skipped).toBe(1);
    expect([...rows.keys()]).toEqual(sent.map((r) => r.request_id));
    await next.close();
  });

  test("replay leaves alone the segments of a node still running and those of another database", async () => {
    const { store, rows } = fakeStore();
    const alive = open();
    alive.append(row());
    await alive.written();
    const foreign = UsageJournal.open({ dir, storeId: 'def456' });
    foreign.append(row());
    await foreign.written();
    foreign.abandon();
    const next = open();
    expect(await next.replay(store)).toMatchObject({ rows: 0, segments: 0 });
    expect(rows.size).toBe(0);
    expect(segments()).toHaveLength(2);
    await next.close();
    await alive.close();
  });

  test('a lock of a process that no longer exists does not keep its segments from being replayed', async () => {
    const { store, rows } = fakeStore();
    const r = row();
    writeFileSync(join(dir, `usage-journal.${STORE_ID}.zz1.lock`), JSON.stringify({ pid: 2 ** 22 + 7, host: (await import('node:os')).hostname() }));
    writeFileSync(join(dir, `usage-journal.${STORE_ID}.zz1.00000001.jsonl`), `${JSON.stringify(r)}\n`);
    const next = open();
    expect((await next.replay(store)).rows).toBe(1);
    expect(rows.has(r.request_id)).toBe(true);
    expect(existsSync(join(dir, `usage-journal.${STORE_ID}.zz1.lock`))).toBe(false);
    await next.close();
  });

  test('max_mb: the journal is full at its cap (logged, gauged) and no longer once the database catches up', async () => {
    const logs: string[] = [];
    const log = { warn: (_o: object, m: string) => logs.push(`warn: ${m}`), error: (_o: object, m: string) => logs.push(`error: ${m}`) };
    const j = open({ maxBytes: 4000, segmentBytes: 1000, log });
    const registry = new Registry();
    registerJournalMetrics(registry, j);
    const tickets: JournalTicket[] = [];
    while (!j.full) {
      tickets.push(j.append(row()));
      await j.written();
    }
    expect(j.bytes).toBeGreaterThanOrEqual(4000);
    expect(logs.some((l) => l.startsWith('warn: usage journal nears its cap'))).toBe(true);
    expect(logs.some((l) => l.startsWith('error: usage journal is full'))).toBe(true);
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/agentgw_usage_journal_full 1/);
    expect(metrics).toMatch(new RegExp(`agentgw_usage_journal_pending_rows ${tickets.length}`));
    expect(metrics).toMatch(new RegExp(`agentgw_usage_journal_bytes ${j.bytes}`));
    j.committed(tickets);
    expect(j.full).toBe(false);
    expect(await registry.metrics()).toMatch(/agentgw_usage_journal_full 0/);
    await j.close();
  });

  test('the directory defaults to the SQLite file\'s, else ./data/', () => {
    const journal = { fsync_ms: 50, max_mb: 1 };
    expect(journalDir({ journal, storage: { kind: 'sqlite', path: '/var/lib/agentgw/agentgw.db' } })).toBe('/var/lib/agentgw');
    expect(journalDir({ journal, storage: { kind: 'postgres', url: 'postgres://x' } })).toBe(join(process.cwd(), 'data'));
    expect(journalDir({ journal: { ...journal, path: '/j' }, storage: { kind: 'postgres', url: 'postgres://x' } })).toBe('/j');
  });
});

describe('UsageWriter with a journal', () => {
  test('each record is journaled before add() resolves, and the journal is cut once the store has it', async () => {
    const { store, rows } = fakeStore();
    const journal = open();
    const writer = new UsageWriter(store, { journal, flushMs: 10_000 });
    const r = row();
    await writer.add(r);
    expect(linesOf(segments()[0]!)).toEqual([r]);
    await writer.flush();
    expect(rows.has(r.request_id)).toBe(true);
    expect(segments()).toEqual([]);
    await writer.close();
  });

  test('while the store is down the memory queue stays bounded; rows past it are read back from the journal, in order, once', async () => {
    const { store, rows, state } = fakeStore();
    const journal = open({ segmentBytes: 2000 });
    const writer = new UsageWriter(store, { journal, batchSize: 4, flushMs: 10_000, maxQueuedRows: 5, onError: () => undefined });
    state.down = true;
    const sent = Array.from({ length: 40 }, () => row());
    for (const r of sent) await writer.add(r);
    await writer.flush();
    expect(writer.queued).toBe(5);
    expect(writer.pending).toBe(40);
    expect(journal.pendingRows).toBe(40);
    state.down = false;
    const order: string[] = [];
    const insert = store.insertUsage.bind(store);
    store.insertUsage = async (b) => {
      order.push(...b.map((x) => x.request_id));
      await insert(b);
    };
    // Rows that come while the spilled ones are read back keep their place after them.
    const more = [row(), row()];
    for (const r of more) await writer.add(r);
    await writer.flush();
    expect(order).toEqual([...sent, ...more].map((r) => r.request_id));
    expect(rows.size).toBe(42);
    expect(writer.pending).toBe(0);
    expect(journal.pendingRows).toBe(0);
    expect(segments()).toEqual([]);
    // Back to memory: the next row is queued, not spilled.
    await writer.add(row());
    expect(writer.queued).toBe(1);
    await writer.close();
    expect(segments()).toEqual([]);
  });

  test('closing while the store is down keeps the rows in the journal, and the next start writes them', async () => {
    const { store, rows, state } = fakeStore();
    const writer = new UsageWriter(store, { journal: open(), flushMs: 10_000, onError: () => undefined });
    state.down = true;
    const sent = [row(), row(), row()];
    for (const r of sent) await writer.add(r);
    const closing = writer.close();
    await closing;
    expect(segments()).toHaveLength(1);
    state.down = false;
    const next = open();
    expect((await next.replay(store)).rows).toBe(3);
    expect([...rows.keys()].sort()).toEqual(sent.map((r) => r.request_id).sort());
    await next.close();
  }, 10_000);
});

describe('UsageWriter with a journal and the Redis counters', () => {
  /** A tracker as the Redis counters give it: each request's settle resolves when the test says so. */
  function tracker() {
    const pending = new Map<string, () => void>();
    const replayed: Array<{ reservationId: string; cost: number }> = [];
    const forgotten: string[] = [];
    return {
      pending,
      replayed,
      forgotten,
      track(requestId: string) {
        let settle!: () => void;
        const settled = new Promise<void>((r) => (settle = r));
        pending.set(requestId, settle);
        return { reservationId: `${requestId}.ticket`, marker: requestId, settled };
      },
      async replaySettle(reservationId: string, cost: number) {
        replayed.push({ reservationId, cost });
      },
      forget(markers: readonly string[]) {
        forgotten.push(...markers);
      },
    };
  }

  test('a row stays in the journal until both the database has it and its settle reached the counters; then its marker is forgotten', async () => {
    const { store, rows } = fakeStore();
    const t = tracker();
    const journal = open({ tracker: t });
    const writer = new UsageWriter(store, { journal, flushMs: 10_000, tracker: t });
    const r = row();
    await writer.add(r);
    // The reservation is journaled with the row; the database gets the row alone.
    expect(readFileSync(join(dir, segments()[0]!), 'utf8')).toContain(`"agentgw_reservation":"${r.request_id}.ticket"`);
    await writer.flush();
    expect(rows.get(r.request_id)).toEqual(r);
    expect(segments()).toHaveLength(1);
    t.pending.get(r.request_id)!();
    await new Promise((res) => setTimeout(res, 10));
    expect(segments()).toEqual([]);
    expect(t.forgotten).toEqual([r.request_id]);
    await writer.close();
  });

  test('a node that died before its settles: the next start inserts the rows, then settles their reservations', async () => {
    const { store, rows } = fakeStore();
    const t = tracker();
    const dead = open({ tracker: t });
    const writer = new UsageWriter(store, { journal: dead, flushMs: 10_000, tracker: t });
    const [a, b] = [row({ cost: 0.5 }), row({ cost: 0.25 })];
    await writer.add(a);
    await writer.add(b);
    await writer.flush();
    dead.abandon();
    const next = open({ tracker: t });
    const result = await next.replay(store);
    expect(result).toMatchObject({ rows: 2, settled: 2 });
    expect(t.replayed).toEqual([
      { reservationId: `${a.request_id}.ticket`, cost: 0.5 },
      { reservationId: `${b.request_id}.ticket`, cost: 0.25 },
    ]);
    expect(rows.get(a.request_id)).toEqual(a);
    await next.close();
  });

  test('no row goes to the database before its journal line is in the file (a crash between would leave it unsettled)', async () => {
    const { store } = fakeStore();
    const journal = open();
    const lines: number[] = [];
    const insert = store.insertUsage.bind(store);
    store.insertUsage = async (batch) => {
      lines.push(segments().length ? linesOf(segments()[0]!).length : 0);
      await insert(batch);
    };
    const writer = new UsageWriter(store, { journal, batchSize: 2, flushMs: 10_000 });
    // A full batch in one turn: its insert waits for the end of the turn, when the journal writes.
    void writer.add(row());
    void writer.add(row());
    await writer.flush();
    expect(lines).toEqual([2]);
    await writer.close();
  });

  test('hold(): the rows queued so far are written, later ones wait until resume()', async () => {
    const { store, rows } = fakeStore();
    const writer = new UsageWriter(store, { journal: open(), flushMs: 10, batchSize: 2 });
    const before = [row(), row(), row()];
    for (const r of before) await writer.add(r);
    await writer.hold();
    expect([...rows.keys()]).toEqual(before.map((r) => r.request_id));
    const after = [row(), row(), row()];
    for (const r of after) await writer.add(r);
    await writer.flush();
    await new Promise((res) => setTimeout(res, 50));
    expect(rows.size).toBe(3);
    writer.resume();
    await writer.flush();
    expect(rows.size).toBe(6);
    await writer.close();
  });
});

describe('a gateway restarted after a crash', () => {
  test('replays the journal before seeding budgets: the spend and the trace include the rows the database lacked', async () => {
    const own = mkdtempSync(join(tmpdir(), 'agentgw-journal-gw-'));
    const sqlitePath = join(own, 'agentgw.db');
    try {
      const first = await startTestGateway({ sqlitePath });
      const admin = adminClient(first.adminUrl, first.adminKey);
      await admin.tenant('acme');
      await admin.policy('budgeted', { tenant_id: 'acme', daily_budget: 10, monthly_budget: 100 });
      const agent = await admin.agent('acme', 'bot', 'budgeted');
      const storeId = await journalStoreId(first.runtime.store);
      await first.close();
      // A node killed after answering: its rows are in its journal (beside the SQLite file), not in the database.
      const killed = UsageJournal.open({ dir: own, storeId });
      const rows = [1.25, 0.5].map((cost) => row({ agent_id: agent.id, tenant_id: 'acme', trace_id: 'crashed', cost, started_at: new Date().toISOString() }));
      for (const r of rows) killed.append(r);
      await killed.written();
      killed.abandon();

      const second = await startTestGateway({ sqlitePath, adminKey: first.adminKey });
      try {
        const api = adminClient(second.adminUrl, second.adminKey);
        const { spend } = await api.call('GET', `/agents/${agent.id}`);
        expect(spend.day).toBeCloseTo(1.75, 9);
        expect(spend.month).toBeCloseTo(1.75, 9);
        const trace = await api.call('GET', '/traces/crashed');
        expect(trace.requests.map((r: { request_id: string }) => r.request_id).sort()).toEqual(rows.map((r) => r.request_id).sort());
        expect(readdirSync(own).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});
