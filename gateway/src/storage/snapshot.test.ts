import { describe, expect, test } from 'vitest';
import { DEFAULT_RULES, type Policy } from '../contract/index.js';
import { Snapshot } from './snapshot.js';
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
});
