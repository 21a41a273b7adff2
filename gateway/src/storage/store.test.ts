import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { DEFAULT_RULES } from '../contract/index.js';
import { openTestStore, usageRecord, type TestStore } from '../test-support/store.js';
import { type Kysely, sql } from 'kysely';
import { encodeCursor } from './kysely-store.js';
import { isUniqueViolation } from './store-errors.js';
import { SQLITE_CACHE_KIB } from './open-store.js';
import type { PolicyFields, Store, StoredResponse, UsageRecord } from './store.js';

const policyFields = (over: Partial<PolicyFields> = {}): PolicyFields => ({
  tenant_id: null,
  monthly_budget: null,
  daily_budget: null,
  allowed_models: null,
  allowed_tools: null,
  rules: DEFAULT_RULES,
  tool_rules: null,
  labels: {},
  ...over,
});

let n = 0;
/** Unique ids per test so tests in one store do not collide. */
const uid = (prefix: string) => `${prefix}${(++n).toString().padStart(4, '0')}`;
const agentRow = (tenant_id: string, name: string, over: { policy_id?: string | null } = {}) => {
  const id = `agt_${uid('').padStart(16, '0')}`;
  return { id, name, tenant_id, policy_id: over.policy_id ?? null, labels: { team: 'x' }, key_prefix: `agk_${id.slice(-8)}`, key_hash: `hash-${id}` };
};

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the promise to reject');
}

