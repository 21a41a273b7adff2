// Routes (model aliases) as resources over HTTP: PUT/GET/DELETE /routes/{alias} with percent-encoded (glob) aliases,
// read-only aliases of agentgw.yaml, admin-only writes, 400s that name the field, one audit entry per write, and a
// stored route serving /v1 at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AuditEntry } from '../contract/index.js';
import { RFC3339, adminApi, expectError, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

describe.each(['sqlite', 'postgres'] as const)('routes over HTTP on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  let agentKey: string;
  const keys: Record<string, string> = {};
  beforeAll(async () => {
    gw = await startTestGateway({
      storage,
      config: {
        providers: { a: { type: 'mock' }, b: { type: 'mock' } },
        models: { fixed: ['a/alpha'], 'cfg-*': { strategy: 'weighted', targets: [{ model: 'b/beta', weight: 3 }] } },
      },
    });
    api = adminApi(gw.adminUrl, gw.adminKey);
    expect((await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } })).status).toBe(201);
    agentKey = (await api('POST', '/agents', { body: { tenant_id: 'acme', name: 'bot' } })).body.api_key;
    for (const [name, role, tenant_id] of [['viewer', 'viewer'], ['tadmin', 'tenant_admin', 'acme']] as const) {
      keys[name] = (await api('POST', '/admin-keys', { body: { name, role, tenant_id } })).body.api_key;
    }
  });
  afterAll(async () => gw?.close());

  const chat = async (model: string) => {
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const auditOf = async (alias: string): Promise<AuditEntry[]> => (await api('GET', `/audit?kind=route&object_id=${encodeURIComponent(alias)}`)).body.data;

  test('PUT creates (201) with defaults filled in, updates (200) keeping labels; GET and the list show it beside the config routes', async () => {
    const created = await api('PUT', '/routes/smart', { body: { strategy: 'fallback', targets: [{ model: 'a/alpha' }, { model: 'b/beta', priority: 1, rpm: 60 }], labels: { team: 'x' } } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      alias: 'smart',
      strategy: 'fallback',
      targets: [
        { model: 'a/alpha', weight: 1, priority: 0, rpm: null, tpm: null },
        { model: 'b/beta', weight: 1, priority: 1, rpm: 60, tpm: null },
      ],
      labels: { team: 'x' },
      source: 'api',
      created_at: expect.stringMatching(RFC3339),
      updated_at: expect.stringMatching(RFC3339),
    });
    const updated = await api('PUT', '/routes/smart', { body: { strategy: 'weighted', targets: [{ model: 'b/beta', weight: 2 }, { model: 'a/alpha' }] } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ strategy: 'weighted', labels: { team: 'x' }, created_at: created.body.created_at });
    expect(updated.body.targets.map((t: { model: string }) => t.model)).toEqual(['b/beta', 'a/alpha']);
    expect((await api('GET', '/routes/smart')).body).toEqual(updated.body);

    const list = await api('GET', '/routes');
    expect(list.status).toBe(200);
    expect(list.body.next_cursor).toBeNull();
    expect(list.body.data.find((r: { alias: string }) => r.alias === 'fixed')).toEqual({
      alias: 'fixed',
      strategy: 'fallback',
      targets: [{ model: 'a/alpha', weight: 1, priority: 0, rpm: null, tpm: null }],
      labels: {},
      source: 'config',
      created_at: null,
      updated_at: null,
    });
    expect(list.body.data.find((r: { alias: string }) => r.alias === 'cfg-*')).toMatchObject({ source: 'config', strategy: 'weighted', targets: [{ model: 'b/beta', weight: 3 }] });
    expect(list.body.data.find((r: { alias: string }) => r.alias === 'smart')).toEqual(updated.body);
    // Pages: one route at a time walks them all, and a route written meanwhile before the cursor moves nothing.
    expect((await api('PUT', '/routes/mmm', { body: { strategy: 'fallback', targets: [{ model: 'a/alpha' }] } })).status).toBe(201);
    const before = (await api('GET', '/routes')).body.data.map((r: { alias: string }) => r.alias);
    expect(before.slice(-2)).toEqual(['mmm', 'smart']);
    const seen: string[] = [];
    let cursor = '';
    do {
      const page = await api('GET', `/routes?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.body.data).toHaveLength(1);
      seen.push(page.body.data[0].alias);
      cursor = page.body.next_cursor ?? '';
      if (seen.at(-1) === 'mmm') expect((await api('PUT', '/routes/aaa', { body: { strategy: 'fallback', targets: [{ model: 'a/alpha' }] } })).status).toBe(201);
    } while (cursor);
    expect(seen).toEqual(before);
    for (const alias of ['aaa', 'mmm']) expect((await api('DELETE', `/routes/${alias}`)).status).toBe(204);
  });

  test('aliases of agentgw.yaml are read-only: 409 route_read_only on PUT and DELETE, and nothing is stored', async () => {
    for (const path of ['/routes/fixed', `/routes/${encodeURIComponent('cfg-*')}`]) {
      expectError(await api('PUT', path, { body: { strategy: 'fallback', targets: [{ model: 'b/beta' }] } }), 409, 'route_read_only');
      expectError(await api('DELETE', path), 409, 'route_read_only');
    }
    expect((await api('GET', '/routes/fixed')).body.targets).toEqual([{ model: 'a/alpha', weight: 1, priority: 0, rpm: null, tpm: null }]);
    expect(await auditOf('fixed')).toEqual([]);
    expect((await chat('fixed')).body.model).toBe('alpha');
  });

  test('only an admin key writes routes (403 insufficient_role); every key reads them', async () => {
    for (const key of [keys.viewer!, keys.tadmin!]) {
      expectError(await api('PUT', '/routes/mine', { key, body: { strategy: 'fallback', targets: [{ model: 'a/alpha' }] } }), 403, 'insufficient_role');
      expectError(await api('DELETE', '/routes/smart', { key }), 403, 'insufficient_role');
      expect((await api('GET', '/routes/smart', { key })).status).toBe(200);
      expect((await api('GET', '/routes', { key })).status).toBe(200);
    }
    expectError(await api('GET', '/routes/mine'), 404, 'route_not_found');
    expectError(await api('GET', '/routes', { key: 'adk_wrong' }), 401, 'invalid_api_key');
  });

  test('bad bodies and aliases are 400s that name the field; an unknown provider is named', async () => {
    const unknown = await api('PUT', '/routes/r1', { body: { strategy: 'fallback', targets: [{ model: 'a/alpha' }, { model: 'nosuch/x' }] } });
    expectError(unknown, 400, 'validation_failed', 'targets[1].model');
    expect(unknown.body.error.message).toContain('nosuch');
    const bad: Array<[unknown, string | undefined]> = [
      [{ strategy: 'fallback', targets: [] }, 'targets'],
      [{ strategy: 'fastest', targets: [{ model: 'a/alpha' }] }, 'strategy'],
      [{ targets: [{ model: 'a/alpha' }] }, 'strategy'],
      [{ strategy: 'weighted', targets: [{ model: 'a/alpha', weight: 0 }] }, undefined],
      [{ strategy: 'fallback', targets: [{ model: 'alpha' }] }, undefined],
      [{ strategy: 'fallback', targets: [{ model: 'a/alpha', rmp: 5 }] }, undefined],
      [{ strategy: 'fallback', targets: [{ model: 'a/alpha' }], color: 'red' }, undefined],
    ];
    for (const [body, param] of bad) expectError(await api('PUT', '/routes/r1', { body }), 400, 'validation_failed', param);
    expectError(await api('PUT', '/routes/r1', { raw: '{"strategy":' }), 400, 'invalid_json');
    expectError(await api('PUT', `/routes/${encodeURIComponent('has space')}`, { body: { strategy: 'fallback', targets: [{ model: 'a/alpha' }] } }), 400, 'validation_failed');
    expectError(await api('GET', '/routes?cursor=bogus'), 400, 'validation_failed', 'cursor');
    expectError(await api('GET', '/routes/r1'), 404, 'route_not_found');
  });

  test('a percent-encoded glob alias holding "/" is stored, serves /v1 at once, is listed by /v1/models, and DELETE removes it', async () => {
    const path = `/routes/${encodeURIComponent('team/*')}`;
    expect(path).toBe('/routes/team%2F*');
    expect((await chat('team/anything')).status).toBe(400);
    const put = await api('PUT', path, { body: { strategy: 'fallback', targets: [{ model: 'b/beta' }] } });
    expect(put.status, put.text).toBe(201);
    expect(put.body.alias).toBe('team/*');
    expect((await api('GET', path)).body.alias).toBe('team/*');
    const served = await chat('team/anything');
    expect(served.status).toBe(200);
    expect(served.body.model).toBe('beta');

    const models = await fetch(`${gw.baseUrl}/models`, { headers: { authorization: `Bearer ${agentKey}` } }).then((r) => r.json() as Promise<any>);
    const byId = new Map<string, any>(models.data.map((m: { id: string }) => [m.id, m]));
    expect(byId.get('team/*')).toMatchObject({ object: 'model', targets: ['b/beta'], pattern: true });
    expect(byId.get('cfg-*')).toMatchObject({ targets: ['b/beta'], pattern: true });
    expect(byId.get('fixed')).toMatchObject({ targets: ['a/alpha'] });
    expect(byId.get('fixed').pattern).toBeUndefined();
    expect(byId.get('smart')).toMatchObject({ targets: ['b/beta', 'a/alpha'] });

    // Not percent-encoded: a 404 that says how to write it.
    const plain = await api('GET', '/routes/team/*');
    expectError(plain, 404, 'route_not_found');
    expect(plain.body.error.message).toContain('/api/routes/team%2F*');

    expect((await api('DELETE', path)).status).toBe(204);
    expectError(await api('DELETE', path), 404, 'route_not_found');
    const gone = await chat('team/anything');
    expect(gone.status).toBe(400);
    expect(gone.body.error.code).toBe('unknown_model');
  });

  test('every write is in the audit log with its actor, before and after; refused writes are not', async () => {
    const alias = 'audited/*';
    const path = `/routes/${encodeURIComponent(alias)}`;
    await api('PUT', path, { body: { strategy: 'fallback', targets: [{ model: 'a/alpha' }] }, headers: { 'x-agentgw-change-id': 'plan-123' } });
    await api('PUT', path, { body: { strategy: 'latency', targets: [{ model: 'a/alpha' }, { model: 'b/beta' }] } });
    await api('PUT', path, { key: keys.viewer, body: { strategy: 'fallback', targets: [{ model: 'b/beta' }] } });
    await api('PUT', path, { body: { strategy: 'fallback', targets: [{ model: 'nosuch/x' }] } });
    await api('DELETE', path);
    const entries = (await auditOf(alias)).reverse();
    expect(entries.map((e) => e.action)).toEqual(['route.create', 'route.update', 'route.delete']);
    for (const e of entries) {
      expect(e.actor).toEqual({ kind: 'admin_key', id: 'root', name: 'root' });
      expect(e.object).toEqual({ kind: 'route', id: alias });
    }
    expect(entries[0]).toMatchObject({ before: null, after: { alias, strategy: 'fallback' }, change_id: 'plan-123' });
    expect(entries[1]).toMatchObject({ before: { strategy: 'fallback' }, after: { strategy: 'latency' }, change_id: null });
    expect(entries[2]).toMatchObject({ before: { strategy: 'latency' }, after: null });
  });

  test('the OpenAPI document lists the route endpoints and schemas', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/routes/{alias}'] ?? doc.paths['/routes/{alias}'])).toEqual(expect.arrayContaining(['put', 'get', 'delete']));
    expect(doc.components.schemas.Route).toBeDefined();
  });
});

test('an alias agentgw.yaml takes after a route was stored under it: the file wins, and the route is listed once, read-only', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-routes-'));
  const sqlitePath = join(dir, 'agentgw.db');
  const providers = { a: { type: 'mock' }, b: { type: 'mock' } };
  let gw: TestGateway | undefined;
  try {
    gw = await startTestGateway({ sqlitePath, config: { providers } });
    const adminKey = gw.adminKey;
    expect((await adminApi(gw.adminUrl, adminKey)('PUT', '/routes/later', { body: { strategy: 'fallback', targets: [{ model: 'b/beta' }] } })).status).toBe(201);
    await gw.close();
    // The same database, served by a config that now defines `later` itself.
    gw = await startTestGateway({ sqlitePath, adminKey, config: { providers, models: { later: ['a/alpha'] } } });
    const api = adminApi(gw.adminUrl, adminKey);
    const listed = (await api('GET', '/routes')).body.data.filter((r: { alias: string }) => r.alias === 'later');
    expect(listed).toEqual([expect.objectContaining({ source: 'config', targets: [expect.objectContaining({ model: 'a/alpha' })] })]);
    expectError(await api('PUT', '/routes/later', { body: { strategy: 'fallback', targets: [{ model: 'b/beta' }] } }), 409, 'route_read_only');
    await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } });
    const key = (await api('POST', '/agents', { body: { tenant_id: 'acme', name: 'bot' } })).body.api_key;
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'later', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(((await res.json()) as { model: string }).model).toBe('alpha');
  } finally {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
