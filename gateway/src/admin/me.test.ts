import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminApi, expectError, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

describe('GET /api/me', () => {
  let gw: TestGateway;
  let api: AdminCall;
  beforeAll(async () => {
    gw = await startTestGateway();
    api = adminApi(gw.adminUrl, gw.adminKey);
    expect((await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } })).status).toBe(201);
  });
  afterAll(async () => gw?.close());

  test('names the root key', async () => {
    const r = await api('GET', '/me');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: 'root', name: expect.any(String), role: 'admin', tenant_id: null });
  });

  test('names a tenant-scoped viewer key, without its secret or prefix', async () => {
    const made = await api('POST', '/admin-keys', { body: { name: 'acme auditor', role: 'viewer', tenant_id: 'acme' } });
    const r = await api('GET', '/me', { key: made.body.api_key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: made.body.id, name: 'acme auditor', role: 'viewer', tenant_id: 'acme' });
    expect(r.text).not.toContain(made.body.api_key);
    expect(r.text).not.toContain(made.body.key_prefix);
  });

  test('a missing or unknown key is 401', async () => {
    expectError(await api('GET', '/me', { key: null }), 401, 'invalid_api_key');
    expectError(await api('GET', '/me', { key: 'adk_not_a_real_key_000000000000000' }), 401, 'invalid_api_key');
  });

  test('is described in the OpenAPI document', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths['/me'])).toEqual(['get']);
  });
});
