// Three gateway nodes on one database: writes made through every node, concurrently, are each logged once, and every
// node lists the same log.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AuditEntry } from '../contract/index.js';
import { adminApi, type AdminCall, type ApiResponse } from '../test-support/admin-api.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

describe.each(['postgres', 'sqlite'] as const)('audit log of three nodes on one %s database', (storage) => {
  const nodes: TestGateway[] = [];
  const apis: AdminCall[] = [];

  beforeAll(async () => {
    const first = await startTestGateway({ storage });
    nodes.push(first);
    for (let i = 0; i < 2; i++) {
      nodes.push(
        await startTestGateway({
          storage,
          adminKey: first.adminKey,
          pgSchema: first.storage.kind === 'postgres' ? first.storage.schema : undefined,
          sqlitePath: first.storage.kind === 'sqlite' ? first.storage.path : undefined,
        }),
      );
    }
    for (const node of nodes) apis.push(adminApi(node.adminUrl, node.adminKey));
  });
  afterAll(async () => {
    for (const node of nodes.slice(1).reverse()) await node.close();
    await nodes[0]?.close();
  });

  const log = async (api: AdminCall): Promise<AuditEntry[]> => {
    const r = await api('GET', '/audit?limit=500');
    expect(r.status, r.text).toBe(200);
    expect(r.body.next_cursor).toBeNull();
    return r.body.data;
  };

  test('concurrent writes through each node: one entry per write, from every node, listed alike by all', async () => {
    // Each node: a tenant, then at once a policy, an agent, a rename and a suspension of that agent, and maintenance.
    const requestIds: string[] = [];
    const track = (r: ApiResponse, status: number) => {
      expect(r.status, r.text).toBe(status);
      requestIds.push(r.headers.get('x-request-id')!);
      return r;
    };
    await Promise.all(
      apis.map(async (api, i) => {
        const tenant = `node-${i}`;
        track(await api('POST', '/tenants', { body: { id: tenant, name: tenant } }), 201);
        const [, agent] = await Promise.all([
          api('PUT', `/policies/${tenant}-pol`, { body: { tenant_id: tenant, monthly_budget: i + 1 } }).then((r) => track(r, 201)),
          api('POST', '/agents', { body: { tenant_id: tenant, name: 'bot' } }).then((r) => track(r, 201)),
          api('PATCH', `/tenants/${tenant}`, { body: { labels: { node: String(i) } } }).then((r) => track(r, 200)),
        ]);
        track(await api('PATCH', `/agents/${agent.body.id}`, { body: { suspended: true } }), 200);
      }),
    );
    // The same object written through every node at once: each write is one entry, before/after in the order they ran.
    await Promise.all(apis.map(async (api, i) => track(await api('PATCH', '/tenants/node-0', { body: { name: `renamed by node ${i}` } }), 200)));

    const logs = await Promise.all(apis.map(log));
    for (const other of logs.slice(1)) expect(other).toEqual(logs[0]);
    const entries = logs[0]!;
    expect(entries).toHaveLength(requestIds.length);
    expect(entries.map((e) => e.request_id).sort()).toEqual([...requestIds].sort());
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    // Every node's writes are there.
    for (let i = 0; i < nodes.length; i++) {
      const mine = entries.filter((e) => e.object.id.startsWith(`node-${i}`) || (e.after as { tenant_id?: string } | null)?.tenant_id === `node-${i}`);
      expect(mine.map((e) => e.action).sort(), `node ${i}`).toEqual(
        expect.arrayContaining(['agent.create', 'agent.suspend', 'policy.create', 'tenant.create', 'tenant.update']),
      );
    }
    // The three renames of one tenant chain: each one's before is what the one before it left, from the original name.
    const renames = entries.filter((e) => e.object.id === 'node-0' && e.action === 'tenant.update' && String(e.after?.name).startsWith('renamed'));
    expect(renames).toHaveLength(3);
    let name = 'node-0';
    const chained = new Set<AuditEntry>();
    for (let k = 0; k < renames.length; k++) {
      const next = renames.find((e) => e.before?.name === name && !chained.has(e));
      expect(next, `a rename from ${name}`).toBeDefined();
      chained.add(next!);
      name = String(next!.after?.name);
    }
  });
});
