import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminApi, expectError, type AdminCall, type CallOptions } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

interface Case {
  name: string;
  method: string;
  path: string;
  opts?: CallOptions;
  status: number;
  code: string;
  /** The field CONTRACT's `param` must name; null when no single field is at fault. */
  param: string | null;
}

const long = (n: number) => 'x'.repeat(n);
const manyLabels = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));

/** Bad input of every kind; each must be a 4xx with CONTRACT's body, never a 500. */
const CASES: Case[] = [
  // Authentication
  { name: 'no Authorization header', method: 'GET', path: '/tenants', opts: { key: null }, status: 401, code: 'invalid_api_key', param: null },
  { name: 'Bearer without a key', method: 'GET', path: '/tenants', opts: { key: null, headers: { authorization: 'Bearer' } }, status: 401, code: 'invalid_api_key', param: null },
  { name: 'Basic instead of Bearer', method: 'GET', path: '/tenants', opts: { key: null, headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } }, status: 401, code: 'invalid_api_key', param: null },
  { name: 'a key with spaces in it', method: 'GET', path: '/tenants', opts: { key: null, headers: { authorization: 'Bearer adk_one two' } }, status: 401, code: 'invalid_api_key', param: null },
  { name: 'an unknown key', method: 'GET', path: '/tenants', opts: { key: `adk_${'0'.repeat(32)}` }, status: 401, code: 'invalid_api_key', param: null },
  { name: 'an unknown key on a write', method: 'POST', path: '/tenants', opts: { key: 'adk_nope', body: { id: 'x', name: 'x' } }, status: 401, code: 'invalid_api_key', param: null },

  // Body syntax and media type
  { name: 'malformed JSON', method: 'POST', path: '/tenants', opts: { raw: '{"id": "acme",' }, status: 400, code: 'invalid_json', param: null },
  { name: 'JSON with a trailing comma', method: 'PUT', path: '/policies/p1', opts: { raw: '{"monthly_budget": 1,}' }, status: 400, code: 'invalid_json', param: null },
  { name: 'empty body with a JSON Content-Type', method: 'POST', path: '/tenants', opts: { raw: '' }, status: 400, code: 'invalid_json', param: null },
  { name: 'no body on POST', method: 'POST', path: '/tenants', status: 400, code: 'validation_failed', param: null },
  { name: 'no body on PUT /system/maintenance', method: 'PUT', path: '/system/maintenance', status: 400, code: 'validation_failed', param: null },
  { name: 'text/plain Content-Type', method: 'POST', path: '/tenants', opts: { raw: 'id=acme', headers: { 'content-type': 'text/plain' } }, status: 400, code: 'invalid_header', param: 'content-type' },
  { name: 'form Content-Type', method: 'POST', path: '/tenants', opts: { raw: 'id=acme&name=Acme', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, status: 400, code: 'invalid_header', param: 'content-type' },
  { name: 'an array where an object is expected', method: 'POST', path: '/tenants', opts: { body: [{ id: 'acme', name: 'Acme' }] }, status: 400, code: 'validation_failed', param: null },
  { name: 'a bare string body', method: 'POST', path: '/agents', opts: { body: 'acme' }, status: 400, code: 'validation_failed', param: null },
  { name: 'a null body', method: 'PUT', path: '/policies/p1', opts: { raw: 'null' }, status: 400, code: 'validation_failed', param: null },
  { name: 'a __proto__ key', method: 'POST', path: '/tenants', opts: { raw: '{"id":"acme","name":"Acme","__proto__":{"admin":true}}' }, status: 400, code: 'invalid_json', param: null },
  { name: 'a 2 MB body', method: 'POST', path: '/tenants', opts: { body: { id: 'big', name: long(2 * 1024 * 1024) } }, status: 413, code: 'body_too_large', param: null },

  // Tenants
  { name: 'tenant: missing name', method: 'POST', path: '/tenants', opts: { body: { id: 'acme' } }, status: 400, code: 'validation_failed', param: 'name' },
  { name: 'tenant: missing id', method: 'POST', path: '/tenants', opts: { body: { name: 'Acme' } }, status: 400, code: 'validation_failed', param: 'id' },
  { name: 'tenant: uppercase id', method: 'POST', path: '/tenants', opts: { body: { id: 'ACME', name: 'Acme' } }, status: 400, code: 'validation_failed', param: 'id' },
  { name: 'tenant: id of 65 characters', method: 'POST', path: '/tenants', opts: { body: { id: long(65), name: 'Acme' } }, status: 400, code: 'validation_failed', param: 'id' },
  { name: 'tenant: id starting with a dash', method: 'POST', path: '/tenants', opts: { body: { id: '-acme', name: 'Acme' } }, status: 400, code: 'validation_failed', param: 'id' },
  { name: 'tenant: name is a number', method: 'POST', path: '/tenants', opts: { body: { id: 'acme', name: 42 } }, status: 400, code: 'validation_failed', param: 'name' },
  { name: 'tenant: empty name', method: 'POST', path: '/tenants', opts: { body: { id: 'acme', name: '' } }, status: 400, code: 'validation_failed', param: 'name' },
  { name: 'tenant: name over 200 characters', method: 'POST', path: '/tenants', opts: { body: { id: 'acme', name: long(201) } }, status: 400, code: 'validation_failed', param: 'name' },
  { name: 'tenant: unknown top-level field', method: 'POST', path: '/tenants', opts: { body: { id: 'acme', name: 'Acme', nmae: 'typo' } }, status: 400, code: 'validation_failed', param: 'nmae' },
  { name: 'tenant: labels is an array', method: 'POST', path: '/tenants', opts: { body: { id: 'acme', name: 'Acme', labels: ['a'] } }, status: 400, code: 'validation_failed', param: 'labels' },
  { name: 'tenant: label value over 256 characters', method: 'POST', path: '/tenants', opts: { body: { id: 'acme', name: 'Acme', labels: { team: long(257) } } }, status: 400, code: 'validation_failed', param: 'labels.team' },
  { name: 'tenant: label value is a number', method: 'POST', path: '/tenants', opts: { body: { id: 'acme', name: 'Acme', labels: { n: 1 } } }, status: 400, code: 'validation_failed', param: 'labels.n' },
  { name: 'tenant: 65 labels', method: 'POST', path: '/tenants', opts: { body: { id: 'acme', name: 'Acme', labels: manyLabels } }, status: 400, code: 'validation_failed', param: 'labels' },
  { name: 'tenant: PATCH tries to change the id', method: 'PATCH', path: '/tenants/known', opts: { body: { id: 'other' } }, status: 400, code: 'validation_failed', param: 'id' },
  { name: 'tenant: bad id in the path', method: 'GET', path: '/tenants/Not_Valid!', status: 400, code: 'validation_failed', param: 'id' },

  // Agents
  { name: 'agent: name with a space', method: 'POST', path: '/agents', opts: { body: { name: 'support bot', tenant_id: 'known' } }, status: 400, code: 'validation_failed', param: 'name' },
  { name: 'agent: name over 64 characters', method: 'POST', path: '/agents', opts: { body: { name: long(65), tenant_id: 'known' } }, status: 400, code: 'validation_failed', param: 'name' },
  { name: 'agent: tenant_id is a number', method: 'POST', path: '/agents', opts: { body: { name: 'bot', tenant_id: 7 } }, status: 400, code: 'validation_failed', param: 'tenant_id' },
  { name: 'agent: missing tenant_id', method: 'POST', path: '/agents', opts: { body: { name: 'bot' } }, status: 400, code: 'validation_failed', param: 'tenant_id' },
  { name: 'agent: api_key may not be chosen', method: 'POST', path: '/agents', opts: { body: { name: 'bot', tenant_id: 'known', api_key: 'agk_mine' } }, status: 400, code: 'validation_failed', param: 'api_key' },
  { name: 'agent: bad id in the path', method: 'GET', path: '/agents/not-an-agent', status: 400, code: 'validation_failed', param: 'id' },
  { name: 'agent: bad id on rotate-key', method: 'POST', path: '/agents/agt_short/rotate-key', status: 400, code: 'validation_failed', param: 'id' },
  { name: 'agent: PATCH with an unknown field', method: 'PATCH', path: '/agents/agt_0000000000000000', opts: { body: { tenant_id: 'other' } }, status: 400, code: 'validation_failed', param: 'tenant_id' },
  { name: 'agent: empty Idempotency-Key', method: 'POST', path: '/agents', opts: { body: { name: 'bot', tenant_id: 'known' }, headers: { 'idempotency-key': ' ' } }, status: 400, code: 'invalid_header', param: 'idempotency-key' },
  { name: 'agent: Idempotency-Key over 255 characters', method: 'POST', path: '/agents', opts: { body: { name: 'bot', tenant_id: 'known' }, headers: { 'idempotency-key': long(256) } }, status: 400, code: 'invalid_header', param: 'idempotency-key' },

  // Policies
  { name: 'policy: negative monthly budget', method: 'PUT', path: '/policies/p1', opts: { body: { monthly_budget: -1 } }, status: 400, code: 'validation_failed', param: 'monthly_budget' },
  { name: 'policy: negative daily budget', method: 'PUT', path: '/policies/p1', opts: { body: { daily_budget: -0.01 } }, status: 400, code: 'validation_failed', param: 'daily_budget' },
  { name: 'policy: budget as a string', method: 'PUT', path: '/policies/p1', opts: { body: { monthly_budget: '250' } }, status: 400, code: 'validation_failed', param: 'monthly_budget' },
  { name: 'policy: budget beyond 1e9', method: 'PUT', path: '/policies/p1', opts: { body: { monthly_budget: 1e12 } }, status: 400, code: 'validation_failed', param: 'monthly_budget' },
  { name: 'policy: allowed_models is a string', method: 'PUT', path: '/policies/p1', opts: { body: { allowed_models: 'openai/*' } }, status: 400, code: 'validation_failed', param: 'allowed_models' },
  { name: 'policy: allowed_models entry with a space', method: 'PUT', path: '/policies/p1', opts: { body: { allowed_models: ['openai/*', 'gpt 4'] } }, status: 400, code: 'validation_failed', param: 'allowed_models.1' },
  { name: 'policy: rules is an array', method: 'PUT', path: '/policies/p1', opts: { body: { rules: [] } }, status: 400, code: 'validation_failed', param: 'rules' },
  { name: 'policy: unknown field in rules', method: 'PUT', path: '/policies/p1', opts: { body: { rules: { pii: 'block', pii_mode: 'block' } } }, status: 400, code: 'validation_failed', param: 'rules.pii_mode' },
  { name: 'policy: unknown field in rules.retry_block', method: 'PUT', path: '/policies/p1', opts: { body: { rules: { retry_block: { max_repeats: 3, window_seconds: 60, window: 1 } } } }, status: 400, code: 'validation_failed', param: 'rules.retry_block.window' },
  { name: 'policy: bad pii enum value', method: 'PUT', path: '/policies/p1', opts: { body: { rules: { pii: 'mask' } } }, status: 400, code: 'validation_failed', param: 'rules.pii' },
  { name: 'policy: bad pii type', method: 'PUT', path: '/policies/p1', opts: { body: { rules: { pii_types: ['email', 'passport'] } } }, status: 400, code: 'validation_failed', param: 'rules.pii_types.1' },
  { name: 'policy: retry_block.max_repeats 0', method: 'PUT', path: '/policies/p1', opts: { body: { rules: { retry_block: { max_repeats: 0, window_seconds: 60 } } } }, status: 400, code: 'validation_failed', param: 'rules.retry_block.max_repeats' },
  { name: 'policy: retry_block missing window_seconds', method: 'PUT', path: '/policies/p1', opts: { body: { rules: { retry_block: { max_repeats: 2 } } } }, status: 400, code: 'validation_failed', param: 'rules.retry_block.window_seconds' },
  { name: 'policy: fractional rpm', method: 'PUT', path: '/policies/p1', opts: { body: { rules: { rpm: 1.5 } } }, status: 400, code: 'validation_failed', param: 'rules.rpm' },
  { name: 'policy: negative cost cap', method: 'PUT', path: '/policies/p1', opts: { body: { rules: { max_cost_per_request: -1 } } }, status: 400, code: 'validation_failed', param: 'rules.max_cost_per_request' },
  { name: 'policy: unknown top-level field', method: 'PUT', path: '/policies/p1', opts: { body: { montly_budget: 5 } }, status: 400, code: 'validation_failed', param: 'montly_budget' },
  { name: 'policy: id may not be in the body', method: 'PUT', path: '/policies/p1', opts: { body: { id: 'p2' } }, status: 400, code: 'validation_failed', param: 'id' },
  { name: 'policy: bad id in the path', method: 'PUT', path: '/policies/Bad%20Id', opts: { body: {} }, status: 400, code: 'validation_failed', param: 'id' },
  { name: 'policy: id of 65 characters in the path', method: 'GET', path: `/policies/${long(65)}`, status: 400, code: 'validation_failed', param: 'id' },

  // Admin keys and system
  { name: 'admin key: bad role', method: 'POST', path: '/admin-keys', opts: { body: { name: 'k', role: 'owner' } }, status: 400, code: 'validation_failed', param: 'role' },
  { name: 'admin key: tenant_admin without tenant', method: 'POST', path: '/admin-keys', opts: { body: { name: 'k', role: 'tenant_admin' } }, status: 400, code: 'validation_failed', param: 'tenant_id' },
  { name: 'admin key: missing name', method: 'POST', path: '/admin-keys', opts: { body: { role: 'viewer' } }, status: 400, code: 'validation_failed', param: 'name' },
  { name: 'admin key: bad id in the path', method: 'DELETE', path: '/admin-keys/12345', status: 400, code: 'validation_failed', param: 'id' },
  { name: 'maintenance: enabled is a string', method: 'PUT', path: '/system/maintenance', opts: { body: { enabled: 'yes' } }, status: 400, code: 'validation_failed', param: 'enabled' },
  { name: 'maintenance: missing enabled', method: 'PUT', path: '/system/maintenance', opts: { body: { message: 'x' } }, status: 400, code: 'validation_failed', param: 'enabled' },
  { name: 'maintenance: message over 500 characters', method: 'PUT', path: '/system/maintenance', opts: { body: { enabled: true, message: long(501) } }, status: 400, code: 'validation_failed', param: 'message' },

  // NUL characters, which PostgreSQL's text cannot store
  { name: 'a NUL character in a tenant name', method: 'POST', path: '/tenants', opts: { raw: '{"id":"tnul","name":"a\\u0000b"}' }, status: 400, code: 'validation_failed', param: 'name' },
  { name: 'a NUL character in a label value', method: 'PATCH', path: '/tenants/known', opts: { raw: '{"labels":{"team":"x\\u0000"}}' }, status: 400, code: 'validation_failed', param: 'labels.team' },
  { name: 'a NUL character in a label key', method: 'PATCH', path: '/tenants/known', opts: { raw: '{"labels":{"t\\u0000":"x"}}' }, status: 400, code: 'validation_failed', param: 'labels.t\u0000' },
  { name: 'a NUL character in an admin key name', method: 'POST', path: '/admin-keys', opts: { raw: '{"name":"x\\u0000","role":"viewer"}' }, status: 400, code: 'validation_failed', param: 'name' },
  { name: 'a NUL character in a policy label', method: 'PUT', path: '/policies/pnul', opts: { raw: '{"tenant_id":"known","labels":{"a":"\\u0000"}}' }, status: 400, code: 'validation_failed', param: 'labels.a' },

  // Query strings
  { name: 'limit=0', method: 'GET', path: '/tenants?limit=0', status: 400, code: 'validation_failed', param: 'limit' },
  { name: 'limit=501', method: 'GET', path: '/agents?limit=501', status: 400, code: 'validation_failed', param: 'limit' },
  { name: 'limit=abc', method: 'GET', path: '/policies?limit=abc', status: 400, code: 'validation_failed', param: 'limit' },
  { name: 'limit=-5', method: 'GET', path: '/traces?limit=-5', status: 400, code: 'validation_failed', param: 'limit' },
  { name: 'limit given twice', method: 'GET', path: '/agents?limit=1&limit=2', status: 400, code: 'validation_failed', param: 'limit' },
  { name: 'an invalid cursor', method: 'GET', path: '/agents?cursor=bm90LWEtY3Vyc29y', status: 400, code: 'validation_failed', param: 'cursor' },
  { name: 'a cursor over 512 characters', method: 'GET', path: `/tenants?cursor=${long(513)}`, status: 400, code: 'validation_failed', param: 'cursor' },
  { name: 'an unknown query parameter', method: 'GET', path: '/agents?tenant=acme', status: 400, code: 'validation_failed', param: 'tenant' },
  { name: 'a bad tenant_id filter', method: 'GET', path: '/agents?tenant_id=Not%20Valid', status: 400, code: 'validation_failed', param: 'tenant_id' },
  { name: 'since is not a timestamp', method: 'GET', path: '/traces?since=yesterday', status: 400, code: 'validation_failed', param: 'since' },
  { name: 'group_by=week', method: 'GET', path: '/usage?group_by=week', status: 400, code: 'validation_failed', param: 'group_by' },
  { name: 'from is not a date', method: 'GET', path: '/usage?from=2026-13-45', status: 400, code: 'validation_failed', param: 'from' },
  { name: 'trace id with a control character', method: 'GET', path: '/traces/run%0A1', status: 400, code: 'validation_failed', param: 'trace_id' },
  { name: 'trace id with a non-ASCII character', method: 'GET', path: '/traces/r%C3%A9sum%C3%A9', status: 400, code: 'validation_failed', param: 'trace_id' },
];

