import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type AdminCall, adminApi } from '../test-support/admin-api.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

// Admin writes that race: each check-then-write must end in a CONTRACT answer, whichever write the database takes first.
describe.each(['sqlite', 'postgres'] as const)('concurrent admin writes on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
  });
  afterAll(async () => gw?.close());

  test('creating an agent while its tenant and policy are deleted: 201/404 and 204/409, never a 500, nothing left dangling', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const tenant = `race-${i}`;
      const policy = `race-p${i}`;
      expect((await api('POST', '/tenants', { body: { id: tenant, name: tenant } })).status).toBe(201);
      expect((await api('PUT', `/policies/${policy}`, { body: { tenant_id: tenant } })).status).toBe(201);
      const [agent, delPolicy, delTenant] = await Promise.all([
        api('POST', '/agents', { body: { tenant_id: tenant, name: 'bot', policy_id: policy } }),
        api('DELETE', `/policies/${policy}`),
        api('DELETE', `/tenants/${tenant}`),
      ]);
      seen.add(`${agent.status}/${delPolicy.status}/${delTenant.status}`);
      expect([201, 404], agent.text).toContain(agent.status);
      expect([204, 409], delPolicy.text).toContain(delPolicy.status);
      expect([204, 409], delTenant.text).toContain(delTenant.status);
      if (agent.status === 201) {
        // The agent exists, so what it names must too.
        expect(delPolicy.status).toBe(409);
        expect((await api('GET', `/policies/${policy}`)).status).toBe(200);
        expect((await api('GET', `/tenants/${tenant}`)).status).toBe(200);
      } else {
        expect(agent.body.error.code).toMatch(/^(tenant|policy)_not_found$/);
      }
    }
    expect(seen.size).toBeGreaterThan(0);
  });
});
