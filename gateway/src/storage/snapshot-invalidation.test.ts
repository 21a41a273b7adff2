import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminApi, eventually, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

describe.each(['sqlite', 'postgres'] as const)('snapshot invalidation on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
    expect((await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } })).status).toBe(201);
  });
  afterAll(async () => gw?.close());

  test('a policy change via PUT is in runtime.snapshot as soon as the response arrives', async () => {
    for (let i = 1; i <= 15; i++) {
      const r = await api('PUT', '/policies/live', { body: { tenant_id: 'acme', monthly_budget: i, rules: { rpm: i * 10 } } });
      expect(r.status).toBe(i === 1 ? 201 : 200);
      const seen = gw.runtime.snapshot.policy('live');
      expect(seen).toMatchObject({ monthly_budget: i, rules: { rpm: i * 10 } });
      expect(seen).toEqual(r.body);
    }
    expect((await api('DELETE', '/policies/live')).status).toBe(204);
    expect(gw.runtime.snapshot.policy('live')).toBeUndefined();
  });

  test('agent writes are in the snapshot as soon as the response arrives', async () => {
    await api('PUT', '/policies/strict', { body: { tenant_id: 'acme', allowed_models: [] } });
    const created = (await api('POST', '/agents', { body: { name: 'bot', tenant_id: 'acme' } })).body;
    const byKey = (k: string) => gw.runtime.snapshot.agentByKeyHash(gw.runtime.hasher.hash(k));
    expect(byKey(created.api_key)).toMatchObject({ id: created.id, policy_id: null });
    await api('PATCH', `/agents/${created.id}`, { body: { policy_id: 'strict' } });
    expect(byKey(created.api_key)?.policy_id).toBe('strict');
    const rotated = (await api('POST', `/agents/${created.id}/rotate-key`)).body;
    expect(byKey(created.api_key)).toBeUndefined();
    expect(byKey(rotated.api_key)?.id).toBe(created.id);
    await api('DELETE', `/agents/${created.id}`);
    expect(byKey(rotated.api_key)).toBeUndefined();
  });
});

describe.each(['sqlite', 'postgres'] as const)('two runtimes on one %s database', (storage) => {
  let one: TestGateway;
  let two: TestGateway;
  let api1: AdminCall;
  let api2: AdminCall;
  beforeAll(async () => {
    one = await startTestGateway({ storage });
    two = await startTestGateway({
      storage,
      adminKey: one.adminKey,
      pgSchema: one.storage.kind === 'postgres' ? one.storage.schema : undefined,
      sqlitePath: one.storage.kind === 'sqlite' ? one.storage.path : undefined,
    });
    api1 = adminApi(one.adminUrl, one.adminKey);
    api2 = adminApi(two.adminUrl, two.adminKey);
    expect((await api1('POST', '/tenants', { body: { id: 'shared', name: 'Shared' } })).status).toBe(201);
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
  });

  /** Waits (bounded) for the other node to see a change; the bound is generous, CONTRACT asks for 1 s. */
  const within = <T>(what: string, check: () => T | undefined | false) => eventually(check, 5000, what);

  test('a policy written on one node reaches the other, both ways', async () => {
    expect((await api1('PUT', '/policies/p', { body: { tenant_id: 'shared', monthly_budget: 10 } })).status).toBe(201);
    await within('node two to see the new policy', () => two.runtime.snapshot.policy('p')?.monthly_budget === 10);
    expect((await api2('PUT', '/policies/p', { body: { monthly_budget: 20 } })).status).toBe(200);
    expect(two.runtime.snapshot.policy('p')?.monthly_budget).toBe(20);
    await within('node one to see the update', () => one.runtime.snapshot.policy('p')?.monthly_budget === 20);
    expect((await api1('DELETE', '/policies/p')).status).toBe(204);
    await within('node two to see the deletion', () => two.runtime.snapshot.policy('p') === undefined);
  });

  test('an agent created, rotated and deleted on one node is seen on the other', async () => {
    const agent = (await api2('POST', '/agents', { body: { name: 'roamer', tenant_id: 'shared' } })).body;
    const onOne = (k: string) => one.runtime.snapshot.agentByKeyHash(one.runtime.hasher.hash(k));
    await within('node one to know the new key', () => onOne(agent.api_key)?.id === agent.id);
    const rotated = (await api2('POST', `/agents/${agent.id}/rotate-key`)).body;
    await within('node one to drop the old key', () => onOne(agent.api_key) === undefined && onOne(rotated.api_key)?.id === agent.id);
    await api1('DELETE', `/agents/${agent.id}`);
    expect(onOne(rotated.api_key)).toBeUndefined();
    await within('node two to drop the deleted agent', () => two.runtime.snapshot.agentByKeyHash(two.runtime.hasher.hash(rotated.api_key)) === undefined);
  });

  test('a rotated or deleted key stops working on the other node before the admin call returns', async () => {
    const agent = (await api1('POST', '/agents', { body: { name: 'revoked', tenant_id: 'shared' } })).body;
    const chatOnTwo = async (key: string) =>
      (
        await fetch(`${two.baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } })
      ).status;
    expect(await chatOnTwo(agent.api_key)).toBe(200);
    const rotated = (await api1('POST', `/agents/${agent.id}/rotate-key`)).body;
    // No waiting: the old key is refused by node two the moment node one answered.
    expect(await chatOnTwo(agent.api_key)).toBe(401);
    expect(await chatOnTwo(rotated.api_key)).toBe(200);
    expect((await api1('DELETE', `/agents/${agent.id}`)).status).toBe(204);
    expect(await chatOnTwo(rotated.api_key)).toBe(401);
  });

  test('a node that stopped is not waited for', async () => {
    const three = await startTestGateway({
      storage,
      adminKey: one.adminKey,
      pgSchema: one.storage.kind === 'postgres' ? one.storage.schema : undefined,
      sqlitePath: one.storage.kind === 'sqlite' ? one.storage.path : undefined,
    });
    await three.close();
    // With three gone, a write is applied by the nodes that are left and answered: the test's timeout bounds the wait.
    expect((await api1('PUT', '/policies/after-three', { body: { tenant_id: 'shared' } })).status).toBe(201);
    expect(two.runtime.snapshot.policy('after-three')).toBeDefined();
  });

  test('maintenance switched on one node is reported by the other', async () => {
    expect((await api1('PUT', '/system/maintenance', { body: { enabled: true, message: 'Moving racks.' } })).status).toBe(200);
    await within('node two to enter maintenance', () => two.runtime.snapshot.maintenance.enabled);
    expect((await api2('GET', '/system/config')).body.maintenance).toMatchObject({ enabled: true, message: 'Moving racks.' });
    expect((await api2('PUT', '/system/maintenance', { body: { enabled: false } })).status).toBe(200);
    await within('node one to leave maintenance', () => !one.runtime.snapshot.maintenance.enabled);
  });
});