describe.each(['sqlite', 'postgres'] as const)('bad input on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
    expect((await api('POST', '/tenants', { body: { id: 'known', name: 'Known' } })).status).toBe(201);
  });
  afterAll(async () => gw?.close());

  test('the walk has at least 30 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  test('a DELETE with a JSON Content-Type and no body is served as a DELETE', async () => {
    expect((await api('POST', '/tenants', { body: { id: 'gone', name: 'Gone' } })).status).toBe(201);
    const r = await api('DELETE', '/tenants/gone', { raw: '' });
    expect(r.status, r.text).toBe(204);
    expect((await api('DELETE', '/tenants/gone', { raw: '' })).status).toBe(404);
  });

  test.each(CASES)('$name -> $status $code', async (c) => {
    const r = await api(c.method, c.path, c.opts);
    expect(r.status, r.text).not.toBe(500);
    expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    expect(r.status, r.text).toBeLessThan(500);
    expectError(r, c.status, c.code, c.param);
  });

  test('nothing was created by the walk', async () => {
    expect((await api('GET', '/tenants')).body.data.map((t: { id: string }) => t.id)).toEqual(['known']);
    expect((await api('GET', '/agents')).body.data).toEqual([]);
    expect((await api('GET', '/policies')).body.data).toEqual([]);
    expect((await api('GET', '/system/config')).body.maintenance.enabled).toBe(false);
  });

  test('unknown admin routes are 404 with the error shape', async () => {
    const r = await api('GET', '/tenantz');
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ type: 'not_found', message: expect.any(String) });
  });
});
