import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RFC3339, adminApi, expectError, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

const ADMIN_KEY = /^adk_[0-9A-Za-z]{32}$/;

describe.each(['sqlite', 'postgres'] as const)('admin keys over HTTP on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
    expect((await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } })).status).toBe(201);
  });
  afterAll(async () => gw?.close());

  test('POST returns the key once; it works; the list never shows it', async () => {
    const r = await api('POST', '/admin-keys', { body: { name: 'ci', role: 'tenant_admin', tenant_id: 'acme' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'ci', role: 'tenant_admin', tenant_id: 'acme', created_at: expect.stringMatching(RFC3339) });
    expect(r.body.id).toMatch(/^adk_[0-9A-Za-z]{16}$/);
    expect(r.body.api_key).toMatch(ADMIN_KEY);
    expect(r.body.api_key).not.toBe(gw.adminKey);

    expect((await api('GET', '/agents', { key: r.body.api_key })).status).toBe(200);

    const list = await api('GET', '/admin-keys?limit=500');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(r.body.api_key);
    expect(list.text).not.toContain(gw.adminKey);
    const listed = list.body.data.find((k: { id: string }) => k.id === r.body.id);
    expect(listed).not.toHaveProperty('api_key');
    const { api_key: _k, ...pub } = r.body;
    expect(listed).toEqual(pub);
    expect(list.body.data.find((k: { id: string }) => k.id === 'root')).toMatchObject({ role: 'admin', tenant_id: null });
  });

  test('global admin and viewer keys; unscoped viewer by default', async () => {
    const admin = await api('POST', '/admin-keys', { body: { name: 'ops', role: 'admin' } });
    expect(admin.status).toBe(201);
    expect(admin.body.tenant_id).toBeNull();
    const viewer = await api('POST', '/admin-keys', { body: { name: 'audit', role: 'viewer', tenant_id: null } });
    expect(viewer.body).toMatchObject({ role: 'viewer', tenant_id: null });
    expect((await api('GET', '/admin-keys', { key: admin.body.api_key })).status).toBe(200);
  });

  test('DELETE: 204, the key stops working at once, then 404', async () => {
    const r = (await api('POST', '/admin-keys', { body: { name: 'temp', role: 'admin' } })).body;
    expect((await api('GET', '/tenants', { key: r.api_key })).status).toBe(200);
    expect((await api('DELETE', `/admin-keys/${r.id}`)).status).toBe(204);
    expectError(await api('GET', '/tenants', { key: r.api_key }), 401, 'invalid_api_key');
    expectError(await api('DELETE', `/admin-keys/${r.id}`), 404, 'admin_key_not_found');
    expect((await api('GET', '/admin-keys?limit=500')).body.data.some((k: { id: string }) => k.id === r.id)).toBe(false);
  });

  test('the root key cannot be deleted through the API', async () => {
    const r = await api('DELETE', '/admin-keys/root');
    expect(r.status).toBe(403);
    expectError(r, 403, 'insufficient_role');
    expect((await api('GET', '/tenants')).status).toBe(200);
  });

  test('a scoped key needs an existing tenant; a tenant_admin needs one; an admin has none', async () => {
    expectError(await api('POST', '/admin-keys', { body: { name: 'x', role: 'viewer', tenant_id: 'nope' } }), 404, 'tenant_not_found', 'tenant_id');
    expectError(await api('POST', '/admin-keys', { body: { name: 'x', role: 'tenant_admin' } }), 400, 'validation_failed', 'tenant_id');
    expectError(await api('POST', '/admin-keys', { body: { name: 'x', role: 'admin', tenant_id: 'acme' } }), 400, 'validation_failed', 'tenant_id');
  });

  test('GET /admin-keys pages with limit and cursor', async () => {
    for (let i = 0; i < 5; i++) await api('POST', '/admin-keys', { body: { name: `bulk-${i}`, role: 'viewer' } });
    const total = (await api('GET', '/admin-keys?limit=500')).body.data.length;
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 50; pages++) {
      const r: { body: { data: Array<{ id: string }>; next_cursor: string | null } } = await api('GET', `/admin-keys?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...r.body.data.map((k) => k.id));
      cursor = r.body.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
  });
});
