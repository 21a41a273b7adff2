import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { RFC3339, adminApi, expectError, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

const AGENT_KEY = /^agk_[0-9A-Za-z]{32}$/;
const AGENT_ID = /^agt_[0-9A-Za-z]{16}$/;
const AGENT_FIELDS = ['created_at', 'id', 'key_prefix', 'labels', 'name', 'policy_id', 'suspended', 'tenant_id', 'updated_at'];

describe.each(['sqlite', 'postgres'] as const)('agents over HTTP on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  /** The agent the data plane would resolve this key to, or undefined when the key does not work. */
  const agentOfKey = (key: string) => gw.runtime.snapshot.agentByKeyHash(gw.runtime.hasher.hash(key))?.id;

  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
    for (const id of ['acme', 'globex']) expect((await api('POST', '/tenants', { body: { id, name: id } })).status).toBe(201);
    expect((await api('PUT', '/policies/acme-std', { body: { tenant_id: 'acme', monthly_budget: 31 } })).status).toBe(201);
    expect((await api('PUT', '/policies/globex-std', { body: { tenant_id: 'globex' } })).status).toBe(201);
    expect((await api('PUT', '/policies/global-std', { body: { tenant_id: null, daily_budget: 2 } })).status).toBe(201);
  });
  afterAll(async () => gw?.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  test('POST returns the agent and its key once; GET and list never show the key', async () => {
    const r = await api('POST', '/agents', { body: { name: 'support-bot', tenant_id: 'acme', policy_id: 'acme-std', labels: { team: 'cx' } } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual([...AGENT_FIELDS, 'api_key'].sort());
    expect(r.body).toMatchObject({ name: 'support-bot', tenant_id: 'acme', policy_id: 'acme-std', labels: { team: 'cx' }, suspended: false });
    expect(r.body.id).toMatch(AGENT_ID);
    expect(r.body.api_key).toMatch(AGENT_KEY);
    expect(r.body.key_prefix).toBe(r.body.api_key.slice(0, 12));
    expect(r.body.created_at).toMatch(RFC3339);
    expect(agentOfKey(r.body.api_key)).toBe(r.body.id);

    const got = await api('GET', `/agents/${r.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('api_key');
    expect(got.text).not.toContain(r.body.api_key);
    const { api_key: _k, ...agent } = r.body;
    expect(got.body).toMatchObject(agent);

    const list = await api('GET', '/agents?tenant_id=acme');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(r.body.api_key);
    const listed = list.body.data.find((a: { id: string }) => a.id === r.body.id);
    expect(Object.keys(listed).sort()).toEqual(AGENT_FIELDS);
    expect(listed).toEqual(agent);
  });

  test('defaults: no policy, no labels', async () => {
    const r = await api('POST', '/agents', { body: { name: 'bare', tenant_id: 'acme' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ policy_id: null, labels: {} });
  });

  test('GET /agents/{id} carries spend and the limits of its policy', async () => {
    const r = await api('POST', '/agents', { body: { name: 'spender', tenant_id: 'acme', policy_id: 'acme-std' } });
    const got = await api('GET', `/agents/${r.body.id}`);
    const now = new Date();
    const daysInMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
    expect(got.body.spend).toEqual({
      day: 0,
      month: 0,
      daily_limit: expect.closeTo(31 / daysInMonth, 9),
      monthly_limit: 31,
      day_resets_at: expect.stringMatching(RFC3339),
      month_resets_at: expect.stringMatching(RFC3339),
    });
    expect(Date.parse(got.body.spend.day_resets_at)).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
    expect(Date.parse(got.body.spend.month_resets_at)).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));

    const global = await api('POST', '/agents', { body: { name: 'daily', tenant_id: 'acme', policy_id: 'global-std' } });
    expect((await api('GET', `/agents/${global.body.id}`)).body.spend).toMatchObject({ daily_limit: 2, monthly_limit: null });
    const none = await api('POST', '/agents', { body: { name: 'unlimited', tenant_id: 'acme' } });
    expect((await api('GET', `/agents/${none.body.id}`)).body.spend).toMatchObject({ daily_limit: null, monthly_limit: null });
  });

  test('POST: unknown tenant 404, unknown policy 404, taken name 409, same name in another tenant 201', async () => {
    expectError(await api('POST', '/agents', { body: { name: 'x', tenant_id: 'nope' } }), 404, 'tenant_not_found', 'tenant_id');
    expectError(await api('POST', '/agents', { body: { name: 'x', tenant_id: 'acme', policy_id: 'nope' } }), 404, 'policy_not_found', 'policy_id');
    expect((await api('POST', '/agents', { body: { name: 'dup', tenant_id: 'acme' } })).status).toBe(201);
    expectError(await api('POST', '/agents', { body: { name: 'dup', tenant_id: 'acme' } }), 409, 'agent_exists');
    expect((await api('POST', '/agents', { body: { name: 'dup', tenant_id: 'globex' } })).status).toBe(201);
    const dups = (await api('GET', '/agents?tenant_id=acme&limit=500')).body.data.filter((a: { name: string }) => a.name === 'dup');
    expect(dups).toHaveLength(1);
  });

  test("an agent may use a global policy or its own tenant's, not another tenant's", async () => {
    expect((await api('POST', '/agents', { body: { name: 'g', tenant_id: 'acme', policy_id: 'global-std' } })).status).toBe(201);
    expectError(await api('POST', '/agents', { body: { name: 'cross', tenant_id: 'acme', policy_id: 'globex-std' } }), 403, 'tenant_forbidden');
    expect((await api('GET', '/agents?tenant_id=acme&limit=500')).body.data.some((a: { name: string }) => a.name === 'cross')).toBe(false);
  });

  test('PATCH renames, changes and clears the policy, relabels; conflicts and unknown policy are refused', async () => {
    const a = (await api('POST', '/agents', { body: { name: 'patchme', tenant_id: 'acme', labels: { a: '1' } } })).body;
    let r = await api('PATCH', `/agents/${a.id}`, { body: { name: 'patched', policy_id: 'acme-std' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: a.id, name: 'patched', policy_id: 'acme-std', labels: { a: '1' }, key_prefix: a.key_prefix });
    expect(r.body).not.toHaveProperty('api_key');
    expect(gw.runtime.snapshot.agentByKeyHash(gw.runtime.hasher.hash(a.api_key))?.policy_id).toBe('acme-std');

    r = await api('PATCH', `/agents/${a.id}`, { body: { policy_id: null, labels: { b: '2' } } });
    expect(r.body).toMatchObject({ name: 'patched', policy_id: null, labels: { b: '2' } });

    await api('POST', '/agents', { body: { name: 'taken', tenant_id: 'acme' } });
    expectError(await api('PATCH', `/agents/${a.id}`, { body: { name: 'taken' } }), 409, 'agent_exists');
    expectError(await api('PATCH', `/agents/${a.id}`, { body: { policy_id: 'nope' } }), 404, 'policy_not_found', 'policy_id');
    expect((await api('GET', `/agents/${a.id}`)).body).toMatchObject({ name: 'patched', policy_id: null });
  });

  test('PATCH suspended: true suspends, false resumes, alone or with other fields; in the snapshot when the call returns', async () => {
    const a = (await api('POST', '/agents', { body: { name: 'suspendme', tenant_id: 'acme' } })).body;
    const inSnapshot = () => gw.runtime.snapshot.agentByKeyHash(gw.runtime.hasher.hash(a.api_key))?.suspended;
    expect(inSnapshot()).toBe(false);

    let r = await api('PATCH', `/agents/${a.id}`, { body: { suspended: true } });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(AGENT_FIELDS);
    expect(r.body).toMatchObject({ id: a.id, name: 'suspendme', suspended: true, key_prefix: a.key_prefix });
    expect(inSnapshot()).toBe(true);
    expect((await api('GET', `/agents/${a.id}`)).body.suspended).toBe(true);
    expect((await api('GET', '/agents?tenant_id=acme&limit=500')).body.data.find((x: { id: string }) => x.id === a.id).suspended).toBe(true);
    // Patching something else leaves it suspended; suspending again changes nothing.
    r = await api('PATCH', `/agents/${a.id}`, { body: { labels: { why: 'runaway' } } });
    expect(r.body).toMatchObject({ suspended: true, labels: { why: 'runaway' } });
    expect((await api('PATCH', `/agents/${a.id}`, { body: { suspended: true } })).body.suspended).toBe(true);

    r = await api('PATCH', `/agents/${a.id}`, { body: { suspended: false, name: 'resumed', policy_id: 'acme-std' } });
    expect(r.body).toMatchObject({ name: 'resumed', policy_id: 'acme-std', suspended: false });
    expect(inSnapshot()).toBe(false);

    for (const bad of ['yes', 1, null]) expectError(await api('PATCH', `/agents/${a.id}`, { body: { suspended: bad } }), 400, 'validation_failed', 'suspended');
    expect((await api('GET', `/agents/${a.id}`)).body.suspended).toBe(false);
    expectError(await api('PATCH', '/agents/agt_0000000000000000', { body: { suspended: true } }), 404, 'agent_not_found');
  });

  test('POST may create an agent suspended; its key works once resumed', async () => {
    const r = await api('POST', '/agents', { body: { name: 'born-suspended', tenant_id: 'acme', suspended: true } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.suspended).toBe(true);
    expect(gw.runtime.snapshot.agentByKeyHash(gw.runtime.hasher.hash(r.body.api_key))?.suspended).toBe(true);
    expectError(await api('POST', '/agents', { body: { name: 'bad-flag', tenant_id: 'acme', suspended: 'no' } }), 400, 'validation_failed', 'suspended');
  });

  test('rotate-key: a new key and prefix; the old key stops matching at once', async () => {
    const a = (await api('POST', '/agents', { body: { name: 'rotator', tenant_id: 'acme', policy_id: 'acme-std' } })).body;
    expect(agentOfKey(a.api_key)).toBe(a.id);
    const r = await api('POST', `/agents/${a.id}/rotate-key`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['api_key', 'id', 'key_prefix']);
    expect(r.body.id).toBe(a.id);
    expect(r.body.api_key).toMatch(AGENT_KEY);
    expect(r.body.api_key).not.toBe(a.api_key);
    expect(r.body.key_prefix).toBe(r.body.api_key.slice(0, 12));
    expect(r.body.key_prefix).not.toBe(a.key_prefix);

    expect(agentOfKey(a.api_key)).toBeUndefined();
    expect(agentOfKey(r.body.api_key)).toBe(a.id);
    const got = (await api('GET', `/agents/${a.id}`)).body;
    expect(got).toMatchObject({ key_prefix: r.body.key_prefix, name: 'rotator', policy_id: 'acme-std', created_at: a.created_at });
    expect(got.spend).toMatchObject({ monthly_limit: 31 });
  });

  test('DELETE: 204, then 404; its key stops matching at once', async () => {
    const a = (await api('POST', '/agents', { body: { name: 'doomed', tenant_id: 'acme' } })).body;
    const r = await api('DELETE', `/agents/${a.id}`);
    expect(r.status).toBe(204);
    expect(agentOfKey(a.api_key)).toBeUndefined();
    expectError(await api('GET', `/agents/${a.id}`), 404, 'agent_not_found');
    expectError(await api('DELETE', `/agents/${a.id}`), 404, 'agent_not_found');
    expectError(await api('PATCH', `/agents/${a.id}`, { body: { name: 'x' } }), 404, 'agent_not_found');
    expectError(await api('POST', `/agents/${a.id}/rotate-key`), 404, 'agent_not_found');
    // The name is free again.
    expect((await api('POST', '/agents', { body: { name: 'doomed', tenant_id: 'acme' } })).status).toBe(201);
  });

  test('GET /agents pages through 3 pages (limit=3, 7 agents) and filters by tenant', async () => {
    await api('POST', '/tenants', { body: { id: 'paged', name: 'Paged' } });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await api('POST', '/agents', { body: { name: `p${i}`, tenant_id: 'paged' } })).body.id);
    const p1 = await api('GET', '/agents?tenant_id=paged&limit=3');
    const p2 = await api('GET', `/agents?tenant_id=paged&limit=3&cursor=${p1.body.next_cursor}`);
    const p3 = await api('GET', `/agents?tenant_id=paged&limit=3&cursor=${p2.body.next_cursor}`);
    expect([p1, p2, p3].map((p) => p.status)).toEqual([200, 200, 200]);
    expect([p1, p2, p3].map((p) => p.body.data.length)).toEqual([3, 3, 1]);
    expect(p3.body.next_cursor).toBeNull();
    const seen = [p1, p2, p3].flatMap((p) => p.body.data.map((a: { id: string }) => a.id));
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen.every((id) => ids.includes(id))).toBe(true);
    expect((await api('GET', '/agents?tenant_id=nobody')).body).toEqual({ data: [], next_cursor: null });
  });

  describe('Idempotency-Key', () => {
    test('a retried POST returns the same agent and key, and no second agent', async () => {
      const body = { name: 'idem-bot', tenant_id: 'acme', policy_id: 'acme-std' };
      const headers = { 'idempotency-key': 'create-idem-bot-1' };
      const first = await api('POST', '/agents', { body, headers });
      expect(first.status).toBe(201);
      const second = await api('POST', '/agents', { body, headers });
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      expect(second.body.api_key).toBe(first.body.api_key);
      const third = await api('POST', '/agents', { body: { policy_id: 'acme-std', tenant_id: 'acme', name: 'idem-bot' }, headers });
      expect(third.body).toEqual(first.body);
      const named = (await api('GET', '/agents?tenant_id=acme&limit=500')).body.data.filter((a: { name: string }) => a.name === 'idem-bot');
      expect(named).toHaveLength(1);
      expect(agentOfKey(first.body.api_key)).toBe(first.body.id);
    });

    test('the same key with another body is 400 invalid_header', async () => {
      const headers = { 'idempotency-key': 'create-idem-bot-2' };
      expect((await api('POST', '/agents', { body: { name: 'idem-2', tenant_id: 'acme' }, headers })).status).toBe(201);
      expectError(await api('POST', '/agents', { body: { name: 'idem-2b', tenant_id: 'acme' }, headers }), 400, 'invalid_header', 'idempotency-key');
      const names = (await api('GET', '/agents?tenant_id=acme&limit=500')).body.data.map((a: { name: string }) => a.name);
      expect(names).not.toContain('idem-2b');
    });

    test('without the header, or with a new key, a repeat is a conflict, not a replay', async () => {
      expect((await api('POST', '/agents', { body: { name: 'idem-3', tenant_id: 'acme' }, headers: { 'idempotency-key': 'k3' } })).status).toBe(201);
      expectError(await api('POST', '/agents', { body: { name: 'idem-3', tenant_id: 'acme' } }), 409, 'agent_exists');
      expectError(await api('POST', '/agents', { body: { name: 'idem-3', tenant_id: 'acme' }, headers: { 'idempotency-key': 'k3-other' } }), 409, 'agent_exists');
    });

    test('keys belong to the admin key that used them', async () => {
      const other = (await api('POST', '/admin-keys', { body: { name: 'second-admin', role: 'admin' } })).body.api_key;
      const body = { name: 'idem-4', tenant_id: 'acme' };
      const headers = { 'idempotency-key': 'shared-key' };
      expect((await api('POST', '/agents', { body, headers })).status).toBe(201);
      expectError(await api('POST', '/agents', { body, headers, key: other }), 409, 'agent_exists');
    });

    test('concurrent retries with one key create one agent and all get its key', async () => {
      const body = { name: 'idem-race', tenant_id: 'acme' };
      const headers = { 'idempotency-key': 'race-1' };
      const results = await Promise.all(Array.from({ length: 5 }, () => api('POST', '/agents', { body, headers })));
      for (const r of results) expect(r.status, r.text).toBe(201);
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      expect(new Set(results.map((r) => r.body.api_key)).size).toBe(1);
      const named = (await api('GET', '/agents?tenant_id=acme&limit=500')).body.data.filter((a: { name: string }) => a.name === 'idem-race');
      expect(named).toHaveLength(1);
      expect(agentOfKey(results[0]!.body.api_key)).toBe(results[0]!.body.id);
    });

    test('a key is replayed for 24 hours, then forgotten', async () => {
      const headers = { 'idempotency-key': 'day-key' };
      const first = await api('POST', '/agents', { body: { name: 'idem-day', tenant_id: 'acme' }, headers });
      expect(first.status).toBe(201);
      const start = Date.now();
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(start + 23 * 3600_000);
      expect((await api('POST', '/agents', { body: { name: 'idem-day', tenant_id: 'acme' }, headers })).body.id).toBe(first.body.id);
      vi.setSystemTime(start + 25 * 3600_000);
      // Another body under the same key is no longer a mismatch: the key is free again.
      const later = await api('POST', '/agents', { body: { name: 'idem-day-2', tenant_id: 'acme' }, headers });
      expect(later.status).toBe(201);
      expect(later.body.id).not.toBe(first.body.id);
    });
  });
});
