import { afterEach, describe, expect, it } from 'vitest';
import { type RegistryStore, StoreNodeRegistry } from './node-registry.js';

/** The settings table, in memory. */
function settings() {
  const map = new Map<string, string>();
  const store: RegistryStore = {
    async setSetting(key, value) {
      map.set(key, value);
    },
    async settingsWithPrefix(prefix) {
      return [...map].filter(([k]) => k.startsWith(prefix)).map(([key, value]) => ({ key, value }));
    },
    async deleteSetting(key) {
      map.delete(key);
    },
  };
  return { map, store };
}

const started: StoreNodeRegistry[] = [];
afterEach(async () => {
  for (const r of started.splice(0)) await r.stop();
});

async function node(store: RegistryStore, keyPrefix: string, staleMs?: number) {
  const r = new StoreNodeRegistry(store, keyPrefix, staleMs);
  await r.start();
  started.push(r);
  return r;
}

describe('StoreNodeRegistry', () => {
  it('lists the nodes of the same Redis keys heard from lately; one that stops leaves at once, one that stays silent after staleMs', async () => {
    const { map, store } = settings();
    const [a, b, c] = [await node(store, 'agentgw:', 200), await node(store, 'agentgw:', 200), await node(store, 'agentgw:', 200)];
    const other = await node(store, 'agentgw:other:', 200);
    expect((await a.live()).sort()).toEqual([a.self, b.self, c.self].sort());
    expect(await other.live()).toEqual([other.self]);
    await b.stop();
    expect((await a.live()).sort()).toEqual([a.self, c.self].sort());
    // c crashes: its last heartbeat ages past staleMs.
    const key = [...map.keys()].find((k) => k.endsWith(c.self))!;
    map.set(key, String(Date.now() - 1_000));
    expect(await a.live()).toEqual([a.self]);
  });
});
