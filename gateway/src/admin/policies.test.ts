import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEFAULT_RULES } from '../contract/index.js';
import { RFC3339, adminApi, expectError, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

const POLICY_FIELDS = ['allowed_models', 'allowed_tools', 'created_at', 'daily_budget', 'id', 'labels', 'monthly_budget', 'rules', 'tenant_id', 'tool_rules', 'updated_at'];

describe.each(['sqlite', 'postgres'] as const)('policies over HTTP on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
    for (const id of ['acme', 'globex']) expect((await api('POST', '/tenants', { body: { id, name: id } })).status).toBe(201);
  });
  afterAll(async () => gw?.close());

  test('PUT creates (201) with defaults filled in, then updates (200); PUT is idempotent', async () => {
    const body = {
      tenant_id: 'acme',
      monthly_budget: 250,
      allowed_models: ['openai/gpt-4o-mini', 'anthropic/claude-*'],
      rules: { pii: 'block', retry_block: { max_repeats: 3, window_seconds: 300 }, max_cost_per_request: 0.5 },
      labels: { managed_by: 'agentgw' },
    };
    const created = await api('PUT', '/policies/support-standard', { body });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(POLICY_FIELDS);
    expect(created.body).toEqual({
      id: 'support-standard',
      tenant_id: 'acme',
      monthly_budget: 250,
      daily_budget: null,
      allowed_models: ['openai/gpt-4o-mini', 'anthropic/claude-*'],
      allowed_tools: null,
      rules: { ...DEFAULT_RULES, pii: 'block', retry_block: { max_repeats: 3, window_seconds: 300 }, max_cost_per_request: 0.5 },
      tool_rules: null,
      labels: { managed_by: 'agentgw' },
      created_at: expect.stringMatching(RFC3339),
      updated_at: expect.stringMatching(RFC3339),
    });

    const again = await api('PUT', '/policies/support-standard', { body });
    expect(again.status).toBe(200);
    const { updated_at: _a, ...first } = created.body;
    const { updated_at: _b, ...second } = again.body;
    expect(second).toEqual(first);

    expect((await api('GET', '/policies/support-standard')).body).toEqual(again.body);
  });

  test('an update keeps the fields left out, and null clears an optional field', async () => {
    await api('PUT', '/policies/partial', {
      body: { tenant_id: 'acme', monthly_budget: 100, daily_budget: 5, allowed_models: ['openai/*'], rules: { pii: 'redact', pii_types: ['email'], rpm: 60, tpm: 1000 }, labels: { a: 'b' } },
    });
    const r = await api('PUT', '/policies/partial', { body: { daily_budget: 7, rules: { rpm: 120 } } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      tenant_id: 'acme',
      monthly_budget: 100,
      daily_budget: 7,
      allowed_models: ['openai/*'],
      rules: { pii: 'redact', pii_types: ['email'], rpm: 120, tpm: 1000, retry_block: null },
      labels: { a: 'b' },
    });

    const cleared = await api('PUT', '/policies/partial', { body: { monthly_budget: null, allowed_models: null, rules: { rpm: null } } });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ monthly_budget: null, daily_budget: 7, allowed_models: null, rules: { rpm: null, tpm: 1000, pii: 'redact' } });

    const empty = await api('PUT', '/policies/partial', { body: {} });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ daily_budget: 7, rules: { tpm: 1000 } });

    const none = await api('PUT', '/policies/partial', { body: { allowed_models: [] } });
    expect(none.body.allowed_models).toEqual([]);
  });

  test('tenant_id is immutable after create', async () => {
    await api('PUT', '/policies/owned', { body: { tenant_id: 'acme' } });
    expectError(await api('PUT', '/policies/owned', { body: { tenant_id: 'globex' } }), 400, 'validation_failed', 'tenant_id');
    expectError(await api('PUT', '/policies/owned', { body: { tenant_id: null } }), 400, 'validation_failed', 'tenant_id');
    expect((await api('PUT', '/policies/owned', { body: { tenant_id: 'acme', monthly_budget: 1 } })).status).toBe(200);
    expect((await api('GET', '/policies/owned')).body.tenant_id).toBe('acme');

    await api('PUT', '/policies/global-one', { body: { tenant_id: null } });
    expectError(await api('PUT', '/policies/global-one', { body: { tenant_id: 'acme' } }), 400, 'validation_failed', 'tenant_id');
  });

  test('a policy with no tenant_id is global', async () => {
    const r = await api('PUT', '/policies/global-default', { body: { monthly_budget: 10 } });
    expect(r.status).toBe(201);
    expect(r.body.tenant_id).toBeNull();
  });

  test('PUT for an unknown tenant is 404 tenant_not_found', async () => {
    expectError(await api('PUT', '/policies/orphan', { body: { tenant_id: 'nope' } }), 404, 'tenant_not_found', 'tenant_id');
    expectError(await api('GET', '/policies/orphan'), 404, 'policy_not_found');
  });

  test('GET/DELETE of an unknown policy are 404 policy_not_found', async () => {
    expectError(await api('GET', '/policies/ghost'), 404, 'policy_not_found');
    expectError(await api('DELETE', '/policies/ghost'), 404, 'policy_not_found');
  });

  test('DELETE is 409 policy_in_use while an agent uses it, 204 after', async () => {
    await api('PUT', '/policies/used', { body: { tenant_id: 'acme' } });
    const agent = (await api('POST', '/agents', { body: { name: 'user', tenant_id: 'acme', policy_id: 'used' } })).body;
    expectError(await api('DELETE', '/policies/used'), 409, 'policy_in_use');
    expect((await api('GET', '/policies/used')).status).toBe(200);
    expect((await api('PATCH', `/agents/${agent.id}`, { body: { policy_id: null } })).status).toBe(200);
    expect((await api('DELETE', '/policies/used')).status).toBe(204);
    expectError(await api('GET', '/policies/used'), 404, 'policy_not_found');
    expect(gw.runtime.snapshot.policy('used')).toBeUndefined();
  });

  test('GET /policies filters by tenant and pages with limit and cursor', async () => {
    await api('POST', '/tenants', { body: { id: 'pols', name: 'Pols' } });
    const ids = Array.from({ length: 7 }, (_, i) => `pols-${i}`);
    for (const id of ids) expect((await api('PUT', `/policies/${id}`, { body: { tenant_id: 'pols' } })).status).toBe(201);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: { status: number; body: { data: Array<{ id: string; tenant_id: string }>; next_cursor: string | null } } = await api(
        'GET',
        `/policies?tenant_id=pols&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(r.status).toBe(200);
      expect(r.body.data.every((p) => p.tenant_id === 'pols')).toBe(true);
      seen.push(...r.body.data.map((p) => p.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect([...seen].sort()).toEqual(ids);

    const all = (await api('GET', '/policies?limit=500')).body.data.map((p: { id: string }) => p.id);
    expect(all).toEqual(expect.arrayContaining([...ids, 'global-default', 'support-standard']));
  });
});
