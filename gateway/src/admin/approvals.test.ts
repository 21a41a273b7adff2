// The approvals API (CONTRACT: "Tool rules and approvals"): listing with filters and pages, decisions with RBAC, 404 and
// 409, the audit entry of each decision, the OpenAPI document, and approvals.notify_url; on SQLite and PostgreSQL.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Approval } from '../contract/index.js';
import { type AdminCall, adminApi, expectError } from '../test-support/admin-api.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

/** A receiver of approval notices that answers 500 to the first one. */
async function receiver() {
  const bodies: unknown[] = [];
  let calls = 0;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      calls++;
      bodies.push(JSON.parse(text));
      res.writeHead(calls === 1 ? 500 : 204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies, close: () => new Promise((r) => server.close(r)) };
}

describe.each(['sqlite', 'postgres'] as const)('approvals API on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  let hook: Awaited<ReturnType<typeof receiver>>;
  const keys = { viewer: '', adminA: '', adminB: '' };
  let seq = 0;

  beforeAll(async () => {
    hook = await receiver();
    gw = await startTestGateway({ storage, config: { approvals: { timeout_s: 1, notify_url: hook.url } } });
    api = adminApi(gw.adminUrl, gw.adminKey);
    for (const id of ['tenant-a', 'tenant-b']) expect((await api('POST', '/tenants', { body: { id, name: id } })).status).toBe(201);
    const key = async (name: string, role: string, tenant_id?: string) => (await api('POST', '/admin-keys', { body: { name, role, tenant_id } })).body.api_key as string;
    keys.viewer = await key('viewer', 'viewer');
    keys.adminA = await key('admin-a', 'tenant_admin', 'tenant-a');
    keys.adminB = await key('admin-b', 'tenant_admin', 'tenant-b');
  });
  afterAll(async () => {
    await gw?.close();
    await hook?.close();
  });

  /** A pending approval as a holding node writes it (nobody holds it here: it stays pending until decided). */
  async function pending(tenant = 'tenant-a', trace = 'trace-1'): Promise<Approval> {
    const at = new Date(Date.now() + seq++).toISOString();
    return gw.runtime.store.createApproval({
      id: `apr_test${storage}${seq}`,
      tenant_id: tenant,
      agent_id: 'agt_x',
      trace_id: trace,
      request_id: 'req_1',
      tool: 'Bash',
      arguments: { command: 'rm -rf build' },
      call_hash: 'h',
      rule: { policy_id: 'ask', index: 1 },
      reason: 'deletions need a person',
      created_at: at,
      expires_at: new Date(Date.parse(at) + 300_000).toISOString(),
    });
  }

  test('approve: 200 with the approval as decided; a second decision is 409 approval_decided; the audit entry names the actor', async () => {
    const a = await pending();
    const res = await api('POST', `/approvals/${a.id}/approve`, { body: { comment: 'ok by me' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: a.id, status: 'approved', decided_by: 'root', comment: 'ok by me', decided_at: expect.any(String), arguments: { command: 'rm -rf build' } });
    expectError(await api('POST', `/approvals/${a.id}/deny`, { body: {} }), 409, 'approval_decided');
    expectError(await api('POST', `/approvals/${a.id}/approve`), 409, 'approval_decided');
    const audit = (await api('GET', `/audit?kind=approval&object_id=${a.id}`)).body.data;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'approval.approve', actor: { kind: 'admin_key', id: 'root', name: 'root' }, object: { kind: 'approval', id: a.id }, before: { status: 'pending' }, after: { status: 'approved', comment: 'ok by me' } });
  });

  test('deny: 200; unknown id 404 approval_not_found; a body with an unknown field 400', async () => {
    const a = await pending();
    expectError(await api('POST', `/approvals/${a.id}/deny`, { body: { coment: 'typo' } }), 400, 'validation_failed');
    expect((await api('POST', `/approvals/${a.id}/deny`)).body).toMatchObject({ status: 'denied', comment: null });
    expectError(await api('POST', '/approvals/apr_nope/approve'), 404, 'approval_not_found');
    expect((await api('GET', `/audit?kind=approval&object_id=${a.id}`)).body.data[0]).toMatchObject({ action: 'approval.deny' });
  });

  test('RBAC: admin and the tenant_admin of the tenant decide; a viewer or another tenant\'s admin gets 403', async () => {
    const a = await pending('tenant-a');
    expectError(await api('POST', `/approvals/${a.id}/approve`, { key: keys.viewer }), 403, 'insufficient_role');
    expectError(await api('POST', `/approvals/${a.id}/approve`, { key: keys.adminB }), 403, 'tenant_forbidden');
    expect((await api('POST', `/approvals/${a.id}/approve`, { key: keys.adminA })).body).toMatchObject({ status: 'approved', decided_by: 'admin-a' });
    // Listing: a tenant-scoped key sees its tenant's only.
    await pending('tenant-b', 'trace-b');
    const mine = (await api('GET', '/approvals?limit=500', { key: keys.adminA })).body.data as Approval[];
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((x) => x.tenant_id === 'tenant-a')).toBe(true);
    expectError(await api('GET', '/approvals?tenant_id=tenant-b', { key: keys.adminA }), 403, 'tenant_forbidden');
  });

  test('lists newest first, filtered by status, tenant and trace, in pages', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await pending('tenant-b', 'trace-pages')).id);
    const first = await api('GET', '/approvals?trace_id=trace-pages&limit=2');
    expect(first.body.data.map((x: Approval) => x.id)).toEqual([ids[2], ids[1]]);
    const second = await api('GET', `/approvals?trace_id=trace-pages&limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
    await api('POST', `/approvals/${ids[1]}/deny`);
    expect((await api('GET', '/approvals?trace_id=trace-pages&status=denied')).body.data.map((x: Approval) => x.id)).toEqual([ids[1]]);
    expect((await api('GET', '/approvals?tenant_id=tenant-b&status=pending&trace_id=trace-pages')).body.data).toHaveLength(2);
    expectError(await api('GET', '/approvals?status=maybe'), 400, 'validation_failed');
    expectError(await api('GET', '/approvals?cursor=garbage'), 400, 'validation_failed');
  });

  test('a held call times out; then deny is 409 and approve is 200; each new approval is POSTed to notify_url, retried after a 500', async () => {
    const held = await gw.runtime.approvals.hold(
      { tenant_id: 'tenant-a', agent_id: 'agt_x', trace_id: 'trace-t', request_id: 'req_t', tool: 'Bash', arguments: { command: 'rm x' }, call_hash: 'ht', rule: null, reason: null },
      undefined,
    );
    expect(held.status).toBe('timed_out');
    expectError(await api('POST', `/approvals/${held.id}/deny`), 409, 'approval_decided');
    expect((await api('POST', `/approvals/${held.id}/approve`)).body).toMatchObject({ status: 'approved' });
    await (gw.runtime.approvals as unknown as { opts: { notifier: { drain(): Promise<void> } } }).opts.notifier.drain();
    const mine = hook.bodies.filter((b) => (b as { approval: Approval }).approval.id === held.id);
    // The first attempt was answered 500, the retry 204: two deliveries of the same notice.
    expect(mine).toHaveLength(2);
    expect(mine[0]).toEqual(mine[1]);
    expect(mine[0]).toEqual({ approval: expect.objectContaining({ id: held.id, status: 'pending', tool: 'Bash', tenant_id: 'tenant-a' }), console_url: expect.stringContaining(held.id) });
  });

  test('a pending approval long past its expiry (its node stopped while holding it) is swept to abandoned; a fresh one stays', async () => {
    const orphan = await gw.runtime.store.createApproval({
      id: `apr_orphan${storage}`,
      tenant_id: 'tenant-a',
      agent_id: 'agt_x',
      trace_id: 'trace-orphan',
      request_id: 'req_o',
      tool: 'Bash',
      arguments: {},
      call_hash: 'ho',
      rule: null,
      reason: null,
      created_at: new Date(Date.now() - 600_000).toISOString(),
      expires_at: new Date(Date.now() - 300_000).toISOString(),
    });
    const fresh = await pending('tenant-a', 'trace-orphan');
    expect(await gw.runtime.approvals.sweep()).toBeGreaterThanOrEqual(1);
    expect((await gw.runtime.store.getApproval(orphan.id))?.status).toBe('abandoned');
    expect((await gw.runtime.store.getApproval(fresh.id))?.status).toBe('pending');
    expectError(await api('POST', `/approvals/${orphan.id}/approve`), 409, 'approval_decided');
  });

  test('an approval given after the timeout is a pass for the same agent only, once', async () => {
    const held = await gw.runtime.approvals.hold(
      { tenant_id: 'tenant-a', agent_id: 'agt_one', trace_id: 'trace-pass', request_id: 'req_p', tool: 'Bash', arguments: { command: 'rm x' }, call_hash: 'hp', rule: null, reason: null },
      undefined,
    );
    expect(held.status).toBe('timed_out');
    await api('POST', `/approvals/${held.id}/approve`);
    // Another agent naming the same trace id gets nothing; the agent itself gets the pass once.
    expect(await gw.runtime.approvals.takeGrant('tenant-a', 'agt_other', 'trace-pass', 'hp')).toBeNull();
    expect(await gw.runtime.approvals.takeGrant('tenant-a', 'agt_one', 'trace-pass', 'hp')).toBe(held.id);
    expect(await gw.runtime.approvals.takeGrant('tenant-a', 'agt_one', 'trace-pass', 'hp')).toBeNull();
  });

  test('GET /openapi.json lists the approvals routes and schemas', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/approvals', '/approvals/{id}/approve', '/approvals/{id}/deny']));
    expect(doc.components.schemas.Approval).toBeDefined();
  });
});
