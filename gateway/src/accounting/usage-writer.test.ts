import { describe, expect, test, vi } from 'vitest';
import type { Store, UsageRecord } from '../storage/store.js';
import { usageRecord } from '../test-support/store.js';
import { UsageWriter } from './usage-writer.js';

/**
 * A store that only takes usage rows: it keeps each batch, and refuses the next `failures` of them, every batch with a
 * row of `poison` (as a database refuses a value it cannot store), and everything while `down`.
 */
function fakeStore() {
  const batches: string[][] = [];
  const state = { failures: 0, delayMs: 0, poison: new Set<string>(), down: false, downAfterWrites: Infinity };
  const store = {
    usageBatchRows: undefined as number | undefined,
    async insertUsage(rows: UsageRecord[]) {
      if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
      if (state.failures > 0) {
        state.failures--;
        throw new Error('database is locked');
      }
      if (state.down || batches.length >= state.downAfterWrites) throw new Error('connection refused');
      if (rows.some((r) => state.poison.has(r.request_id))) throw new Error('invalid byte sequence for encoding "UTF8": 0x00');
      batches.push(rows.map((r) => r.request_id));
    },
  };
  return { store: store as unknown as Store & { usageBatchRows: number | undefined }, batches, state, written: () => batches.flat() };
}

/** A writer that flushes only when told to, and notes the ids of the records it leaves out. */
function writerNoting(store: Store) {
  const dropped: string[] = [];
  const writer = new UsageWriter(store, { batchSize: 100, flushMs: 10_000, onError: () => undefined, onDropped: (r) => dropped.push(r.request_id) });
  return { writer, dropped };
}

let n = 0;
const record = () => usageRecord({ request_id: `req_${++n}`, trace_id: 't', tenant_id: 'acme', agent_id: 'agt_1', started_at: new Date().toISOString() });

