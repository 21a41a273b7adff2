import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROLES } from '../contract/index.js';
import { RFC3339, adminApi, expectError, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

const PROVIDER_SECRET = 'sk-test-provider-secret-0123456789';

const ADMIN_PATHS: Record<string, string[]> = {
  '/tenants': ['get', 'post'],
  '/tenants/{id}': ['delete', 'get', 'patch'],
  '/agents': ['get', 'post'],
  '/agents/{id}': ['delete', 'get', 'patch'],
  '/agents/{id}/rotate-key': ['post'],
  '/policies': ['get'],
  '/policies/{id}': ['delete', 'get', 'put'],
  '/admin-keys': ['get', 'post'],
  '/admin-keys/{id}': ['delete'],
  '/system/config': ['get'],
  '/system/maintenance': ['put'],
  '/traces': ['get'],
  '/traces/{trace_id}': ['get'],
  '/usage': ['get'],
  '/audit': ['get'],
};

describe.each(['sqlite', 'postgres'] as const)('system endpoints on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  beforeAll(async () => {
    gw = await startTestGateway({
      storage,
      config: { providers: { oai: { type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: PROVIDER_SECRET, models: ['gpt-4o-mini'] } } },
    });
    api = adminApi(gw.adminUrl, gw.adminKey);
  });
  afterAll(async () => gw?.close());

  test('GET /system/config has CONTRACT shape and no provider secret', async () => {
    const r = await api('GET', '/system/config');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['counters', 'maintenance', 'providers', 'rbac_roles', 'storage', 'version']);
    expect(r.body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(r.body.storage).toEqual({ kind: storage });
    expect(r.body.counters).toEqual({ kind: 'memory' });
    expect(r.body.providers).toEqual([
      { name: 'oai', type: 'openai', base_url: expect.any(String), models: expect.arrayContaining(['gpt-4o-mini']), configured: true },
    ]);
    expect(r.body.rbac_roles.map((role: { name: string }) => role.name)).toEqual([...ROLES]);
    for (const role of r.body.rbac_roles) {
      expect(Object.keys(role).sort()).toEqual(['name', 'permissions']);
      expect(role.permissions.length).toBeGreaterThan(0);
      expect(role.permissions.every((p: unknown) => typeof p === 'string')).toBe(true);
    }
    expect(r.body.maintenance).toEqual({ enabled: false, message: null, since: null });
    expect(r.text).not.toContain(PROVIDER_SECRET);
    expect(r.text).not.toContain(gw.adminKey);
  });

  test('tenant-scoped keys see provider names, types and models, not base_url; keys without a tenant see it', async () => {
    expect((await api('POST', '/tenants', { body: { id: 'scoped', name: 'Scoped' } })).status).toBe(201);
    const key = async (role: string, tenant_id?: string) => (await api('POST', '/admin-keys', { body: { name: `${role}-${tenant_id ?? 'all'}`, role, tenant_id } })).body.api_key as string;
    const providers = async (k: string) => {
      const r = await api('GET', '/system/config', { key: k });
      expect(r.status).toBe(200);
      return r;
    };
    for (const scoped of [await key('viewer', 'scoped'), await key('tenant_admin', 'scoped')]) {
      const r = await providers(scoped);
      expect(r.body.providers).toEqual([{ name: 'oai', type: 'openai', base_url: null, models: expect.arrayContaining(['gpt-4o-mini']), configured: true }]);
      expect(r.text).not.toContain('127.0.0.1:9');
    }
    for (const unscoped of [gw.adminKey, await key('viewer')]) {
      expect((await providers(unscoped)).body.providers[0].base_url).toBe('http://127.0.0.1:9/v1');
    }
  });

  test('PUT /system/maintenance switches maintenance on and off; the admin interface keeps working', async () => {
    const on = await api('PUT', '/system/maintenance', { body: { enabled: true, message: 'Upgrading the database.' } });
    expect(on.status).toBe(200);
    expect(on.body.maintenance).toEqual({ enabled: true, message: 'Upgrading the database.', since: expect.stringMatching(RFC3339) });
    expect(gw.runtime.snapshot.maintenance).toEqual(on.body.maintenance);
    expect((await api('GET', '/system/config')).body.maintenance).toEqual(on.body.maintenance);

    // The admin interface keeps working.
    expect((await api('POST', '/tenants', { body: { id: 'during', name: 'During maintenance' } })).status).toBe(201);
    expect((await api('GET', '/tenants/during')).status).toBe(200);

    // Still on, with a new message: `since` stays the time it started.
    const again = await api('PUT', '/system/maintenance', { body: { enabled: true, message: 'Almost done.' } });
    expect(again.body.maintenance).toEqual({ enabled: true, message: 'Almost done.', since: on.body.maintenance.since });
    const noMessage = await api('PUT', '/system/maintenance', { body: { enabled: true } });
    expect(noMessage.body.maintenance).toMatchObject({ enabled: true, message: null, since: on.body.maintenance.since });

    const off = await api('PUT', '/system/maintenance', { body: { enabled: false, message: 'ignored' } });
    expect(off.status).toBe(200);
    expect(off.body.maintenance).toEqual({ enabled: false, message: null, since: null });
    expect(gw.runtime.snapshot.maintenance.enabled).toBe(false);
  });

  test('GET /openapi.json is the OpenAPI 3.1 document of the admin interface', async () => {
    const r = await api('GET', '/openapi.json');
    expect(r.status).toBe(200);
    const doc = r.body;
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(doc.servers).toEqual([{ url: '/api' }]);
    expect(doc.components.securitySchemes).toMatchObject({ adminKey: { type: 'http', scheme: 'bearer' } });
    for (const [path, methods] of Object.entries(ADMIN_PATHS)) {
      expect(doc.paths, path).toHaveProperty([path]);
      expect(Object.keys(doc.paths[path]).sort(), path).toEqual(methods);
    }
    // Only the admin interface: paths are relative to /api, and neither the data plane nor the document itself is listed.
    for (const path of Object.keys(doc.paths)) {
      expect(path).not.toMatch(/^\/(api|v1)\//);
      expect(path).not.toBe('/openapi.json');
    }
    // Request bodies are described from the contract, unknown fields refused.
    const put = doc.paths['/policies/{id}'].put;
    expect(put.requestBody).toBeDefined();
    expect(JSON.stringify(put.requestBody)).toContain('monthly_budget');
    expect(put.responses).toHaveProperty(['201']);
    expect(put.responses).toHaveProperty(['200']);
  });

  test('the document needs an admin key too', async () => {
    expectError(await api('GET', '/openapi.json', { key: null }), 401, 'invalid_api_key');
  });
});
