// MCP session idle time across nodes, on a clock the test moves: two SessionActivity instances share one store, as
// gateway nodes share their database.
import { describe, expect, test } from 'vitest';
import { type ActivityStore, SessionActivity } from './session-activity.js';

function memoryStore(): ActivityStore & { rows: Map<string, string>; writes: number } {
  const rows = new Map<string, string>();
  const store = {
    rows,
    writes: 0,
    getSetting: async (key: string) => rows.get(key),
    setSetting: async (key: string, value: string) => {
      store.writes++;
      rows.set(key, value);
    },
    deleteSetting: async (key: string) => {
      rows.delete(key);
    },
    initSetting: async () => '',
    settingsWithPrefix: async (prefix: string) => [...rows].filter(([k]) => k.startsWith(prefix)).map(([key, value]) => ({ key, value })),
  };
  return store;
}

const IDLE = 3_600_000;

describe('SessionActivity', () => {
  test('a session is live while used within the idle time, and ends once unused for longer', async () => {
    const store = memoryStore();
    let now = 1_000_000;
    const node = new SessionActivity(store, IDLE, undefined, () => now);
    await node.started('s1');
    now += IDLE - 1;
    expect(await node.use('s1')).toBe(true);
    now += IDLE - 1;
    expect(await node.use('s1')).toBe(true);
    now += IDLE + node.writeEveryMs + 1;
    expect(await node.use('s1')).toBe(false);
    // Ended for good: its time is gone from the database.
    expect(store.rows.size).toBe(0);
    now += 1;
    expect(await node.use('s1')).toBe(false);
  });

  test('an id the database does not know (never started, or minted before idle times were kept) is not live', async () => {
    const node = new SessionActivity(memoryStore(), IDLE);
    expect(await node.use('unknown')).toBe(false);
  });

  test('use on one node keeps the session live on another', async () => {
    const store = memoryStore();
    let now = 5_000_000;
    const a = new SessionActivity(store, IDLE, undefined, () => now);
    const b = new SessionActivity(store, IDLE, undefined, () => now);
    await a.started('s1');
    // Used only on node b for longer than the idle time: node a still finds it live.
    for (let i = 0; i < 4; i++) {
      now += IDLE / 2;
      expect(await b.use('s1')).toBe(true);
    }
    expect(await a.use('s1')).toBe(true);
    // Then unused everywhere: it ends on both.
    now += IDLE + a.writeEveryMs + 1;
    expect(await b.use('s1')).toBe(false);
    expect(await a.use('s1')).toBe(false);
  });

  test('a node writes a session it keeps using at most once per writeEveryMs', async () => {
    const store = memoryStore();
    let now = 0;
    const node = new SessionActivity(store, IDLE, undefined, () => now);
    await node.started('s1');
    const before = store.writes;
    for (let i = 0; i < 100; i++) {
      now += 100;
      await node.use('s1');
    }
    expect(store.writes - before).toBeLessThanOrEqual(Math.ceil((100 * 100) / node.writeEveryMs));
  });

  test('a session its client ended is not live on any node', async () => {
    const store = memoryStore();
    const a = new SessionActivity(store, IDLE);
    const b = new SessionActivity(store, IDLE);
    await a.started('s1');
    expect(await b.use('s1')).toBe(true);
    await a.ended('s1');
    expect(store.rows.size).toBe(0);
    expect(await a.use('s1')).toBe(false);
    // A node that has not seen it used within the idle time asks the database, which no longer has it.
    expect(await new SessionActivity(store, IDLE).use('s1')).toBe(false);
  });

  test('a session with a notification stream open stays live without requests', async () => {
    const store = memoryStore();
    let now = 0;
    const a = new SessionActivity(store, IDLE, undefined, () => now);
    const b = new SessionActivity(store, IDLE, undefined, () => now);
    await a.started('s1');
    for (let i = 0; i < 10; i++) {
      now += IDLE / 2;
      a.keep('s1');
      await Promise.resolve();
    }
    expect(await b.use('s1')).toBe(true);
  });

  test('the times of ended sessions are purged from the database', async () => {
    const store = memoryStore();
    let now = 0;
    const node = new SessionActivity(store, 60_000, undefined, () => now);
    await node.started('old');
    now += 30 * 60_000;
    await node.started('new');
    node.sweep();
    await new Promise((r) => setTimeout(r, 0));
    expect([...store.rows.keys()].map((k) => k.split(':')[1])).toEqual(['new']);
  });
});