describe('UsageWriter', () => {
  test('writes a full batch at once, and fewer rows once flushMs has passed', async () => {
    vi.useFakeTimers();
    try {
      const { store, batches, written } = fakeStore();
      const writer = new UsageWriter(store, { batchSize: 3, flushMs: 30 });
      const full = [record(), record(), record()];
      for (const r of full) writer.add(r);
      await vi.advanceTimersByTimeAsync(0);
      expect(batches).toEqual([full.map((r) => r.request_id)]);
      const few = [record(), record()];
      for (const r of few) writer.add(r);
      await vi.advanceTimersByTimeAsync(29);
      expect(writer.pending).toBe(2);
      await vi.advanceTimersByTimeAsync(1);
      expect(written()).toEqual([...full, ...few].map((r) => r.request_id));
      expect(writer.pending).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  test('a refused batch stays queued and is written by a later flush: nothing lost, nothing twice', async () => {
    const { store, state, written } = fakeStore();
    const errors: unknown[] = [];
    const writer = new UsageWriter(store, { batchSize: 100, flushMs: 10_000, onError: (e) => errors.push(e) });
    const sent = Array.from({ length: 5 }, record);
    for (const r of sent) writer.add(r);
    state.failures = 1;
    await writer.flush();
    expect(errors).toHaveLength(1);
    expect(writer.pending).toBe(5);
    await writer.flush();
    expect(written()).toEqual(sent.map((r) => r.request_id));
    expect(writer.pending).toBe(0);
    await writer.close();
  });

  test('rows added while a batch is being written go in the next one; concurrent flushes share one pass', async () => {
    const { store, state, batches } = fakeStore();
    state.delayMs = 20;
    const writer = new UsageWriter(store, { batchSize: 2, flushMs: 10_000 });
    const first = [record(), record()];
    for (const r of first) writer.add(r);
    const later = [record(), record(), record()];
    for (const r of later) writer.add(r);
    const a = writer.flush();
    expect(writer.flush()).toBe(a);
    await a;
    expect(batches.map((b) => b.length)).toEqual([2, 2, 1]);
    expect(batches.flat()).toEqual([...first, ...later].map((r) => r.request_id));
  });

  test('close writes everything queued, waiting out a store that refuses a few times', async () => {
    const { store, state, written } = fakeStore();
    const writer = new UsageWriter(store, { batchSize: 2, flushMs: 10_000, onError: () => undefined });
    const sent = Array.from({ length: 7 }, record);
    state.failures = 3;
    for (const r of sent) writer.add(r);
    await writer.close();
    expect(written().sort()).toEqual(sent.map((r) => r.request_id).sort());
    expect(new Set(written()).size).toBe(sent.length);
    expect(writer.pending).toBe(0);
  });
  test('without a batch size, batches are as large as the store prefers, asked at every insert', async () => {
    const { store, batches } = fakeStore();
    const writer = new UsageWriter(store, { flushMs: 10_000 });
    store.usageBatchRows = 3;
    for (let i = 0; i < 3; i++) writer.add(record());
    await writer.flush();
    // The store's preference changed (SQLite: its usage thread died): the next batch follows it.
    store.usageBatchRows = 2;
    for (let i = 0; i < 2; i++) writer.add(record());
    await new Promise((r) => setImmediate(r));
    expect(batches.map((b) => b.length)).toEqual([3, 2]);
    expect(writer.pending).toBe(0);
  });

  test('captured bodies bound a batch: it is sent once they reach batchBodyChars, whatever its rows', async () => {
    const { store, batches } = fakeStore();
    const writer = new UsageWriter(store, { batchSize: 100, batchBodyChars: 10, flushMs: 10_000 });
    const withBody = () => ({ ...record(), body: 'abcd' });
    writer.add(withBody());
    writer.add(withBody());
    writer.add(record());
    await new Promise((r) => setImmediate(r));
    expect(writer.pending).toBe(3);
    for (let i = 0; i < 4; i++) writer.add(withBody());
    await new Promise((r) => setImmediate(r));
    // 4 + 4 + 0 + 4 reach 10 after the fourth row; the rest follow in the next batch.
    expect(batches.map((b) => b.length)).toEqual([4, 3]);
    expect(writer.pending).toBe(0);
  });
  test('a row the store never takes is left out and reported once the batch has failed 3 times; the others are written', async () => {
    const { store, state, written } = fakeStore();
    const { writer, dropped } = writerNoting(store);
    const sent = Array.from({ length: 5 }, record);
    state.poison.add(sent[2]!.request_id);
    for (const r of sent) writer.add(r);
    await writer.flush();
    await writer.flush();
    expect(writer.pending).toBe(5);
    expect(written()).toEqual([]);
    await writer.flush();
    expect(dropped).toEqual([sent[2]!.request_id]);
    expect(written()).toEqual([0, 1, 3, 4].map((i) => sent[i]!.request_id));
    expect(writer.pending).toBe(0);
    // Back to whole batches.
    const more = [record(), record()];
    for (const r of more) writer.add(r);
    await writer.flush();
    expect(written().slice(-2)).toEqual(more.map((r) => r.request_id));
  });

  test('a store that is down loses nothing: rows are kept until it takes them again', async () => {
    const { store, state, written } = fakeStore();
    const { writer, dropped } = writerNoting(store);
    const sent = Array.from({ length: 40 }, record);
    for (const r of sent) writer.add(r);
    state.down = true;
    let calls = 0;
    const insert = store.insertUsage.bind(store);
    store.insertUsage = (rows) => (calls++, insert(rows));
    for (let i = 0; i < 6; i++) await writer.flush();
    expect(writer.pending).toBe(40);
    // Each flush tries the whole batch; from the third on, then 3 rows and the last one: a store that is down is not
    // asked row by row.
    expect(calls).toBe(6 + 4 * 4);
    state.down = false;
    await writer.flush();
    expect(written()).toEqual(sent.map((r) => r.request_id));
    expect(dropped).toEqual([]);
  });

  test('a row refused once in the row-by-row pass, by a passing failure, is tried again and kept', async () => {
    const { store, state, written } = fakeStore();
    const { writer, dropped } = writerNoting(store);
    const sent = Array.from({ length: 4 }, record);
    for (const r of sent) writer.add(r);
    // The whole batch fails 3 times, then the first row once more: the store is busy, not refusing the row.
    state.failures = 4;
    for (let i = 0; i < 3; i++) await writer.flush();
    expect(dropped).toEqual([]);
    expect([...written()].sort()).toEqual(sent.map((r) => r.request_id).sort());
    expect(writer.pending).toBe(0);
  });

  test('rows a store never takes at the head of a batch do not hold back the rows after them', async () => {
    const { store, state, written } = fakeStore();
    const { writer, dropped } = writerNoting(store);
    const sent = Array.from({ length: 8 }, record);
    for (const r of sent.slice(0, 4)) state.poison.add(r.request_id);
    for (const r of sent) writer.add(r);
    for (let i = 0; i < 3; i++) await writer.flush();
    expect(dropped).toEqual(sent.slice(0, 4).map((r) => r.request_id));
    // The last row went in as the probe and again in its turn (a store skips a row it already has).
    expect([...new Set(written())].sort()).toEqual(sent.slice(4).map((r) => r.request_id).sort());
    expect(writer.pending).toBe(0);
  });

  test('rows refused after the last one written stay queued: the store may have gone down in the middle', async () => {
    const { store, state, written } = fakeStore();
    const { writer, dropped } = writerNoting(store);
    const sent = Array.from({ length: 5 }, record);
    state.poison.add(sent[1]!.request_id);
    for (const r of sent) writer.add(r);
    for (let i = 0; i < 2; i++) await writer.flush();
    // Row by row: 0 written, 1 refused, 2 written, then the store goes down: 3 and 4 are refused too.
    state.downAfterWrites = 2;
    await writer.flush();
    expect(dropped).toEqual([sent[1]!.request_id]);
    expect(writer.pending).toBe(2);
    state.downAfterWrites = Infinity;
    await writer.flush();
    expect(written()).toEqual([0, 2, 3, 4].map((i) => sent[i]!.request_id));
    expect(writer.pending).toBe(0);
  });
});
