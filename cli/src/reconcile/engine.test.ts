import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { describe, expect, it } from 'vitest';
import { AdminApiError } from '../admin-client/errors.js';
import { FakeAdmin } from './__fixtures__/fake-admin.js';
import type { ApplyEvent, ApplyResult } from './apply/events.js';
import { planChanges, reconcile } from './engine.js';
import { exportDeclarative } from './export/export-state.js';
import type { PlanOptions } from './engine.js';

const desired: DeclarativeFile = {
  version: 1,
  tenants: [{ id: 'acme', name: 'Acme' }],
  policies: [{ id: 'std', tenant_id: 'acme', monthly_budget: 250, rules: { pii: 'block' } }],
  agents: [
    { name: 'bot', tenant_id: 'acme', policy_id: 'std' },
    { name: 'helper', tenant_id: 'acme', labels: { team: 'x' } },
  ],
};

async function run(fake: FakeAdmin, file: DeclarativeFile, opts: PlanOptions & { dry: boolean }) {
  const events: ApplyEvent[] = [];
  const gen = reconcile(fake, file, opts);
  let r = await gen.next();
  while (!r.done) {
    events.push(r.value);
    r = await gen.next();
  }
  return { events, result: r.value as ApplyResult };
}

describe('reconcile', () => {
  it('plans without touching the gateway when dry', async () => {
    const fake = new FakeAdmin();
    const { events, result } = await run(fake, desired, { mode: 'sync', dry: true });
    expect(fake.calls).toEqual([]);
    expect(events[0]).toMatchObject({ type: 'plan', changeSet: { summary: { add: 4, change: 0, destroy: 0 } } });
    expect(result.done).toHaveLength(4);
  });

  it('applies in dependency order, labels what it creates, hands out keys once, then plans nothing', async () => {
    const fake = new FakeAdmin();
    const { result, events } = await run(fake, desired, { mode: 'sync', dry: false });
    expect(fake.calls).toEqual(['create tenant acme', 'put policy std', 'create agent acme/bot', 'create agent acme/helper']);
    expect(result.keys).toEqual({ 'acme/bot': 'agk_secret_1', 'acme/helper': 'agk_secret_2' });
    expect(JSON.stringify(events.filter((e) => e.type !== 'end'))).not.toContain('agk_secret');
    expect(fake.tenants.get('acme')?.labels).toEqual({ managed_by: 'agentgw' });
    expect([...fake.agents.values()].map((a) => a.labels)).toEqual([{ managed_by: 'agentgw' }, { team: 'x', managed_by: 'agentgw' }]);
    expect((await planChanges(fake, desired, { mode: 'sync' })).changes).toEqual([]);
  });

  it('keeps the ownership label on updates and leaves unowned objects unowned', async () => {
    const fake = new FakeAdmin();
    await fake.createTenant({ id: 'acme', name: 'Old name' });
    await run(fake, desired, { mode: 'sync', dry: false });
    expect(fake.tenants.get('acme')).toMatchObject({ name: 'Acme', labels: {} });
    await fake.updateTenant('acme', { labels: { managed_by: 'terraform' } });
    await run(fake, { ...desired, tenants: [{ id: 'acme', name: 'Acme', labels: { tier: 'gold' } }] }, { mode: 'sync', dry: false });
    expect(fake.tenants.get('acme')?.labels).toEqual({ tier: 'gold', managed_by: 'terraform' });
    await run(fake, { ...desired, policies: [{ ...desired.policies[0], monthly_budget: 300 }] }, { mode: 'sync', dry: false });
    expect(fake.policies.get('std')).toMatchObject({ monthly_budget: 300, labels: { managed_by: 'agentgw' } });
  });

  it('moves agents off a policy before pruning it', async () => {
    const fake = new FakeAdmin();
    await run(fake, desired, { mode: 'sync', dry: false });
    const next: DeclarativeFile = {
      ...desired,
      policies: [{ id: 'new', tenant_id: 'acme' }],
      agents: [{ name: 'bot', tenant_id: 'acme', policy_id: 'new' }],
    };
    fake.calls = [];
    const { result } = await run(fake, next, { mode: 'sync', prune: true, dry: false });
    expect(result.failed).toBeNull();
    expect(fake.calls).toEqual(['put policy new', 'update agent agt_0000000000000001', 'delete agent agt_0000000000000002', 'delete policy std']);
  });

  it('stops at the first refusal, reports the rest as not done, and a re-run finishes the job', async () => {
    const fake = new FakeAdmin();
    fake.failOn = { call: 'create agent acme/bot', error: new AdminApiError(503, 'maintenance', 'down for a moment') };
    const first = await run(fake, desired, { mode: 'sync', dry: false });
    expect(first.result.done.map((c) => c.id)).toEqual(['acme', 'std']);
    expect(first.result.failed?.change.id).toBe('acme/bot');
    expect(first.result.skipped.map((c) => c.id)).toEqual(['acme/helper']);
    expect(first.events.filter((e) => e.type === 'skipped')).toHaveLength(1);

    fake.failOn = null;
    const second = await run(fake, desired, { mode: 'sync', dry: false });
    expect(second.result.done.map((c) => `${c.op} ${c.id}`)).toEqual(['create acme/bot', 'create acme/helper']);
    expect((await planChanges(fake, desired, { mode: 'sync' })).changes).toEqual([]);
  });

  it('destroys in reverse dependency order', async () => {
    const fake = new FakeAdmin();
    await run(fake, desired, { mode: 'sync', dry: false });
    fake.calls = [];
    const { result } = await run(fake, desired, { mode: 'destroy', dry: false });
    expect(result.failed).toBeNull();
    expect(fake.calls.map((c) => c.split(' ').slice(0, 2).join(' '))).toEqual(['delete agent', 'delete agent', 'delete policy', 'delete tenant']);
    expect(fake.tenants.size + fake.policies.size + fake.agents.size).toBe(0);
  });

  it('exports a file that plans no changes', async () => {
    const fake = new FakeAdmin();
    await run(fake, desired, { mode: 'sync', dry: false });
    const exported = exportDeclarative({
      tenants: await fake.listAllTenants(),
      policies: await fake.listAllPolicies(),
      agents: await fake.listAllAgents(),
    });
    expect(exported.policies).toEqual([{ id: 'std', tenant_id: 'acme', monthly_budget: 250, rules: { pii: 'block' } }]);
    expect(JSON.stringify(exported)).not.toContain('managed_by');
    expect((await planChanges(fake, exported, { mode: 'sync', prune: true })).changes).toEqual([]);
  });
});
