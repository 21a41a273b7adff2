import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw?.close());

test('smoke', async () => {
  const h = { authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json' };
  let r = await fetch(`${gw.adminUrl}/tenants`, { method: 'POST', headers: h, body: JSON.stringify({ id: 'acme', name: 'Acme' }) });
  console.log(r.status, await r.text());
  r = await fetch(`${gw.adminUrl}/tenants`, { method: 'POST', headers: h, body: JSON.stringify({ id: 'acme', name: 'Acme', foo: 1 }) });
  console.log(r.status, await r.text());
  r = await fetch(`${gw.adminUrl}/tenants`, { method: 'POST', headers: h, body: '{bad' });
  console.log(r.status, await r.text());
  r = await fetch(`${gw.adminUrl}/policies/p1`, { method: 'PUT', headers: h, body: JSON.stringify({ tenant_id: 'acme', monthly_budget: 10, rules: { pii: 'block' } }) });
  console.log(r.status, await r.text());
  r = await fetch(`${gw.adminUrl}/agents`, { method: 'POST', headers: { ...h, 'idempotency-key': 'k1' }, body: JSON.stringify({ tenant_id: 'acme', name: 'bot', policy_id: 'p1' }) });
  const a = await r.text();
  console.log(r.status, a);
  r = await fetch(`${gw.adminUrl}/agents`, { method: 'POST', headers: { ...h, 'idempotency-key': 'k1' }, body: JSON.stringify({ tenant_id: 'acme', name: 'bot', policy_id: 'p1' }) });
  console.log(r.status, await r.text());
  r = await fetch(`${gw.adminUrl}/agents/${JSON.parse(a).id}`, { headers: h });
  console.log(r.status, await r.text());
  r = await fetch(`${gw.adminUrl}/agents?limit=abc`, { headers: h });
  console.log(r.status, await r.text());
  r = await fetch(`${gw.adminUrl}/system/config`, { headers: h });
  console.log(r.status, await r.text());
  r = await fetch(`${gw.adminUrl}/openapi.json`, { headers: h });
  console.log(r.status, (await r.text()).slice(0, 300));
  expect(r.status).toBe(200);
});
