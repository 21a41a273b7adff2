import { describe, expect, test } from 'vitest';
import { DEFAULT_RULES, type Policy } from '../contract/index.js';
import { Snapshot, TRACE_STOP_CAP, TRACE_STOP_WINDOW_MS } from './snapshot.js';
import type { Store, StoredAgent } from './store.js';

const policy = (id: string, monthly_budget: number): Policy => ({
  id,
  tenant_id: null,
  monthly_budget,
  daily_budget: null,
  allowed_models: null,
  rules: DEFAULT_RULES,
  labels: {},
  created_at: '2030-01-01T00:00:00.000Z',
  updated_at: '2030-01-01T00:00:00.000Z',
});

/** Just enough of a Store for the snapshot, with reads that can be held back to force an interleaving. */
function fakeStore() {
  const settings = new Map<string, string>();
  let policies: Policy[] = [policy('p', 1)];
  const held: Array<() => void> = [];
  let hold = false;
  const store = {
    async getSetting(k: string) {
      return settings.get(k);
    },
    async setSetting(k: string, v: string) {
      settings.set(k, v);
    },
    async settingsWithPrefix(prefix: string) {
      return [...settings].filter(([k]) => k.startsWith(prefix)).map(([key, value]) => ({ key, value }));
    },
    async deleteSetting(k: string) {
      settings.delete(k);
    },
    async allAgents(): Promise<StoredAgent[]> {
      return [];
    },
    stopQueries: [] as Array<{ since: string; limit: number }>,
    stops: [] as Array<{ tenant_id: string; trace_id: string }>,
    async recentTraceStops(since: string, limit: number) {
      this.stopQueries.push({ since, limit });
      return this.stops;
    },
    async allRoutes() {
      return [];
    },
    async allPolicies() {
      const seen = policies;
      if (hold) {
        hold = false;
        await new Promise<void>((r) => held.push(r));
      }
      return seen;
    },
  };
  return {
    raw: store,
    store: store as unknown as Store,
    setPolicies: (p: Policy[]) => {
      policies = p;
    },
    holdNextRead: () => {
      hold = true;
    },
    release: () => held.splice(0).forEach((r) => r()),
  };
}

describe('Snapshot', () => {
  test('a slow reload that started before a write cannot undo the write once it is visible', async () => {
    const f = fakeStore();
    const snap = new Snapshot(f.store);
    await snap.reload();
    expect(snap.policy('p')?.monthly_budget).toBe(1);

    // A poll-triggered reload reads the old policy and stalls...
    f.holdNextRead();
    const slow = snap.reload();
    await new Promise((r) => setTimeout(r, 5));
    // ...meanwhile an admin write lands and this node reloads before answering.
    f.setPolicies([policy('p', 2)]);
    await snap.changed();
    expect(snap.policy('p')?.monthly_budget).toBe(2);

    // The stale reload finishing late must not bring the old policy back.
    f.release();
    await slow;
    expect(snap.policy('p')?.monthly_budget).toBe(2);
  });

  test('maintenance is read back from the store after a change', async () => {
    const f = fakeStore();
    const snap = new Snapshot(f.store);
    await snap.reload();
    expect(snap.maintenance).toEqual({ enabled: false, message: null, since: null });
    await snap.setMaintenance({ enabled: true, message: 'upgrade', since: '2030-01-01T00:00:00.000Z' });
    expect(snap.maintenance).toEqual({ enabled: true, message: 'upgrade', since: '2030-01-01T00:00:00.000Z' });
    const other = new Snapshot(f.store);
    await other.reload();
    expect(other.maintenance.enabled).toBe(true);
  });

  test('holds the stopped traces of the last 30 days, at most TRACE_STOP_CAP, keyed by tenant and trace', async () => {
    const f = fakeStore();
    f.raw.stops = [{ tenant_id: 'acme', trace_id: 'run-1' }, { tenant_id: 'globex', trace_id: 'a:b' }];
    const snap = new Snapshot(f.store);
    const before = Date.now();
    await snap.reload();
    const q = f.raw.stopQueries.at(-1)!;
    expect(q.limit).toBe(TRACE_STOP_CAP);
    expect(TRACE_STOP_CAP).toBe(100_000);
    expect(Date.parse(q.since)).toBeGreaterThanOrEqual(before - TRACE_STOP_WINDOW_MS);
    expect(Date.parse(q.since)).toBeLessThanOrEqual(Date.now() - TRACE_STOP_WINDOW_MS);
    expect(TRACE_STOP_WINDOW_MS).toBe(30 * 86_400_000);
    expect(snap.isTraceStopped('acme', 'run-1')).toBe(true);
    expect(snap.isTraceStopped('globex', 'run-1')).toBe(false);
    expect(snap.isTraceStopped('globex', 'a:b')).toBe(true);
    expect(snap.stoppedTraces.has('acme:run-1')).toBe(true);

    // A write elsewhere is read back at the next load, with a new generation for the caches.
    const gen = snap.generation;
    f.raw.stops = [...f.raw.stops, { tenant_id: 'acme', trace_id: 'run-2' }];
    await snap.changed();
    expect(snap.isTraceStopped('acme', 'run-2')).toBe(true);
    expect(snap.generation).toBeGreaterThan(gen);
  });
});
