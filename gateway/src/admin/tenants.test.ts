import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RFC3339, adminApi, expectError, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

describe.each(['sqlite', 'postgres'] as const)('tenants over HTTP on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
  });
  afterAll(async () => gw?.close());

  test('POST creates (201), GET reads, PATCH changes, DELETE removes (204)', async () => {
    const created = await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme Inc.', labels: { tier: 'gold' } } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: 'acme',
      name: 'Acme Inc.',
      labels: { tier: 'gold' },
      monthly_budget: null,
      daily_budget: null,
      created_at: expect.stringMatching(RFC3339),
      updated_at: expect.stringMatching(RFC3339),
    });

    const got = await api('GET', '/tenants/acme');
    expect(got.status).toBe(200);
    // GET of one tenant adds what its agents spent together, as GET of an agent does (see tenant-budgets.test.ts).
    expect(got.body).toEqual({ ...created.body, spend: expect.objectContaining({ day: 0, month: 0 }) });

    const patched = await api('PATCH', '/tenants/acme', { body: { name: 'Acme Corp.' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: 'acme', name: 'Acme Corp.', labels: { tier: 'gold' }, created_at: created.body.created_at });
    const relabelled = await api('PATCH', '/tenants/acme', { body: { labels: { tier: 'silver' } } });
    expect(relabelled.body).toMatchObject({ name: 'Acme Corp.', labels: { tier: 'silver' } });

    const deleted = await api('DELETE', '/tenants/acme');
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectError(await api('GET', '/tenants/acme'), 404, 'tenant_not_found', null);
  });

  test('labels default to {}', async () => {
    const r = await api('POST', '/tenants', { body: { id: 'plain', name: 'Plain' } });
    expect(r.status).toBe(201);
    expect(r.body.labels).toEqual({});
  });

  test('a second tenant with the same id is 409 tenant_exists', async () => {
    await api('POST', '/tenants', { body: { id: 'twice', name: 'One' } });
    expectError(await api('POST', '/tenants', { body: { id: 'twice', name: 'Two' } }), 409, 'tenant_exists');
    expect((await api('GET', '/tenants/twice')).body.name).toBe('One');
  });

  test('unknown ids are 404 tenant_not_found on GET, PATCH and DELETE', async () => {
    expectError(await api('GET', '/tenants/ghost'), 404, 'tenant_not_found');
    expectError(await api('PATCH', '/tenants/ghost', { body: { name: 'x' } }), 404, 'tenant_not_found');
    expectError(await api('DELETE', '/tenants/ghost'), 404, 'tenant_not_found');
  });

  test('DELETE is 409 tenant_not_empty while agents or policies remain', async () => {
    await api('POST', '/tenants', { body: { id: 'busy', name: 'Busy' } });
    expect((await api('PUT', '/policies/busy-pol', { body: { tenant_id: 'busy' } })).status).toBe(201);
    expectError(await api('DELETE', '/tenants/busy'), 409, 'tenant_not_empty');
    expect((await api('DELETE', '/policies/busy-pol')).status).toBe(204);

    const agent = await api('POST', '/agents', { body: { tenant_id: 'busy', name: 'worker' } });
    expect(agent.status).toBe(201);
    expectError(await api('DELETE', '/tenants/busy'), 409, 'tenant_not_empty');
    expect((await api('GET', '/tenants/busy')).status).toBe(200);

    expect((await api('DELETE', `/agents/${agent.body.id}`)).status).toBe(204);
    expect((await api('DELETE', '/tenants/busy')).status).toBe(204);
  });

  test('deleting a tenant deletes its tenant-scoped admin keys', async () => {
    await api('POST', '/tenants', { body: { id: 'keyed', name: 'Keyed' } });
    const key = await api('POST', '/admin-keys', { body: { name: 'keyed-viewer', role: 'viewer', tenant_id: 'keyed' } });
    expect(key.status).toBe(201);
    expect((await api('GET', '/tenants/keyed', { key: key.body.api_key })).status).toBe(200);
    expect((await api('DELETE', '/tenants/keyed')).status).toBe(204);
    expectError(await api('GET', '/system/config', { key: key.body.api_key }), 401, 'invalid_api_key');
  });

  test('GET /tenants pages through 3 pages with limit and cursor', async () => {
    const before = (await api('GET', '/tenants?limit=500')).body.data.length;
    for (let i = 0; i < 7; i++) expect((await api('POST', '/tenants', { body: { id: `page-${i}`, name: `Page ${i}` } })).status).toBe(201);
    const total = before + 7;
    const pageSize = Math.ceil(total / 3);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const qs: string = cursor ? `?limit=${pageSize}&cursor=${encodeURIComponent(cursor)}` : `?limit=${pageSize}`;
      const r = await api('GET', `/tenants${qs}`);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['data', 'next_cursor']);
      expect(r.body.data.length).toBeLessThanOrEqual(pageSize);
      seen.push(...r.body.data.map((t: { id: string }) => t.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    for (let i = 0; i < 7; i++) expect(seen).toContain(`page-${i}`);
    const all = (await api('GET', '/tenants?limit=500')).body;
    expect(all.data.map((t: { id: string }) => t.id)).toEqual(seen);
    expect(all.next_cursor).toBeNull();
  });

  test('the default page size is 50', async () => {
    for (let i = 0; i < 50; i++) await api('POST', '/tenants', { body: { id: `bulk-${i}`, name: `Bulk ${i}` } });
    const r = await api('GET', '/tenants');
    expect(r.body.data).toHaveLength(50);
    expect(r.body.next_cursor).toEqual(expect.any(String));
  });

  test('an invalid cursor is 400 validation_failed naming cursor', async () => {
    expectError(await api('GET', '/tenants?cursor=not-a-cursor'), 400, 'validation_failed', 'cursor');
  });

  describe('budgets (CONTRACT "Tenant budgets")', () => {
    test('POST and PATCH take monthly_budget and daily_budget; a field left out keeps its value, null clears it', async () => {
      const created = await api('POST', '/tenants', { body: { id: 'budgeted', name: 'Budgeted', monthly_budget: 250, daily_budget: 20.5 } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ monthly_budget: 250, daily_budget: 20.5 });
      expect((await api('PATCH', '/tenants/budgeted', { body: { daily_budget: 0 } })).body).toMatchObject({ monthly_budget: 250, daily_budget: 0 });
      expect((await api('PATCH', '/tenants/budgeted', { body: { name: 'Renamed' } })).body).toMatchObject({ name: 'Renamed', monthly_budget: 250, daily_budget: 0 });
      expect((await api('PATCH', '/tenants/budgeted', { body: { monthly_budget: null } })).body).toMatchObject({ monthly_budget: null, daily_budget: 0 });
      const listed = (await api('GET', '/tenants?limit=500')).body.data.find((t: { id: string }) => t.id === 'budgeted');
      expect(listed).toMatchObject({ monthly_budget: null, daily_budget: 0 });
      expect(listed.spend).toBeUndefined();
      expect((await api('POST', '/tenants', { body: { id: 'nulls', name: 'Nulls', monthly_budget: null, daily_budget: null } })).body).toMatchObject({
        monthly_budget: null,
        daily_budget: null,
      });
    });

    test('a budget that is not a number >= 0 (at most 1e9), or a misspelt field, is 400 validation_failed naming it', async () => {
      expectError(await api('POST', '/tenants', { body: { id: 'neg', name: 'Neg', monthly_budget: -1 } }), 400, 'validation_failed', 'monthly_budget');
      expectError(await api('POST', '/tenants', { body: { id: 'str', name: 'Str', daily_budget: '5' } }), 400, 'validation_failed', 'daily_budget');
      expectError(await api('POST', '/tenants', { body: { id: 'huge', name: 'Huge', daily_budget: 2e9 } }), 400, 'validation_failed', 'daily_budget');
      expectError(await api('POST', '/tenants', { body: { id: 'typo', name: 'Typo', monthly_budgets: 5 } }), 400, 'validation_failed');
      await api('POST', '/tenants', { body: { id: 'valid', name: 'Valid' } });
      expectError(await api('PATCH', '/tenants/valid', { body: { monthly_budget: -0.01 } }), 400, 'validation_failed', 'monthly_budget');
      expectError(await api('PATCH', '/tenants/valid', { body: { daily_budget: true } }), 400, 'validation_failed', 'daily_budget');
      expect((await api('GET', '/tenants/valid')).body).toMatchObject({ monthly_budget: null, daily_budget: null });
      expect((await api('GET', '/tenants/neg')).status).toBe(404);
    });

    test('GET /tenants/{id} adds spend as an agent has it; a monthly budget alone gives monthly / days in the month a day', async () => {
      await api('POST', '/tenants', { body: { id: 'spender', name: 'Spender', monthly_budget: 310 } });
      const now = new Date();
      const days = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
      const { spend } = (await api('GET', '/tenants/spender')).body;
      expect(spend).toEqual({
        day: 0,
        month: 0,
        daily_limit: 310 / days,
        monthly_limit: 310,
        day_resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString(),
        month_resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      });
      await api('PATCH', '/tenants/spender', { body: { daily_budget: 7 } });
      expect((await api('GET', '/tenants/spender')).body.spend).toMatchObject({ daily_limit: 7, monthly_limit: 310 });
      await api('PATCH', '/tenants/spender', { body: { daily_budget: null, monthly_budget: null } });
      expect((await api('GET', '/tenants/spender')).body.spend).toMatchObject({ daily_limit: null, monthly_limit: null });
    });

    test("a tenant_admin reads its tenant's budgets and spend but may not change them", async () => {
      await api('POST', '/tenants', { body: { id: 'scoped', name: 'Scoped', daily_budget: 5 } });
      const key = (await api('POST', '/admin-keys', { body: { name: 'scoped-admin', role: 'tenant_admin', tenant_id: 'scoped' } })).body.api_key;
      const own = await api('GET', '/tenants/scoped', { key });
      expect(own.status).toBe(200);
      expect(own.body).toMatchObject({ daily_budget: 5, spend: { daily_limit: 5 } });
      expectError(await api('PATCH', '/tenants/scoped', { key, body: { daily_budget: 500 } }), 403, 'insufficient_role');
      expectError(await api('GET', '/tenants/budgeted', { key }), 403, 'tenant_forbidden');
      expect((await api('GET', '/tenants/scoped')).body.daily_budget).toBe(5);
    });
  });
});
