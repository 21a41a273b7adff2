import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminApi, expectError, type AdminCall, type CallOptions } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { usageRecord } from '../test-support/store.js';

type Req = [method: string, path: string, opts?: CallOptions];

describe.each(['sqlite', 'postgres'] as const)('RBAC on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  const keys = { viewer: '', viewerA: '', adminA: '', adminB: '' };
  const agents = { a: '', b: '' };

  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
    for (const id of ['tenant-a', 'tenant-b']) expect((await api('POST', '/tenants', { body: { id, name: id } })).status).toBe(201);
    expect((await api('PUT', '/policies/pol-a', { body: { tenant_id: 'tenant-a' } })).status).toBe(201);
    expect((await api('PUT', '/policies/pol-b', { body: { tenant_id: 'tenant-b' } })).status).toBe(201);
    expect((await api('PUT', '/policies/pol-global', { body: { tenant_id: null, monthly_budget: 5 } })).status).toBe(201);
    agents.a = (await api('POST', '/agents', { body: { name: 'bot-a', tenant_id: 'tenant-a', policy_id: 'pol-a' } })).body.id;
    agents.b = (await api('POST', '/agents', { body: { name: 'bot-b', tenant_id: 'tenant-b', policy_id: 'pol-b' } })).body.id;
    const key = async (name: string, role: string, tenant_id?: string) => {
      const r = await api('POST', '/admin-keys', { body: { name, role, tenant_id } });
      expect(r.status, r.text).toBe(201);
      return r.body.api_key as string;
    };
    keys.viewer = await key('viewer', 'viewer');
    keys.viewerA = await key('viewer-a', 'viewer', 'tenant-a');
    keys.adminA = await key('admin-a', 'tenant_admin', 'tenant-a');
    keys.adminB = await key('admin-b', 'tenant_admin', 'tenant-b');
    await gw.runtime.store.insertUsage([
      usageRecord({ trace_id: 'trace-a', tenant_id: 'tenant-a', agent_id: agents.a, started_at: '2030-01-01T00:00:00.000Z' }),
      usageRecord({ trace_id: 'trace-b', tenant_id: 'tenant-b', agent_id: agents.b, started_at: '2030-01-01T00:00:01.000Z' }),
      // The same trace id in both tenants: each sees only its own.
      usageRecord({ trace_id: 'trace-shared', tenant_id: 'tenant-a', agent_id: agents.a, started_at: '2030-01-01T00:00:02.000Z', prompt_tokens: 1 }),
      usageRecord({ trace_id: 'trace-shared', tenant_id: 'tenant-b', agent_id: agents.b, started_at: '2030-01-01T00:00:03.000Z', prompt_tokens: 2 }),
    ]);
  });
  afterAll(async () => gw?.close());

  /** Every write of the admin interface, aimed at existing objects. */
  const writes = (): Req[] => [
    ['POST', '/tenants', { body: { id: 'tenant-c', name: 'C' } }],
    ['PATCH', '/tenants/tenant-a', { body: { name: 'renamed' } }],
    ['DELETE', '/tenants/tenant-a'],
    ['POST', '/agents', { body: { name: 'new-bot', tenant_id: 'tenant-a' } }],
    ['PATCH', `/agents/${agents.a}`, { body: { name: 'renamed' } }],
    ['DELETE', `/agents/${agents.a}`],
    ['POST', `/agents/${agents.a}/rotate-key`],
    ['PATCH', `/agents/${agents.a}`, { body: { suspended: true } }],
    ['POST', '/traces/trace-a/stop', { body: { reason: 'viewers may not' } }],
    ['PUT', '/policies/pol-a', { body: { monthly_budget: 1 } }],
    ['PUT', '/policies/pol-new', { body: { tenant_id: 'tenant-a' } }],
    ['DELETE', '/policies/pol-a'],
    ['PUT', '/policies/pol-global', { body: { monthly_budget: 1 } }],
    ['POST', '/admin-keys', { body: { name: 'x', role: 'viewer' } }],
    ['DELETE', '/admin-keys/root'],
    ['PUT', '/system/maintenance', { body: { enabled: true } }],
  ];

  /** A fingerprint of everything the writes above could change. */
  const state = async () => {
    const [tenants, agentList, policies, adminKeys, config, traces] = await Promise.all([
      api('GET', '/tenants?limit=500'),
      api('GET', '/agents?limit=500'),
      api('GET', '/policies?limit=500'),
      api('GET', '/admin-keys?limit=500'),
      api('GET', '/system/config'),
      api('GET', '/traces?limit=500'),
    ]);
    return JSON.stringify([tenants.body, agentList.body, policies.body, adminKeys.body, config.body.maintenance, traces.body]);
  };

  test('a viewer cannot write anything: 403 insufficient_role, and nothing changes', async () => {
    const before = await state();
    for (const key of [keys.viewer, keys.viewerA]) {
      for (const [method, path, opts] of writes()) {
        const r = await api(method, path, { ...opts, key });
        expect(r.status, `${method} ${path}: ${r.text}`).toBe(403);
        expectError(r, 403, 'insufficient_role');
      }
    }
    expect(await state()).toBe(before);
  });

  test('a viewer reads everything; a tenant-scoped viewer reads only its tenant', async () => {
    for (const path of ['/tenants', '/agents', '/policies', '/traces', '/usage', '/system/config', `/agents/${agents.b}`, '/policies/pol-b', '/traces/trace-b']) {
      expect((await api('GET', path, { key: keys.viewer })).status, path).toBe(200);
    }
    const tenants = (await api('GET', '/tenants', { key: keys.viewerA })).body.data.map((t: { id: string }) => t.id);
    expect(tenants).toEqual(['tenant-a']);
    expectError(await api('GET', `/agents/${agents.b}`, { key: keys.viewerA }), 403, 'tenant_forbidden');
    expectError(await api('GET', '/agents?tenant_id=tenant-b', { key: keys.viewerA }), 403, 'tenant_forbidden');
  });

  test("a tenant_admin can neither read nor change anything of another tenant: 403 tenant_forbidden", async () => {
    const before = await state();
    const forbidden: Req[] = [
      ['GET', '/tenants/tenant-b'],
      ['PATCH', '/tenants/tenant-b', { body: { name: 'mine now' } }],
      ['DELETE', '/tenants/tenant-b'],
      ['GET', `/agents/${agents.b}`],
      ['GET', '/agents?tenant_id=tenant-b'],
      ['POST', '/agents', { body: { name: 'intruder', tenant_id: 'tenant-b' } }],
      ['PATCH', `/agents/${agents.b}`, { body: { name: 'hijacked' } }],
      ['DELETE', `/agents/${agents.b}`],
      ['POST', `/agents/${agents.b}/rotate-key`],
      ['PATCH', `/agents/${agents.b}`, { body: { suspended: true } }],
      ['POST', '/traces/trace-b/stop'],
      ['POST', '/traces/trace-shared/stop?tenant_id=tenant-b'],
      ['GET', '/policies/pol-b'],
      ['GET', '/policies?tenant_id=tenant-b'],
      ['PUT', '/policies/pol-b', { body: { monthly_budget: 0 } }],
      ['PUT', '/policies/pol-b', { body: { tenant_id: 'tenant-a' } }],
      ['PUT', '/policies/pol-b-new', { body: { tenant_id: 'tenant-b' } }],
      ['DELETE', '/policies/pol-b'],
      ['GET', '/traces?tenant_id=tenant-b'],
      ['GET', '/traces/trace-b'],
      ['GET', '/usage?tenant_id=tenant-b'],
      // Its own agent may not be moved onto another tenant's policy.
      ['PATCH', `/agents/${agents.a}`, { body: { policy_id: 'pol-b' } }],
    ];
    for (const [method, path, opts] of forbidden) {
      const r = await api(method, path, { ...opts, key: keys.adminA });
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(403);
      expectError(r, 403, 'tenant_forbidden');
      // The refusal says nothing about the object beyond its id.
      expect(r.text).not.toContain('bot-b');
    }
    expect(await state()).toBe(before);
  });

  test("a tenant_admin's lists return only its tenant's objects", async () => {
    const get = async (path: string) => {
      const r = await api('GET', path, { key: keys.adminA });
      expect(r.status, r.text).toBe(200);
      return r.body;
    };
    expect((await get('/tenants')).data.map((t: { id: string }) => t.id)).toEqual(['tenant-a']);
    const agentList = (await get('/agents')).data;
    expect(agentList.length).toBeGreaterThan(0);
    expect(agentList.every((a: { tenant_id: string }) => a.tenant_id === 'tenant-a')).toBe(true);
    expect((await get('/agents?tenant_id=tenant-a')).data).toEqual(agentList);
    const policies = (await get('/policies')).data;
    expect(policies.map((p: { id: string }) => p.id)).toContain('pol-a');
    expect(policies.every((p: { tenant_id: string }) => p.tenant_id === 'tenant-a')).toBe(true);
    const traces = (await get('/traces')).data;
    expect(traces.map((t: { trace_id: string }) => t.trace_id).sort()).toEqual(['trace-a', 'trace-shared']);
    expect(traces.every((t: { tenant_id: string }) => t.tenant_id === 'tenant-a')).toBe(true);
    expect((await get(`/traces?agent_id=${agents.b}`)).data).toEqual([]);
    expect((await get('/usage?group_by=tenant')).data.map((u: { key: string }) => u.key)).toEqual(['tenant-a']);
    expect((await get('/usage?group_by=agent')).data.map((u: { key: string }) => u.key)).toEqual([agents.a]);
    const shared = await get('/traces/trace-shared');
    expect(shared).toMatchObject({ tenant_id: 'tenant-a', request_count: 1, prompt_tokens: 1 });
    const sharedB = await api('GET', '/traces/trace-shared', { key: keys.adminB });
    expect(sharedB.body).toMatchObject({ tenant_id: 'tenant-b', request_count: 1, prompt_tokens: 2 });
  });

  test('a tenant_admin reads global policies and writes agents and policies of its own tenant', async () => {
    const k = { key: keys.adminA };
    expect((await api('GET', '/policies/pol-global', k)).status).toBe(200);
    const agent = await api('POST', '/agents', { ...k, body: { name: 'own-bot', tenant_id: 'tenant-a', policy_id: 'pol-global' } });
    expect(agent.status, agent.text).toBe(201);
    expect((await api('PATCH', `/agents/${agent.body.id}`, { ...k, body: { policy_id: 'pol-a' } })).status).toBe(200);
    expect((await api('POST', `/agents/${agent.body.id}/rotate-key`, k)).status).toBe(200);
    expect((await api('GET', `/agents/${agent.body.id}`, k)).status).toBe(200);
    expect((await api('DELETE', `/agents/${agent.body.id}`, k)).status).toBe(204);
    expect((await api('PUT', '/policies/own-pol', { ...k, body: { tenant_id: 'tenant-a', monthly_budget: 3 } })).status).toBe(201);
    expect((await api('PUT', '/policies/own-pol', { ...k, body: { monthly_budget: 4 } })).status).toBe(200);
    expect((await api('DELETE', '/policies/own-pol', k)).status).toBe(204);
    expect((await api('GET', '/tenants/tenant-a', k)).status).toBe(200);
    expect((await api('GET', '/traces/trace-a', k)).status).toBe(200);
  });

  test('only admin writes global policies, maintenance, tenants and admin keys', async () => {
    for (const key of [keys.adminA, keys.adminB]) {
      const only: Req[] = [
        ['PUT', '/policies/new-global', { body: { tenant_id: null } }],
        ['PUT', '/policies/new-global-2', { body: { monthly_budget: 1 } }],
        ['PUT', '/policies/pol-global', { body: { monthly_budget: 0 } }],
        ['DELETE', '/policies/pol-global'],
        ['PUT', '/system/maintenance', { body: { enabled: true } }],
        ['POST', '/tenants', { body: { id: 'tenant-new', name: 'New' } }],
        ['PATCH', `/tenants/${key === keys.adminA ? 'tenant-a' : 'tenant-b'}`, { body: { name: 'renamed' } }],
        ['DELETE', `/tenants/${key === keys.adminA ? 'tenant-a' : 'tenant-b'}`],
        ['POST', '/admin-keys', { body: { name: 'escalate', role: 'admin' } }],
        ['POST', '/admin-keys', { body: { name: 'peer', role: 'tenant_admin', tenant_id: key === keys.adminA ? 'tenant-a' : 'tenant-b' } }],
        ['GET', '/admin-keys'],
        ['DELETE', '/admin-keys/root'],
      ];
      for (const [method, path, opts] of only) {
        const r = await api(method, path, { ...opts, key });
        expect(r.status, `${method} ${path}: ${r.text}`).toBe(403);
        expectError(r, 403, 'insufficient_role');
      }
    }
    expect((await api('GET', '/policies/pol-global')).body.monthly_budget).toBe(5);
    expect((await api('GET', '/system/config')).body.maintenance.enabled).toBe(false);

    // The admin may do all of it.
    expect((await api('PUT', '/policies/new-global', { body: { tenant_id: null } })).status).toBe(201);
    const ops = await api('POST', '/admin-keys', { body: { name: 'ops', role: 'admin' } });
    expect(ops.status).toBe(201);
    expect((await api('PUT', '/system/maintenance', { body: { enabled: true }, key: ops.body.api_key })).status).toBe(200);
    expect((await api('PUT', '/system/maintenance', { body: { enabled: false }, key: ops.body.api_key })).status).toBe(200);
    expect((await api('POST', '/tenants', { body: { id: 'tenant-new', name: 'New' }, key: ops.body.api_key })).status).toBe(201);
  });

  test('a deleted key is refused at once (401)', async () => {
    const r = await api('POST', '/admin-keys', { body: { name: 'short-lived', role: 'tenant_admin', tenant_id: 'tenant-a' } });
    expect((await api('GET', '/agents', { key: r.body.api_key })).status).toBe(200);
    expect((await api('DELETE', `/admin-keys/${r.body.id}`)).status).toBe(204);
    expectError(await api('GET', '/agents', { key: r.body.api_key }), 401, 'invalid_api_key');
  });

  test('agent keys are not admin keys', async () => {
    const agent = await api('POST', '/agents', { body: { name: 'not-an-admin', tenant_id: 'tenant-a' } });
    expectError(await api('GET', '/tenants', { key: agent.body.api_key }), 401, 'invalid_api_key');
  });
});
