// The audit log over HTTP: every write of the admin interface appends one entry (who, what, before, after, request and
// change ids) in the write's own transaction; reads and refused writes append none; no entry holds a secret.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AuditEntry } from '../contract/index.js';
import { RFC3339, adminApi, expectError, type AdminCall, type ApiResponse, type CallOptions } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { usageRecord } from '../test-support/store.js';
import type { Store } from '../storage/store.js';

const PROVIDER_SECRET = 'sk-audit-provider-secret-0123456789';
const ROOT = { kind: 'admin_key', id: 'root', name: 'root' };

/** An object as a response shows it, without what the log leaves out. */
const publicPart = (o: Record<string, unknown>) => {
  const { api_key: _k, spend: _s, ...rest } = o;
  return rest;
};

describe.each(['sqlite', 'postgres'] as const)('audit log over HTTP on %s', (storage) => {
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

  /** Every entry, newest first (GET /audit, itself a read: never audited). */
  const entries = async (key?: string): Promise<AuditEntry[]> => {
    const out: AuditEntry[] = [];
    let cursor = '';
    do {
      const r = await api('GET', `/audit?limit=500${cursor ? `&cursor=${cursor}` : ''}`, { key });
      expect(r.status, r.text).toBe(200);
      out.push(...r.body.data);
      cursor = r.body.next_cursor ?? '';
    } while (cursor);
    return out;
  };

  /** Makes the write, expects `status`, and returns it with the one entry it appended. */
  const write = async (status: number, method: string, path: string, opts?: CallOptions): Promise<[ApiResponse, AuditEntry]> => {
    const before = await entries();
    const res = await api(method, path, opts);
    expect(res.status, `${method} ${path}: ${res.text}`).toBe(status);
    const after = await entries();
    expect(after.length, `${method} ${path} appends one entry`).toBe(before.length + 1);
    const entry = after[0]!;
    expect(after.slice(1)).toEqual(before);
    expect(entry.request_id, `${method} ${path}`).toBe(res.headers.get('x-request-id'));
    expect(entry.at).toMatch(RFC3339);
    expect(entry.id).toMatch(/^aud_/);
    return [res, entry];
  };

  /** Makes a request that must leave the log as it is. */
  const noEntry = async (method: string, path: string, opts?: CallOptions): Promise<ApiResponse> => {
    const before = await entries();
    const res = await api(method, path, opts);
    expect(await entries(), `${method} ${path} (${res.status}) appends nothing`).toEqual(before);
    return res;
  };

  test('every write appends one entry with who, what, before and after; reads and refused writes append none; no secret is in any', async () => {
    const secrets = [gw.adminKey, PROVIDER_SECRET];

    // Tenants
    let [res, e] = await write(201, 'POST', '/tenants', { body: { id: 'acme', name: 'Acme', labels: { tier: 'gold' } } });
    expect(e).toMatchObject({ actor: ROOT, action: 'tenant.create', object: { kind: 'tenant', id: 'acme' }, before: null, after: res.body, change_id: null });
    const tenant = res.body;
    [res, e] = await write(200, 'PATCH', '/tenants/acme', { body: { name: 'Acme Inc.', monthly_budget: 100 } });
    expect(e).toMatchObject({ action: 'tenant.update', object: { kind: 'tenant', id: 'acme' }, before: tenant, after: res.body });
    expect([e.before!.name, e.after!.name, e.after!.monthly_budget]).toEqual(['Acme', 'Acme Inc.', 100]);

    // Policies: created, updated, global
    [res, e] = await write(201, 'PUT', '/policies/acme-std', { body: { tenant_id: 'acme', monthly_budget: 5 } });
    expect(e).toMatchObject({ action: 'policy.create', object: { kind: 'policy', id: 'acme-std' }, before: null, after: res.body });
    const policy = res.body;
    [res, e] = await write(200, 'PUT', '/policies/acme-std', { body: { monthly_budget: 6, rules: { pii: 'block' } } });
    expect(e).toMatchObject({ action: 'policy.update', before: policy, after: res.body });
    expect([e.before!.monthly_budget, e.after!.monthly_budget, (e.after!.rules as { pii: string }).pii]).toEqual([5, 6, 'block']);
    [res, e] = await write(201, 'PUT', '/policies/everyone', { body: { tenant_id: null, allowed_models: ['openai/*'] } });
    expect(e).toMatchObject({ action: 'policy.create', object: { kind: 'policy', id: 'everyone' }, before: null, after: res.body });

    // Agents: created, changed, suspended and resumed, key rotated
    [res, e] = await write(201, 'POST', '/agents', { body: { name: 'bot', tenant_id: 'acme', policy_id: 'acme-std' } });
    const agent = res.body;
    secrets.push(agent.api_key);
    expect(e).toMatchObject({ action: 'agent.create', object: { kind: 'agent', id: agent.id }, before: null, after: publicPart(agent) });
    expect(e.after).not.toHaveProperty('api_key');
    [res, e] = await write(200, 'PATCH', `/agents/${agent.id}`, { body: { labels: { team: 'support' } } });
    expect(e).toMatchObject({ action: 'agent.update', before: publicPart(agent), after: res.body });
    [res, e] = await write(200, 'PATCH', `/agents/${agent.id}`, { body: { suspended: true } });
    expect(e).toMatchObject({ action: 'agent.suspend', before: { suspended: false }, after: { suspended: true } });
    [res, e] = await write(200, 'PATCH', `/agents/${agent.id}`, { body: { suspended: false } });
    expect(e).toMatchObject({ action: 'agent.resume', before: { suspended: true }, after: { suspended: false } });
    [res, e] = await write(200, 'POST', `/agents/${agent.id}/rotate-key`);
    secrets.push(res.body.api_key);
    expect(e).toMatchObject({ action: 'agent.rotate_key', object: { kind: 'agent', id: agent.id }, before: { key_prefix: agent.key_prefix }, after: { key_prefix: res.body.key_prefix } });
    expect(e.before!.key_prefix).not.toBe(e.after!.key_prefix);

    // Admin keys
    [res, e] = await write(201, 'POST', '/admin-keys', { body: { name: 'acme-viewer', role: 'viewer', tenant_id: 'acme' } });
    const adminKey = res.body;
    secrets.push(adminKey.api_key);
    expect(e).toMatchObject({ action: 'admin_key.create', object: { kind: 'admin_key', id: adminKey.id }, before: null, after: publicPart(adminKey) });
    [res, e] = await write(204, 'DELETE', `/admin-keys/${adminKey.id}`);
    expect(e).toMatchObject({ action: 'admin_key.delete', object: { kind: 'admin_key', id: adminKey.id }, before: publicPart(adminKey), after: null });

    // Maintenance, on and off
    [res, e] = await write(200, 'PUT', '/system/maintenance', { body: { enabled: true, message: 'Upgrading.' } });
    expect(e).toMatchObject({
      action: 'maintenance.update',
      object: { kind: 'maintenance', id: 'maintenance' },
      before: { enabled: false, message: null, since: null },
      after: res.body.maintenance,
    });
    [res, e] = await write(200, 'PUT', '/system/maintenance', { body: { enabled: false } });
    expect(e).toMatchObject({ before: { enabled: true, message: 'Upgrading.' }, after: { enabled: false, message: null, since: null } });

    // Trace stops: the first, then a repeat that keeps it
    await gw.runtime.store.insertUsage([usageRecord({ trace_id: 'looping', tenant_id: 'acme', agent_id: agent.id, started_at: new Date().toISOString() })]);
    [res, e] = await write(200, 'POST', '/traces/looping/stop', { body: { reason: 'looping' } });
    expect(e).toMatchObject({ action: 'trace.stop', object: { kind: 'trace', id: 'looping' }, before: null, after: res.body });
    [res, e] = await write(200, 'POST', '/traces/looping/stop', { body: { reason: 'again' } });
    expect(e).toMatchObject({ action: 'trace.stop', before: res.body, after: res.body });

    // Reads append nothing.
    for (const path of [
      '/tenants', '/tenants/acme', '/agents', `/agents/${agent.id}`, '/policies', '/policies/acme-std', '/admin-keys', '/system/config',
      '/traces', '/traces/looping', '/usage', '/me', '/mcp/servers', '/openapi.json', '/audit', '/audit?kind=agent',
    ]) {
      expect((await noEntry('GET', path)).status, path).toBe(200);
    }
    // Refused writes append nothing.
    expectError(await noEntry('POST', '/tenants', { body: { id: 'acme', name: 'Again' } }), 409, 'tenant_exists');
    expectError(await noEntry('PATCH', '/tenants/ghost', { body: { name: 'x' } }), 404, 'tenant_not_found');
    expectError(await noEntry('POST', '/tenants', { body: { id: 'Bad Id', name: 'x' } }), 400, 'validation_failed');
    expectError(await noEntry('DELETE', '/tenants/acme'), 409, 'tenant_not_empty');
    expectError(await noEntry('DELETE', '/policies/acme-std'), 409, 'policy_in_use');
    expectError(await noEntry('POST', '/agents', { body: { name: 'bot', tenant_id: 'acme' } }), 409, 'agent_exists');
    expectError(await noEntry('DELETE', '/admin-keys/adk_0000000000000000'), 404, 'admin_key_not_found');
    expectError(await noEntry('POST', '/traces/never-seen/stop'), 404, 'trace_not_found');

    // Deletes
    [res, e] = await write(204, 'DELETE', `/agents/${agent.id}`);
    expect(e).toMatchObject({ action: 'agent.delete', object: { kind: 'agent', id: agent.id }, before: { id: agent.id, name: 'bot' }, after: null });
    [res, e] = await write(204, 'DELETE', '/policies/acme-std');
    expect(e).toMatchObject({ action: 'policy.delete', object: { kind: 'policy', id: 'acme-std' }, before: { id: 'acme-std', monthly_budget: 6 }, after: null });
    [res, e] = await write(204, 'DELETE', '/tenants/acme');
    expect(e).toMatchObject({ action: 'tenant.delete', object: { kind: 'tenant', id: 'acme' }, before: { id: 'acme', name: 'Acme Inc.' }, after: null });

    // No entry holds a key, a key's hash or a provider secret.
    const log = await entries();
    expect(log).toHaveLength(19);
    const text = JSON.stringify(log);
    for (const secret of [...secrets, ...secrets.map((s) => gw.runtime.hasher.hash(s))]) expect(text).not.toContain(secret);
    for (const entry of log) {
      for (const state of [entry.before, entry.after]) {
        for (const field of ['api_key', 'key_hash', 'headers', 'secret']) expect(state ?? {}).not.toHaveProperty(field);
      }
      expect(Object.keys(entry).sort()).toEqual(['action', 'actor', 'after', 'at', 'before', 'change_id', 'id', 'object', 'request_id']);
    }
  });

  test('x-agentgw-change-id is kept as the entry change_id; a malformed one is refused before anything changes', async () => {
    const digest = 'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
    const [, e] = await write(201, 'POST', '/tenants', { body: { id: 'changed', name: 'Changed' }, headers: { 'x-agentgw-change-id': digest } });
    expect(e.change_id).toBe(digest);
    const bad = await noEntry('POST', '/tenants', { body: { id: 'refused', name: 'Refused' }, headers: { 'x-agentgw-change-id': 'two words' } });
    expectError(bad, 400, 'invalid_header', 'x-agentgw-change-id');
    expectError(await api('GET', '/tenants/refused'), 404, 'tenant_not_found');
  });

  test('an entry that cannot be stored undoes its write: 500, and nothing changed', async () => {
    const store = gw.runtime.store as { transaction: Store['transaction'] };
    const original = store.transaction;
    const failing = <T>(fn: (tx: Store) => Promise<T>): Promise<T> =>
      original.call(store, (tx) => fn(Object.assign(Object.create(tx) as Store, { appendAudit: () => Promise.reject(new Error('the log refused the entry')) }))) as Promise<T>;
    store.transaction = failing;
    try {
      const before = await entries();
      expect((await api('POST', '/tenants', { body: { id: 'unlogged', name: 'Unlogged' } })).status).toBe(500);
      const agent = await api('POST', '/agents', { body: { tenant_id: 'changed', name: 'unlogged-bot' } });
      expect(agent.status).toBe(500);
      expect((await api('PUT', '/system/maintenance', { body: { enabled: true } })).status).toBe(500);
      store.transaction = original;
      expectError(await api('GET', '/tenants/unlogged'), 404, 'tenant_not_found');
      expect((await api('GET', '/agents?tenant_id=changed')).body.data).toEqual([]);
      expect((await api('GET', '/system/config')).body.maintenance.enabled).toBe(false);
      expect(await entries()).toEqual(before);
    } finally {
      store.transaction = original;
    }
  });

  test('filters and pages: actor (id or name), kind, object_id, since and until, limit and cursor', async () => {
    const key = await api('POST', '/admin-keys', { body: { name: 'filter-bot', role: 'admin' } });
    const bot = key.body.api_key as string;
    const start = new Date().toISOString();
    for (const id of ['f-1', 'f-2', 'f-3']) expect((await api('POST', '/tenants', { body: { id, name: id }, key: bot })).status).toBe(201);
    expect((await api('PUT', '/policies/f-pol', { body: { tenant_id: 'f-1' }, key: bot })).status).toBe(201);
    const end = new Date(Date.now() + 1).toISOString();

    const list = async (q: string) => {
      const r = await api('GET', `/audit?${q}`);
      expect(r.status, r.text).toBe(200);
      return r.body as { data: AuditEntry[]; next_cursor: string | null };
    };
    const objects = (p: { data: AuditEntry[] }) => p.data.map((e) => e.object.id);
    expect(objects(await list('actor=filter-bot'))).toEqual(['f-pol', 'f-3', 'f-2', 'f-1']);
    expect(objects(await list(`actor=${key.body.id}`))).toEqual(['f-pol', 'f-3', 'f-2', 'f-1']);
    expect((await list('actor=filter-bot')).data[0]!.actor).toEqual({ kind: 'admin_key', id: key.body.id, name: 'filter-bot' });
    expect(objects(await list('actor=filter-bot&kind=policy'))).toEqual(['f-pol']);
    expect(objects(await list('object_id=f-2'))).toEqual(['f-2']);
    expect(objects(await list('tenant_id=f-1'))).toEqual(['f-pol', 'f-1']);
    expect(objects(await list(`actor=filter-bot&since=${start}&until=${end}`))).toHaveLength(4);
    expect(objects(await list(`actor=filter-bot&until=${start}`))).toEqual([]);

    const first = await list('actor=filter-bot&limit=3');
    expect(objects(first)).toEqual(['f-pol', 'f-3', 'f-2']);
    const second = await list(`actor=filter-bot&limit=3&cursor=${first.next_cursor}`);
    expect(objects(second)).toEqual(['f-1']);
    expect(second.next_cursor).toBeNull();

    expectError(await api('GET', '/audit?kind=widget'), 400, 'validation_failed');
    expectError(await api('GET', '/audit?since=yesterday'), 400, 'validation_failed');
    expectError(await api('GET', '/audit?cursor=garbage'), 400, 'validation_failed', 'cursor');
    expectError(await api('GET', '/audit?colour=blue'), 400, 'validation_failed');
    expectError(await api('GET', '/audit', { key: null }), 401, 'invalid_api_key');
  });

  test("a tenant-scoped key reads its tenant's entries only; an unscoped viewer reads all; a tenant admin's writes name it", async () => {
    for (const id of ['scope-a', 'scope-b']) expect((await api('POST', '/tenants', { body: { id, name: id } })).status).toBe(201);
    expect((await api('PUT', '/policies/scope-global', { body: { tenant_id: null } })).status).toBe(201);
    const keyOf = async (name: string, role: string, tenant_id?: string) => (await api('POST', '/admin-keys', { body: { name, role, tenant_id } })).body;
    const viewerA = await keyOf('scope-a-viewer', 'viewer', 'scope-a');
    const adminA = await keyOf('scope-a-admin', 'tenant_admin', 'scope-a');
    const viewer = await keyOf('scope-viewer', 'viewer');
    const [, e] = await write(201, 'PUT', '/policies/scope-a-pol', { body: { tenant_id: 'scope-a' }, key: adminA.api_key });
    expect(e.actor).toEqual({ kind: 'admin_key', id: adminA.id, name: 'scope-a-admin' });
    expect((await api('PUT', '/policies/scope-b-pol', { body: { tenant_id: 'scope-b' } })).status).toBe(201);

    const seenByA = await entries(viewerA.api_key);
    expect(seenByA.map((x) => `${x.object.kind}:${x.object.id}`).sort()).toEqual(
      ['tenant:scope-a', `admin_key:${viewerA.id}`, `admin_key:${adminA.id}`, 'policy:scope-a-pol'].sort(),
    );
    const scoped = await api('GET', '/audit?tenant_id=scope-a', { key: viewerA.api_key });
    expect(scoped.body.data).toEqual(seenByA);
    expectError(await api('GET', '/audit?tenant_id=scope-b', { key: viewerA.api_key }), 403, 'tenant_forbidden');

    const seenByViewer = await entries(viewer.api_key);
    expect(seenByViewer).toEqual(await entries());
    expect(seenByViewer.map((x) => x.object.id)).toEqual(expect.arrayContaining(['scope-global', 'scope-b-pol', 'scope-a-pol']));
    // Reading the log is a read: a viewer may, and appends nothing.
    expect((await noEntry('GET', '/audit', { key: viewer.api_key })).status).toBe(200);
  });
});