describe.each(['sqlite', 'postgres'] as const)('Store on %s', (kind) => {
  let ts: TestStore;
  let store: Store;
  beforeAll(async () => {
    ts = await openTestStore(kind);
    store = ts.store;
  });
  afterAll(async () => ts?.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  test('reports its kind', () => {
    expect(store.kind).toBe(kind);
  });

  test.runIf(kind === 'sqlite')('keeps SQLite page cache at 2 MB (the driver default of 16 MB fills under load)', async () => {
    const db = (store as unknown as { db: Kysely<unknown> }).db;
    const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(db);
    expect(rows).toEqual([{ cache_size: SQLITE_CACHE_KIB }]);
    expect(SQLITE_CACHE_KIB).toBe(-2000);
  });

  describe('tenants', () => {
    test('create, get, update, delete', async () => {
      const id = uid('t-');
      const created = await store.createTenant({ id, name: 'Acme', labels: { env: 'prod' } });
      expect(created).toEqual({ id, name: 'Acme', labels: { env: 'prod' }, monthly_budget: null, daily_budget: null, created_at: expect.any(String), updated_at: created.created_at });
      expect(await store.getTenant(id)).toEqual(created);

      const updated = await store.updateTenant(id, { name: 'Acme Inc.' });
      expect(updated).toMatchObject({ id, name: 'Acme Inc.', labels: { env: 'prod' }, created_at: created.created_at });
      expect(updated!.updated_at >= created.updated_at).toBe(true);
      const relabelled = await store.updateTenant(id, { labels: {} });
      expect(relabelled).toMatchObject({ name: 'Acme Inc.', labels: {} });

      expect(await store.deleteTenant(id)).toBe('deleted');
      expect(await store.getTenant(id)).toBeUndefined();
      expect(await store.deleteTenant(id)).toBe('missing');
    });

    test("budgets: set at create, changed or kept by update, cleared by null; every agent carries its tenant's", async () => {
      const id = uid('t-');
      expect(await store.createTenant({ id, name: 'B', labels: {}, monthly_budget: 250.5, daily_budget: 0 })).toMatchObject({ monthly_budget: 250.5, daily_budget: 0 });
      expect(await store.updateTenant(id, { daily_budget: 12.25 })).toMatchObject({ monthly_budget: 250.5, daily_budget: 12.25 });
      expect(await store.updateTenant(id, { name: 'B2' })).toMatchObject({ monthly_budget: 250.5, daily_budget: 12.25 });
      expect(await store.updateTenant(id, { monthly_budget: null })).toMatchObject({ monthly_budget: null, daily_budget: 12.25 });
      expect((await store.listTenants({ limit: 500, tenant_id: id })).data[0]).toMatchObject({ monthly_budget: null, daily_budget: 12.25 });
      const agent = await store.createAgent({ id: uid('agt_'), tenant_id: id, name: 'a', policy_id: null, labels: {}, key_prefix: 'agk_x', key_hash: uid('h') });
      expect((await store.allAgents()).find((a) => a.id === agent.id)?.tenant_budget).toEqual({ monthly_budget: null, daily_budget: 12.25 });
      expect(await store.getAgent(agent.id)).not.toHaveProperty('tenant_budget');
      await store.deleteAgent(agent.id);
      await store.deleteTenant(id);
    });

    test('a missing tenant: get and update answer undefined', async () => {
      expect(await store.getTenant('nope')).toBeUndefined();
      expect(await store.updateTenant('nope', { name: 'x' })).toBeUndefined();
    });

    test('a duplicate id is a unique violation', async () => {
      const id = uid('t-');
      await store.createTenant({ id, name: 'A', labels: {} });
      const e = await rejection(store.createTenant({ id, name: 'B', labels: {} }));
      expect(isUniqueViolation(e)).toBe(true);
      expect((await store.getTenant(id))!.name).toBe('A');
    });

    test('deletion is refused while agents or policies remain, and removes its admin keys', async () => {
      const id = uid('t-');
      await store.createTenant({ id, name: 'T', labels: {} });
      const pid = uid('p-');
      await store.putPolicy(pid, policyFields({ tenant_id: id }));
      expect(await store.deleteTenant(id)).toBe('not_empty');
      await store.deletePolicy(pid);

      const agent = agentRow(id, 'bot');
      await store.createAgent(agent);
      expect(await store.deleteTenant(id)).toBe('not_empty');
      expect(await store.getTenant(id)).toBeDefined();
      expect(await store.deleteAgent(agent.id)).toBe(true);

      await store.createAdminKey({
        id: `adk_${uid('').padStart(16, '0')}`,
        name: 'scoped',
        role: 'viewer',
        tenant_id: id,
        key_prefix: 'adk_aaaaaaaa',
        key_hash: `hash-${uid('k')}`,
        created_at: new Date().toISOString(),
      });
      expect(await store.deleteTenant(id)).toBe('deleted');
      const keys = await store.listAdminKeys({ limit: 500, tenant_id: id });
      expect(keys.data).toEqual([]);
    });
  });

  describe('agents', () => {
    let tenant: string;
    let other: string;
    beforeAll(async () => {
      tenant = uid('ta-');
      other = uid('tb-');
      await store.createTenant({ id: tenant, name: 'A', labels: {} });
      await store.createTenant({ id: other, name: 'B', labels: {} });
    });

    test('create, get, update, rotate key, delete', async () => {
      const pid = uid('p-');
      await store.putPolicy(pid, policyFields({ tenant_id: tenant }));
      const row = agentRow(tenant, 'bot-1', { policy_id: pid });
      const created = await store.createAgent(row);
      const { key_hash: _h, ...pub } = row;
      expect(created).toEqual({ ...pub, suspended: false, created_at: expect.any(String), updated_at: expect.any(String) });
      expect(created).not.toHaveProperty('key_hash');
      expect(await store.getAgent(row.id)).toEqual(created);

      const renamed = await store.updateAgent(row.id, { name: 'bot-1b', labels: { a: 'b' } });
      expect(renamed).toMatchObject({ name: 'bot-1b', labels: { a: 'b' }, policy_id: pid });
      const cleared = await store.updateAgent(row.id, { policy_id: null });
      expect(cleared).toMatchObject({ name: 'bot-1b', policy_id: null });

      expect(await store.setAgentKey(row.id, 'hash-rotated-1', 'agk_rotated')).toBe(true);
      const all = await store.allAgents();
      const stored = all.find((a) => a.id === row.id)!;
      expect(stored).toMatchObject({ key_hash: 'hash-rotated-1', key_prefix: 'agk_rotated' });
      expect(all.some((a) => a.key_hash === row.key_hash)).toBe(false);

      expect(await store.deleteAgent(row.id)).toBe(true);
      expect(await store.getAgent(row.id)).toBeUndefined();
      expect(await store.deleteAgent(row.id)).toBe(false);
      expect(await store.setAgentKey(row.id, 'h', 'p')).toBe(false);
      expect(await store.updateAgent(row.id, { name: 'x' })).toBeUndefined();
    });

    test('names are unique within a tenant, not across tenants', async () => {
      await store.createAgent(agentRow(tenant, 'dup'));
      expect(isUniqueViolation(await rejection(store.createAgent(agentRow(tenant, 'dup'))))).toBe(true);
      await expect(store.createAgent(agentRow(other, 'dup'))).resolves.toMatchObject({ tenant_id: other, name: 'dup' });

      const second = await store.createAgent(agentRow(tenant, 'dup-2'));
      expect(isUniqueViolation(await rejection(store.updateAgent(second.id, { name: 'dup' })))).toBe(true);
      expect((await store.getAgent(second.id))!.name).toBe('dup-2');
    });

    test('key hashes are unique', async () => {
      const a = agentRow(tenant, uid('k-'));
      await store.createAgent(a);
      const b = { ...agentRow(tenant, uid('k-')), key_hash: a.key_hash };
      expect(isUniqueViolation(await rejection(store.createAgent(b)))).toBe(true);
    });

    test('suspended: false unless asked, set and cleared by updateAgent, in the snapshot read', async () => {
      const plain = await store.createAgent(agentRow(tenant, uid('s-')));
      expect(plain.suspended).toBe(false);
      const born = await store.createAgent({ ...agentRow(tenant, uid('s-')), suspended: true });
      expect(born.suspended).toBe(true);
      expect((await store.getAgent(born.id))!.suspended).toBe(true);

      const suspended = await store.updateAgent(plain.id, { suspended: true });
      expect(suspended).toMatchObject({ id: plain.id, suspended: true, name: plain.name, policy_id: plain.policy_id, labels: plain.labels });
      expect((await store.allAgents()).find((a) => a.id === plain.id)?.suspended).toBe(true);
      // Other fields leave it alone.
      expect((await store.updateAgent(plain.id, { labels: { x: 'y' } }))?.suspended).toBe(true);
      expect((await store.updateAgent(plain.id, { suspended: false }))?.suspended).toBe(false);
      expect((await store.listAgents({ limit: 500, tenant_id: tenant })).data.find((a) => a.id === born.id)?.suspended).toBe(true);
    });

    test('list filters by tenant', async () => {
      const t = uid('tl-');
      await store.createTenant({ id: t, name: 'L', labels: {} });
      const a = await store.createAgent(agentRow(t, 'one'));
      const b = await store.createAgent(agentRow(t, 'two'));
      const page = await store.listAgents({ limit: 50, tenant_id: t });
      expect(page.data.map((x) => x.id).sort()).toEqual([a.id, b.id].sort());
      expect(page.next_cursor).toBeNull();
      expect(page.data.every((x) => !('key_hash' in x))).toBe(true);
    });
  });

  describe('policies', () => {
    let tenant: string;
    beforeAll(async () => {
      tenant = uid('tp-');
      await store.createTenant({ id: tenant, name: 'P', labels: {} });
    });

    test('put creates, then replaces; values round-trip', async () => {
      const id = uid('p-');
      const fields = policyFields({
        tenant_id: tenant,
        monthly_budget: 250.75,
        daily_budget: 0.1,
        allowed_models: ['openai/*', 'anthropic/claude-*'],
        rules: { ...DEFAULT_RULES, pii: 'block', pii_types: ['email'], retry_block: { max_repeats: 3, window_seconds: 300 }, rpm: 60 },
        tool_rules: [{ tools: ['Bash'], when: { command: ['rm *'], '/a/0': 're:x' }, action: 'deny', reason: 'no' }, { tools: ['*'], action: 'allow' }],
        labels: { managed_by: 'agentgw' },
      });
      const first = await store.putPolicy(id, fields);
      expect(first.created).toBe(true);
      expect(first.policy).toEqual({ id, ...fields, created_at: expect.any(String), updated_at: expect.any(String) });
      expect(await store.getPolicy(id)).toEqual(first.policy);

      const second = await store.putPolicy(id, { ...fields, monthly_budget: null, allowed_models: [], tool_rules: null });
      expect(second.created).toBe(false);
      expect(second.policy).toMatchObject({ monthly_budget: null, allowed_models: [], daily_budget: 0.1, tool_rules: null, rules: fields.rules, created_at: first.policy.created_at });
    });

    test('null allowed_models and a global policy round-trip', async () => {
      const id = uid('g-');
      const { policy } = await store.putPolicy(id, policyFields());
      expect(policy).toMatchObject({ tenant_id: null, allowed_models: null, monthly_budget: null, rules: DEFAULT_RULES, labels: {} });
      expect((await store.allPolicies()).some((p) => p.id === id)).toBe(true);
    });

    test('delete: missing, in use, deleted', async () => {
      const id = uid('p-');
      expect(await store.deletePolicy(id)).toBe('missing');
      await store.putPolicy(id, policyFields({ tenant_id: tenant }));
      const agent = await store.createAgent(agentRow(tenant, uid('user-'), { policy_id: id }));
      expect(await store.deletePolicy(id)).toBe('in_use');
      expect(await store.getPolicy(id)).toBeDefined();
      await store.updateAgent(agent.id, { policy_id: null });
      expect(await store.deletePolicy(id)).toBe('deleted');
      expect(await store.getPolicy(id)).toBeUndefined();
    });

    test('list filters by tenant', async () => {
      const t = uid('tq-');
      await store.createTenant({ id: t, name: 'Q', labels: {} });
      const ids = [uid('p-'), uid('p-')];
      for (const id of ids) await store.putPolicy(id, policyFields({ tenant_id: t }));
      const page = await store.listPolicies({ limit: 50, tenant_id: t });
      expect(page.data.map((p) => p.id)).toEqual(ids);
    });
  });

  describe('admin keys', () => {
    test('create, find by hash, list without hashes, delete', async () => {
      const id = `adk_${uid('').padStart(16, '0')}`;
      const created = await store.createAdminKey({
        id,
        name: 'ops',
        role: 'viewer',
        tenant_id: null,
        key_prefix: 'adk_12345678',
        key_hash: `hash-${id}`,
        created_at: new Date().toISOString(),
      });
      expect(created).toEqual({ id, name: 'ops', role: 'viewer', tenant_id: null, key_prefix: 'adk_12345678', created_at: expect.any(String) });
      expect(await store.findAdminKeyByHash(`hash-${id}`)).toMatchObject({ id, role: 'viewer', key_hash: `hash-${id}` });
      expect(await store.findAdminKeyByHash('no-such-hash')).toBeUndefined();

      const listed = await store.listAdminKeys({ limit: 500 });
      const mine = listed.data.find((k) => k.id === id);
      expect(mine).toEqual(created);
      expect(listed.data.every((k) => !('key_hash' in k))).toBe(true);

      expect(isUniqueViolation(await rejection(store.createAdminKey({ ...created, id: `${id}x`, key_hash: `hash-${id}` })))).toBe(true);
      expect(await store.deleteAdminKey(id)).toBe(true);
      expect(await store.deleteAdminKey(id)).toBe(false);
      expect(await store.findAdminKeyByHash(`hash-${id}`)).toBeUndefined();
    });

    test('the root key is upserted: one row whose hash follows the latest key', async () => {
      expect(await store.hasAdminKeyWithRole('admin')).toBe(false);
      await store.upsertRootKey('root-hash-1', 'adk_root1');
      await store.upsertRootKey('root-hash-2', 'adk_root2');
      expect(await store.findAdminKeyByHash('root-hash-1')).toBeUndefined();
      expect(await store.findAdminKeyByHash('root-hash-2')).toMatchObject({ id: 'root', role: 'admin', tenant_id: null, key_prefix: 'adk_root2' });
      expect((await store.listAdminKeys({ limit: 500 })).data.filter((k) => k.id === 'root')).toHaveLength(1);
      expect(await store.hasAdminKeyWithRole('admin')).toBe(true);
      expect(await store.hasAdminKeyWithRole('tenant_admin')).toBe(false);
    });
  });

  describe('pagination', () => {
    test('keyset pages are complete, ordered and stable while rows are added', async () => {
      const prefix = uid('pg-');
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const id = `${prefix}-${i}`;
        ids.push(id);
        await store.createTenant({ id, name: id, labels: {} });
      }
      const ours = (data: Array<{ id: string }>) => data.filter((t) => t.id.startsWith(prefix));
      // Only this test's tenants: a tenant-scoped list of each would be one row, so page the whole table and filter.
      const all = await store.listTenants({ limit: 500 });
      const order = ours(all.data).map((t) => t.id);
      expect(order.sort()).toEqual([...ids].sort());

      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.listTenants({ limit: 3, cursor });
        expect(page.data.length).toBeLessThanOrEqual(3);
        seen.push(...page.data.map((t) => t.id));
        cursor = page.next_cursor ?? undefined;
        if (pages === 0) await store.createTenant({ id: `${prefix}-late`, name: 'late', labels: {} });
        pages++;
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      const whole = (await store.listTenants({ limit: 500 })).data.map((t) => t.id);
      expect(seen).toEqual(whole);
      expect(seen).toContain(`${prefix}-late`);
      const created = (await store.listTenants({ limit: 500 })).data.map((t) => [t.created_at, t.id].join('|'));
      expect(created).toEqual([...created].sort());
    });

    test('three pages of agents with limit 3; the last has no next cursor', async () => {
      const t = uid('tc-');
      await store.createTenant({ id: t, name: 'C', labels: {} });
      for (let i = 0; i < 7; i++) await store.createAgent(agentRow(t, `a${i}`));
      const p1 = await store.listAgents({ limit: 3, tenant_id: t });
      const p2 = await store.listAgents({ limit: 3, tenant_id: t, cursor: p1.next_cursor! });
      const p3 = await store.listAgents({ limit: 3, tenant_id: t, cursor: p2.next_cursor! });
      expect([p1.data.length, p2.data.length, p3.data.length]).toEqual([3, 3, 1]);
      expect(p1.next_cursor).toEqual(expect.any(String));
      expect(p2.next_cursor).toEqual(expect.any(String));
      expect(p3.next_cursor).toBeNull();
      const names = [...p1.data, ...p2.data, ...p3.data].map((a) => a.name);
      expect(new Set(names)).toEqual(new Set(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6']));
      // The same cursor gives the same page again.
      expect(await store.listAgents({ limit: 3, tenant_id: t, cursor: p1.next_cursor! })).toEqual(p2);
    });

    test('an exact multiple of the limit ends without an empty extra page', async () => {
      const t = uid('te-');
      await store.createTenant({ id: t, name: 'E', labels: {} });
      for (let i = 0; i < 4; i++) await store.createAgent(agentRow(t, `e${i}`));
      const p1 = await store.listAgents({ limit: 2, tenant_id: t });
      const p2 = await store.listAgents({ limit: 2, tenant_id: t, cursor: p1.next_cursor! });
      expect(p2.data).toHaveLength(2);
      expect(p2.next_cursor).toBeNull();
    });

    test.each([
      ['not base64 JSON', 'garbage!'],
      ['JSON of the wrong shape', encodeCursor(['only-one'])],
      ['an object', Buffer.from('{"a":1}').toString('base64url')],
      ['numbers', Buffer.from('[1,2]').toString('base64url')],
    ])('an invalid cursor (%s) is a validation error naming cursor', async (_what, cursor) => {
      for (const list of [
        () => store.listTenants({ limit: 3, cursor }),
        () => store.listAgents({ limit: 3, cursor }),
        () => store.listPolicies({ limit: 3, cursor }),
        () => store.listAdminKeys({ limit: 3, cursor }),
        () => store.listTraces({ limit: 3, cursor }),
      ]) {
        const e = await rejection(list());
        expect(e).toMatchObject({ code: 'validation_failed', status: 400, param: 'cursor' });
      }
    });
  });

  describe('idempotency rows', () => {
    test('stored once; a second writer loses; rows older than the window are not returned', async () => {
      const row = { key_hash: uid('idem-'), scope: 'root', request_hash: 'rh', response: 'sealed-blob' };
      expect(await store.putIdempotent(row)).toBe(true);
      expect(await store.putIdempotent({ ...row, response: 'other' })).toBe(false);
      const dayAgo = new Date(Date.now() - 24 * 3600_000).toISOString();
      expect(await store.getIdempotent(row.key_hash, dayAgo)).toEqual({ scope: 'root', request_hash: 'rh', response: 'sealed-blob' });
      expect(await store.getIdempotent(row.key_hash, new Date(Date.now() + 60_000).toISOString())).toBeUndefined();
      expect(await store.getIdempotent('missing', dayAgo)).toBeUndefined();
    });

    test('expired rows are purged, so the key can be used again', async () => {
      const old = { key_hash: uid('idem-'), scope: 'root', request_hash: 'old', response: 'x' };
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date(Date.now() - 25 * 3600_000));
      expect(await store.putIdempotent(old)).toBe(true);
      vi.useRealTimers();
      // Outside the 24 h window: not replayed, and the next write purges it.
      expect(await store.getIdempotent(old.key_hash, new Date(Date.now() - 24 * 3600_000).toISOString())).toBeUndefined();
      expect(await store.putIdempotent({ ...old, request_hash: 'new' })).toBe(true);
      expect(await store.getIdempotent(old.key_hash, new Date(0).toISOString())).toMatchObject({ request_hash: 'new' });
    });
  });

  describe('settings', () => {
    test('get, set, overwrite; init keeps the first value', async () => {
      const k = uid('setting-');
      expect(await store.getSetting(k)).toBeUndefined();
      await store.setSetting(k, 'one');
      expect(await store.getSetting(k)).toBe('one');
      await store.setSetting(k, 'two');
      expect(await store.getSetting(k)).toBe('two');

      const i = uid('init-');
      expect(await store.initSetting(i, 'first')).toBe('first');
      expect(await store.initSetting(i, 'second')).toBe('first');
      expect(await store.getSetting(i)).toBe('first');
    });

    test('by prefix, with LIKE wildcards in it taken literally; delete', async () => {
      const p = uid('pre%_x:');
      await store.setSetting(`${p}a`, '1');
      await store.setSetting(`${p}b`, '2');
      await store.setSetting(`${p.replace('%_', 'zz')}c`, '3');
      expect((await store.settingsWithPrefix(p)).sort((x, y) => x.key.localeCompare(y.key))).toEqual([
        { key: `${p}a`, value: '1' },
        { key: `${p}b`, value: '2' },
      ]);
      await store.deleteSetting(`${p}a`);
      expect(await store.settingsWithPrefix(p)).toEqual([{ key: `${p}b`, value: '2' }]);
    });
  });

  describe('usage records and traces', () => {
    const T0 = Date.parse('2030-03-10T10:00:00.000Z');
    const at = (s: number) => new Date(T0 + Math.round(s * 1000)).toISOString();
    const tA = 'ua';
    const tB = 'ub';
    const trace1 = 'trace-one';
    const trace2 = 'trace-two';
    const trace3 = 'trace-three';
    const ids = { r1: 'req_1', r2: 'req_2', r3: 'req_3', r4: 'req_4', r5: 'req_5', r6: 'req_6' };
    const TOOL_CALLS = [
      { id: 'toolu_1', name: 'Bash', decision: 'denied' as const, rule: { policy_id: 'guard', index: 2 }, reason: 'no deletions', approval_id: null, wait_ms: 0.012 },
      { id: 'toolu_2', name: 'Read', decision: 'allowed' as const, rule: null, reason: null, approval_id: null, wait_ms: 0 },
    ];

    beforeAll(async () => {
      // Written out of time order, in two batches: steps follow started_at, not insertion.
      await store.insertUsage([
        usageRecord({ request_id: ids.r3, trace_id: trace1, tenant_id: tA, agent_id: 'agt_a1', started_at: at(20), prompt_tokens: 30, completion_tokens: 3, cost: 0.3, latency_ms: 5000, model: 'anthropic/claude-sonnet-4-5', provider: 'anthropic', tool_calls: TOOL_CALLS, cleaned: ['thinking_signatures', 'cache_control'] }),
        usageRecord({ request_id: ids.r1, trace_id: trace1, tenant_id: tA, agent_id: 'agt_a1', started_at: at(0), prompt_tokens: 10, completion_tokens: 1, cost: 0.1, latency_ms: 100, stream: true, ttft_ms: 40, endpoint: 'messages', cached_tokens: 6, reasoning_tokens: 1 }),
        usageRecord({ request_id: ids.r4, trace_id: trace2, tenant_id: tA, agent_id: 'agt_a2', started_at: at(30), prompt_tokens: 40, completion_tokens: 4, cost: 0.4, latency_ms: 200 }),
      ]);
      await store.insertUsage([
        usageRecord({ request_id: ids.r2, trace_id: trace1, tenant_id: tA, agent_id: 'agt_a1', started_at: at(10), prompt_tokens: 20, completion_tokens: 0, cost: 0, status: 'blocked', http_status: 403, error_code: 'pii_detected', pii_types: ['email', 'phone'], model: null, provider: null, latency_ms: 2 }),
        usageRecord({ request_id: ids.r5, trace_id: trace3, tenant_id: tB, agent_id: 'agt_b1', started_at: at(86_400), prompt_tokens: 50, completion_tokens: 5, cost: 0.5, latency_ms: 300 }),
        usageRecord({ request_id: ids.r6, trace_id: trace3, tenant_id: tB, agent_id: 'agt_b1', started_at: at(86_410), prompt_tokens: 60, completion_tokens: 6, cost: 0.6, status: 'error', http_status: 502, error_code: 'upstream_unavailable', latency_ms: 50 }),
      ]);
      // A retried flush of a record already written is ignored.
      await store.insertUsage([usageRecord({ request_id: ids.r1, trace_id: trace1, tenant_id: tA, agent_id: 'agt_a1', started_at: at(0), cost: 99 })]);
      await store.insertUsage([]);
    });

    test('getTrace: totals, end time and steps in time order', async () => {
      const t = await store.getTrace(trace1);
      expect(t).toMatchObject({
        trace_id: trace1,
        tenant_id: tA,
        agent_id: 'agt_a1',
        started_at: at(0),
        ended_at: at(25),
        request_count: 3,
        error_count: 1,
        prompt_tokens: 60,
        completion_tokens: 4,
      });
      expect(t!.cost).toBeCloseTo(0.4, 10);
      expect(t!.requests.map((r) => [r.step, r.request_id])).toEqual([
        [1, ids.r1],
        [2, ids.r2],
        [3, ids.r3],
      ]);
      expect(t!.requests[0]).toEqual({
        request_id: ids.r1,
        step: 1,
        endpoint: 'messages',
        model: 'openai/gpt-4o-mini',
        // A row written without it (as by an earlier release) names the model it was recorded with.
        requested_model: 'openai/gpt-4o-mini',
        provider: 'openai',
        stream: true,
        status: 'ok',
        http_status: 200,
        error_code: null,
        prompt_tokens: 10,
        completion_tokens: 1,
        cached_tokens: 6,
        reasoning_tokens: 1,
        cost: 0.1,
        latency_ms: 100,
        ttft_ms: 40,
        started_at: at(0),
        pii_types: [],
        response_id: null,
        tool: null,
        tool_calls: [],
        cleaned: [],
      });
      // A step's decided tool calls come back as written, and what was cleaned from its request.
      expect(t!.requests[2]!.tool_calls).toEqual(TOOL_CALLS);
      expect(t!.requests[2]!.cleaned).toEqual(['thinking_signatures', 'cache_control']);
      expect(t!.requests[1]).toMatchObject({ status: 'blocked', http_status: 403, error_code: 'pii_detected', pii_types: ['email', 'phone'], model: null, stream: false, ttft_ms: null });
    });

    test('getTrace is scoped by tenant when asked, and undefined when absent', async () => {
      expect(await store.getTrace(trace1, tB)).toBeUndefined();
      expect(await store.getTrace(trace1, tA)).toMatchObject({ request_count: 3 });
      expect(await store.getTrace('no-such-trace')).toBeUndefined();
    });

    test('listTraces: newest first, summaries match getTrace, filters and cursor', async () => {
      const all = await store.listTraces({ limit: 50 });
      const ours = all.data.filter((t) => [trace1, trace2, trace3].includes(t.trace_id));
      expect(ours.map((t) => t.trace_id)).toEqual([trace3, trace2, trace1]);
      const { requests: _r, ...detail } = (await store.getTrace(trace1))!;
      expect(ours[2]).toEqual(detail);
      expect(ours[0]).toMatchObject({ tenant_id: tB, request_count: 2, error_count: 1, prompt_tokens: 110, completion_tokens: 11, ended_at: at(86_410.05) });

      expect((await store.listTraces({ limit: 50, tenant_id: tA })).data.map((t) => t.trace_id)).toEqual([trace2, trace1]);
      expect((await store.listTraces({ limit: 50, agent_id: 'agt_a1' })).data.map((t) => t.trace_id)).toEqual([trace1]);
      expect((await store.listTraces({ limit: 50, since: at(25) })).data.map((t) => t.trace_id)).toEqual([trace3, trace2]);

      const p1 = await store.listTraces({ limit: 1, tenant_id: tA });
      expect(p1.data.map((t) => t.trace_id)).toEqual([trace2]);
      const p2 = await store.listTraces({ limit: 1, tenant_id: tA, cursor: p1.next_cursor! });
      expect(p2.data.map((t) => t.trace_id)).toEqual([trace1]);
      expect(p2.next_cursor).toBeNull();
      const first = await store.listTraces({ limit: 1, since: at(-1) });
      expect(first.data.map((t) => t.trace_id)).toEqual([trace3]);
      const second = await store.listTraces({ limit: 1, since: at(-1), cursor: first.next_cursor! });
      expect(second.data.map((t) => t.trace_id)).toEqual([trace2]);
      const third = await store.listTraces({ limit: 1, since: at(-1), cursor: second.next_cursor! });
      expect(third.data.map((t) => t.trace_id)).toEqual([trace1]);
      expect(third.next_cursor).toBeNull();
    });

    test('usage grouped by agent, tenant, model and day; from/to and tenant filters', async () => {
      const range = { from: at(-1), to: at(90_000) };
      const byAgent = await store.usage({ group_by: 'agent', ...range });
      expect(byAgent.map((r) => r.key)).toEqual(['agt_a1', 'agt_a2', 'agt_b1']);
      expect(byAgent[0]).toMatchObject({ key: 'agt_a1', requests: 3, errors: 1, prompt_tokens: 60, completion_tokens: 4 });
      expect(byAgent.map((r) => r.errors)).toEqual([1, 0, 1]);
      expect(byAgent[0]!.cost).toBeCloseTo(0.4, 10);

      const byTenant = await store.usage({ group_by: 'tenant', ...range });
      expect(byTenant).toEqual([
        { key: tA, requests: 4, errors: 1, prompt_tokens: 100, completion_tokens: 8, cost: expect.closeTo(0.8, 10) },
        { key: tB, requests: 2, errors: 1, prompt_tokens: 110, completion_tokens: 11, cost: expect.closeTo(1.1, 10) },
      ]);

      const byModel = await store.usage({ group_by: 'model', ...range, tenant_id: tA });
      expect(byModel.map((r) => [r.key, r.requests, r.errors])).toEqual([
        ['', 1, 1],
        ['anthropic/claude-sonnet-4-5', 1, 0],
        ['openai/gpt-4o-mini', 2, 0],
      ]);

      const byDay = await store.usage({ group_by: 'day', ...range });
      expect(byDay.map((r) => [r.key, r.requests, r.errors])).toEqual([
        ['2030-03-10', 4, 1],
        ['2030-03-11', 2, 1],
      ]);

      // The same instants written with an offset and without milliseconds.
      const noMillis = (iso: string) => iso.replace('.000Z', 'Z');
      expect((await store.usage({ group_by: 'tenant', from: noMillis(at(0)), to: '2030-03-10T11:00:30+01:00' })).map((r) => r.requests)).toEqual([3]);
      expect((await store.listTraces({ limit: 50, since: noMillis(at(0)) })).data.map((t) => t.trace_id)).toContain(trace1);
      expect((await store.spendSince('2030-03-10T11:00:05+01:00')).find((r) => r.agent_id === 'agt_a1')?.cost).toBeCloseTo(0.3, 10);

      const window = await store.usage({ group_by: 'tenant', from: at(5), to: at(30) });
      expect(window).toEqual([{ key: tA, requests: 2, errors: 1, prompt_tokens: 50, completion_tokens: 3, cost: expect.closeTo(0.3, 10) }]);
      expect(await store.usage({ group_by: 'agent', tenant_id: 'nobody' })).toEqual([]);
    });

    test('usage grouped by tool and by hour; errors count what a trace summary counts', async () => {
      // Before T0 and of a tenant of its own: the other tests' windows and totals do not see it.
      const tT = 'ut';
      const h = (iso: string) => `2029-07-04T${iso}Z`;
      const mcp = { endpoint: 'mcp', model: null, provider: null, prompt_tokens: 0, completion_tokens: 0, cost: 0 };
      const rows = [
        usageRecord({ trace_id: 'tool-trace', tenant_id: tT, agent_id: 'agt_t', started_at: h('13:05:00.000'), ...mcp, tool: 'files/read' }),
        usageRecord({ trace_id: 'tool-trace', tenant_id: tT, agent_id: 'agt_t', started_at: h('13:59:59.999'), ...mcp, tool: 'files/read', status: 'error', http_status: 502, error_code: 'upstream_unavailable' }),
        usageRecord({ trace_id: 'tool-trace', tenant_id: tT, agent_id: 'agt_t', started_at: h('14:00:00.000'), ...mcp, tool: 'search/web', status: 'blocked', http_status: 403, error_code: 'tool_not_allowed' }),
        usageRecord({ trace_id: 'tool-trace', tenant_id: tT, agent_id: 'agt_t', started_at: h('14:30:00.000'), cost: 0.25 }),
        usageRecord({ trace_id: 'tool-trace', tenant_id: tT, agent_id: 'agt_t', started_at: h('23:59:59.999'), tool: null, status: 'error', http_status: 500, error_code: 'internal_error' }),
        usageRecord({ trace_id: 'tool-trace-2', tenant_id: tT, agent_id: 'agt_t', started_at: '2029-07-05T00:00:00.000Z' }),
      ];
      // A model step written by an earlier release has no tool at all.
      const { tool: _none, ...older } = usageRecord({ trace_id: 'tool-trace-2', tenant_id: tT, agent_id: 'agt_t', started_at: '2029-07-05T00:10:00.000Z' });
      await store.insertUsage([...rows, older as UsageRecord]);

      const byTool = await store.usage({ group_by: 'tool', tenant_id: tT });
      expect(byTool).toEqual([
        { key: 'files/read', requests: 2, errors: 1, prompt_tokens: 0, completion_tokens: 0, cost: 0 },
        { key: 'search/web', requests: 1, errors: 1, prompt_tokens: 0, completion_tokens: 0, cost: 0 },
      ]);
      expect(await store.usage({ group_by: 'tool', tenant_id: tT, from: h('14:00:00.000') })).toMatchObject([{ key: 'search/web', requests: 1 }]);
      expect(await store.usage({ group_by: 'tool', tenant_id: tT, from: h('14:00:01.000') })).toEqual([]);

      const byHour = await store.usage({ group_by: 'hour', tenant_id: tT });
      expect(byHour.map((r) => [r.key, r.requests, r.errors])).toEqual([
        ['2029-07-04T13:00:00Z', 2, 1],
        ['2029-07-04T14:00:00Z', 2, 1],
        ['2029-07-04T23:00:00Z', 1, 1],
        ['2029-07-05T00:00:00Z', 2, 0],
      ]);
      expect(byHour[1]).toMatchObject({ prompt_tokens: 10, completion_tokens: 5, cost: 0.25 });
      // Each key is an RFC 3339 UTC instant: the start of its hour, which the hour's rows fall in.
      for (const r of byHour) expect(new Date(r.key).toISOString().replace('.000Z', 'Z')).toBe(r.key);
      // The same buckets as by day, finer: a day's hours add up to the day.
      const byDay = await store.usage({ group_by: 'day', tenant_id: tT });
      expect(byDay.map((r) => [r.key, r.requests, r.errors])).toEqual([
        ['2029-07-04', 5, 3],
        ['2029-07-05', 2, 0],
      ]);
      for (const d of byDay) {
        const hours = byHour.filter((r) => r.key.startsWith(`${d.key}T`));
        expect([hours.reduce((a, r) => a + r.requests, 0), hours.reduce((a, r) => a + r.errors, 0)]).toEqual([d.requests, d.errors]);
      }
      // Bounds given with an offset select the same instants; `to` stays exclusive.
      expect((await store.usage({ group_by: 'hour', tenant_id: tT, from: '2029-07-04T15:30:00+02:00', to: h('14:00:00.000') })).map((r) => [r.key, r.requests])).toEqual([
        ['2029-07-04T13:00:00Z', 1],
      ]);

      // errors is the trace summary's error_count, grouped otherwise.
      const traces = (await store.listTraces({ limit: 50, tenant_id: tT })).data;
      const byTenant = await store.usage({ group_by: 'tenant', tenant_id: tT });
      expect(byTenant).toMatchObject([{ key: tT, requests: 7, errors: 3 }]);
      expect(traces.reduce((a, t) => a + t.error_count, 0)).toBe(byTenant[0]!.errors);
      expect((await store.usage({ group_by: 'agent', tenant_id: tT })).map((r) => r.errors)).toEqual([3]);
      expect((await store.usage({ group_by: 'model', tenant_id: tT })).map((r) => [r.key, r.requests, r.errors])).toEqual([
        ['', 3, 2],
        ['openai/gpt-4o-mini', 4, 1],
      ]);
    });

    test('two tenants using the same trace id get separate traces', async () => {
      const T1 = Date.parse('2031-01-01T00:00:00.000Z');
      const at1 = (s: number) => new Date(T1 + s * 1000).toISOString();
      await store.insertUsage([
        usageRecord({ trace_id: 'shared', tenant_id: 'sx', agent_id: 'agt_x', started_at: at1(0), prompt_tokens: 1 }),
        usageRecord({ trace_id: 'shared', tenant_id: 'sy', agent_id: 'agt_y', started_at: at1(5), prompt_tokens: 2 }),
        usageRecord({ trace_id: 'shared', tenant_id: 'sy', agent_id: 'agt_y', started_at: at1(6), prompt_tokens: 3 }),
      ]);
      const listed = await store.listTraces({ limit: 50, since: at1(-1) });
      expect(listed.data.map((t) => [t.tenant_id, t.agent_id, t.request_count, t.prompt_tokens])).toEqual([
        ['sy', 'agt_y', 2, 5],
        ['sx', 'agt_x', 1, 1],
      ]);
      const page1 = await store.listTraces({ limit: 1, since: at1(-1) });
      const page2 = await store.listTraces({ limit: 1, since: at1(-1), cursor: page1.next_cursor! });
      expect([...page1.data, ...page2.data].map((t) => t.tenant_id)).toEqual(['sy', 'sx']);
      expect(page2.next_cursor).toBeNull();
      expect(await store.getTrace('shared', 'sy')).toMatchObject({ tenant_id: 'sy', request_count: 2, prompt_tokens: 5 });
      expect(await store.getTrace('shared', 'sx')).toMatchObject({ tenant_id: 'sx', request_count: 1 });
      const unscoped = await store.getTrace('shared');
      expect(unscoped).toMatchObject({ tenant_id: 'sx', agent_id: 'agt_x', request_count: 1 });
      expect(unscoped!.requests.map((r) => r.step)).toEqual([1]);
    });

    test('a step of the Responses API names its response; other steps name none', async () => {
      // Before T0 and of a tenant of its own: the other tests' windows and totals do not see it.
      const T1 = Date.parse('2029-02-02T00:00:00.000Z');
      await store.insertUsage([
        usageRecord({ trace_id: 'resp-trace', tenant_id: 'ur', agent_id: 'agt_r', started_at: new Date(T1).toISOString(), endpoint: 'responses', response_id: 'resp_step1' }),
        usageRecord({ trace_id: 'resp-trace', tenant_id: 'ur', agent_id: 'agt_r', started_at: new Date(T1 + 1000).toISOString() }),
      ]);
      // A row journaled by an earlier release, replayed after the upgrade, has no response_id at all.
      const { response_id: _none, ...older } = usageRecord({ trace_id: 'resp-trace', tenant_id: 'ur', agent_id: 'agt_r', started_at: new Date(T1 + 2000).toISOString() });
      await store.insertUsage([older as UsageRecord]);
      const t = await store.getTrace('resp-trace');
      expect(t!.requests.map((r) => [r.endpoint, r.response_id])).toEqual([
        ['responses', 'resp_step1'],
        ['chat.completions', null],
        ['chat.completions', null],
      ]);
    });

    test('spend per agent, per tenant and per trace since a time', async () => {
      const byTenant = Object.fromEntries((await store.tenantSpendSince(at(5))).map((r) => [r.tenant_id, r.cost]));
      expect(byTenant[tA]).toBeCloseTo(0.7, 10);
      expect(byTenant[tB]).toBeCloseTo(1.1, 10);
      const spend = await store.spendSince(at(5));
      const byAgent = Object.fromEntries(spend.map((r) => [r.agent_id, r.cost]));
      expect(byAgent.agt_a1).toBeCloseTo(0.3, 10);
      expect(byAgent.agt_a2).toBeCloseTo(0.4, 10);
      expect(byAgent.agt_b1).toBeCloseTo(1.1, 10);
      const traces = Object.fromEntries((await store.traceSpendSince(at(0))).map((r) => [`${r.tenant_id}/${r.trace_id}`, r.cost]));
      expect(traces[`${tA}/${trace1}`]).toBeCloseTo(0.4, 10);
      expect(traces[`${tB}/${trace3}`]).toBeCloseTo(1.1, 10);
    });
  });

  describe('trace stops', () => {
    const T0 = Date.parse('2030-04-01T10:00:00.000Z');
    const at = (s: number) => new Date(T0 + s * 1000).toISOString();
    const stop = (tenant_id: string, trace_id: string, over: { reason?: string | null; stopped_at?: string; stopped_by?: string } = {}) =>
      store.stopTrace({ tenant_id, trace_id, reason: over.reason ?? null, stopped_at: over.stopped_at ?? at(100), stopped_by: over.stopped_by ?? 'root' });

    beforeAll(async () => {
      await store.insertUsage([
        usageRecord({ trace_id: 'stop-shared', tenant_id: 'st-b', agent_id: 'agt_b', started_at: at(0) }),
        usageRecord({ trace_id: 'stop-shared', tenant_id: 'st-a', agent_id: 'agt_a', started_at: at(1) }),
        usageRecord({ trace_id: 'stop-shared', tenant_id: 'st-a', agent_id: 'agt_a', started_at: at(2) }),
        usageRecord({ trace_id: 'stop-own', tenant_id: 'st-a', agent_id: 'agt_a', started_at: at(3) }),
      ]);
    });

    test('traceTenants: the tenants that recorded a trace id, once each', async () => {
      expect(await store.traceTenants('stop-shared')).toEqual(['st-a', 'st-b']);
      expect(await store.traceTenants('stop-own')).toEqual(['st-a']);
      expect(await store.traceTenants('stop-never')).toEqual([]);
    });

    test('stopTrace keeps the first stop; a trace id of another tenant is another trace', async () => {
      const first = await stop('st-a', 'stop-shared', { reason: 'looping on a tool', stopped_at: at(100), stopped_by: 'adk_1' });
      expect(first).toEqual({ tenant_id: 'st-a', trace_id: 'stop-shared', reason: 'looping on a tool', stopped_at: at(100), stopped_by: 'adk_1' });
      expect(await stop('st-a', 'stop-shared', { reason: 'again', stopped_at: at(200), stopped_by: 'adk_2' })).toEqual(first);

      const a = await store.getTrace('stop-shared', 'st-a');
      expect(a?.stopped).toEqual({ at: at(100), reason: 'looping on a tool' });
      expect((await store.getTrace('stop-shared', 'st-b'))?.stopped).toBeNull();
      // Unscoped, the tenant that started first (st-b) answers: its trace was not stopped.
      expect((await store.getTrace('stop-shared'))?.stopped).toBeNull();
      expect((await store.getTrace('stop-own'))?.stopped).toBeNull();
    });

    test('listTraces shows each trace its own stop', async () => {
      await stop('st-a', 'stop-own', { stopped_at: at(150) });
      const listed = (await store.listTraces({ limit: 50, since: at(-1) })).data.filter((t) => t.trace_id.startsWith('stop-'));
      expect(listed.map((t) => [t.tenant_id, t.trace_id, t.stopped])).toEqual([
        ['st-a', 'stop-own', { at: at(150), reason: null }],
        ['st-a', 'stop-shared', { at: at(100), reason: 'looping on a tool' }],
        ['st-b', 'stop-shared', null],
      ]);
      const scoped = await store.listTraces({ limit: 50, tenant_id: 'st-b', since: at(-1) });
      expect(scoped.data.map((t) => [t.trace_id, t.stopped])).toEqual([['stop-shared', null]]);
    });

    test('recentTraceStops: stops since a time, newest first, at most a limit', async () => {
      await stop('st-c', 'stop-old', { stopped_at: at(-86_400) });
      await stop('st-c', 'stop-new', { stopped_at: at(300) });
      const keys = (rows: Array<{ tenant_id: string; trace_id: string }>) => rows.map((r) => `${r.tenant_id}:${r.trace_id}`);
      expect(keys(await store.recentTraceStops(at(0), 10))).toEqual(['st-c:stop-new', 'st-a:stop-own', 'st-a:stop-shared']);
      expect(keys(await store.recentTraceStops(at(0), 2))).toEqual(['st-c:stop-new', 'st-a:stop-own']);
      // A bound with an offset means the same instant.
      expect(keys(await store.recentTraceStops('2030-04-01T12:01:40+02:00', 10))).toEqual(['st-c:stop-new', 'st-a:stop-own', 'st-a:stop-shared']);
      expect(keys(await store.recentTraceStops(at(-90_000), 10))).toContain('st-c:stop-old');
    });
  });

  describe('stored responses', () => {
    const storedResponse = (over: Partial<StoredResponse> = {}): StoredResponse => {
      const id = over.id ?? uid('resp_');
      return {
        id,
        tenant_id: 'rt',
        agent_id: 'agt_r1',
        trace_id: 'trace-r',
        request_id: `req_${id}`,
        model: 'openai/gpt-5',
        provider_type: 'anthropic',
        created_at: new Date().toISOString(),
        input: JSON.stringify([{ type: 'message', role: 'user', content: 'héllo \u{1F600}' }]),
        response: JSON.stringify({ id, object: 'response', output: [{ type: 'reasoning', summary: [] }] }),
        ...over,
      };
    };

    test('put then get round-trips every field; an unknown id is undefined', async () => {
      const r = storedResponse({ input: JSON.stringify([{ type: 'message', role: 'user', content: 'x'.repeat(200_000) }]) });
      await store.putResponse(r);
      expect(await store.getResponse(r.id)).toEqual(r);
      expect(await store.getResponse('resp_nope')).toBeUndefined();
    });

    test('an id is stored once', async () => {
      const r = storedResponse();
      await store.putResponse(r);
      expect(isUniqueViolation(await rejection(store.putResponse({ ...r, model: 'other' })))).toBe(true);
      expect((await store.getResponse(r.id))!.model).toBe('openai/gpt-5');
    });

    test('a response the database refuses is read back as not stored: at once on this store, then from the database by every store', async () => {
      const unstored = (store as unknown as { unstored: { size: number; flush(): Promise<void> } }).unstored;
      const r = storedResponse();
      // A value the database refuses (here a null where it takes none) stands for any failed write.
      const err = await rejection(store.putResponse({ ...r, input: null as unknown as string }));
      expect(isUniqueViolation(err)).toBe(false);
      const mark = { ...r, input: '[]', response: '{}', not_stored: 'the database refused to store it' };
      expect(await store.getResponse(r.id)).toEqual(mark);
      await unstored.flush();
      expect(unstored.size).toBe(0);
      expect(await store.getResponse(r.id)).toEqual(mark);
      // A duplicate id is no failed write: the row there stays readable, and no mark is made.
      const kept = storedResponse();
      await store.putResponse(kept);
      await rejection(store.putResponse(kept));
      expect(unstored.size).toBe(0);
      expect(await store.getResponse(kept.id)).toEqual(kept);
    });

    test('a write that timed out yet committed later is replaced by its mark: reads say what the answer said', async () => {
      const unstored = (store as unknown as { unstored: { add(r: StoredResponse, err: unknown): void; flush(): Promise<void> } }).unstored;
      const r = storedResponse();
      await store.putResponse(r);
      unstored.add(r, Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      await unstored.flush();
      expect(await store.getResponse(r.id)).toMatchObject({ id: r.id, agent_id: r.agent_id, input: '[]', not_stored: expect.stringMatching(/unreachable/) });
    });

    test('delete answers true, then false', async () => {
      const r = storedResponse();
      await store.putResponse(r);
      expect(await store.deleteResponse(r.id)).toBe(true);
      expect(await store.getResponse(r.id)).toBeUndefined();
      expect(await store.deleteResponse(r.id)).toBe(false);
    });

    test('sweep deletes only rows created before the bound, in batches, and counts them', async () => {
      const day = (d: number) => new Date(Date.parse('2001-01-01T00:00:00.000Z') + d * 86_400_000).toISOString();
      const old = [1, 2, 3, 4, 5].map((d) => storedResponse({ created_at: day(d) }));
      const kept = [storedResponse({ created_at: day(10) }), storedResponse({ created_at: day(11) })];
      for (const r of [...kept, ...old]) await store.putResponse(r);
      // Small batches, so the sweep takes several statements (5 rows: 2 + 2 + 1).
      const batched = store as unknown as { responseSweepBatch: number };
      const batch = batched.responseSweepBatch;
      batched.responseSweepBatch = 2;
      try {
        expect(await store.sweepResponses(day(10))).toBe(5);
      } finally {
        batched.responseSweepBatch = batch;
      }
      for (const r of old) expect(await store.getResponse(r.id)).toBeUndefined();
      for (const r of kept) expect(await store.getResponse(r.id)).toEqual(r);
      // The bound written with an offset is the same instant.
      expect(await store.sweepResponses('2001-01-11T01:00:00+01:00')).toBe(0);
      expect(await store.sweepResponses(day(12))).toBe(2);
      expect(await store.sweepResponses(day(12))).toBe(0);
    });
  });
});

describe('PostgreSQL schemas', () => {
  test('stores in two schemas of one database migrate and stay apart', async () => {
    const first = await openTestStore('postgres');
    try {
      await first.store.createTenant({ id: 'only-in-first', name: 'First', labels: {} });
      const second = await openTestStore('postgres');
      try {
        expect(await second.store.getTenant('only-in-first')).toBeUndefined();
        await second.store.createTenant({ id: 'only-in-second', name: 'Second', labels: {} });
        expect(await first.store.getTenant('only-in-second')).toBeUndefined();
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
  });
});
