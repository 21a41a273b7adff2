import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { describe, expect, it } from 'vitest';
import { AdminApiError } from '../admin-client/errors.js';
import { PlanError } from './diff/plan-error.js';
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
  routes: [],
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
      routes: [],
    });
    expect(exported.policies).toEqual([{ id: 'std', tenant_id: 'acme', monthly_budget: 250, rules: { pii: 'block' } }]);
    expect(JSON.stringify(exported)).not.toContain('managed_by');
    expect((await planChanges(fake, exported, { mode: 'sync', prune: true })).changes).toEqual([]);
  });

  it('carries fields the contract added with no code of their own: tenant budgets', async () => {
    const fake = new FakeAdmin();
    const budgeted: DeclarativeFile = { ...desired, tenants: [{ id: 'acme', name: 'Acme', monthly_budget: 100 }] };
    await run(fake, budgeted, { mode: 'sync', dry: false });
    expect(fake.tenants.get('acme')).toMatchObject({ monthly_budget: 100, daily_budget: null });
    expect((await planChanges(fake, budgeted, { mode: 'sync' })).changes).toEqual([]);
    const tighter: DeclarativeFile = { ...desired, tenants: [{ id: 'acme', name: 'Acme', monthly_budget: 50, daily_budget: 3 }] };
    const plan = await planChanges(fake, tighter, { mode: 'sync' });
    expect(plan.changes.map((c) => [c.op, c.id, c.changes])).toEqual([
      [
        'update',
        'acme',
        [
          { field: 'monthly_budget', old: 100, new: 50 },
          { field: 'daily_budget', old: null, new: 3 },
        ],
      ],
    ]);
    fake.calls = [];
    await run(fake, tighter, { mode: 'sync', dry: false });
    expect(fake.tenants.get('acme')).toMatchObject({ monthly_budget: 50, daily_budget: 3 });
    expect(exportDeclarative({ tenants: await fake.listAllTenants(), policies: [], agents: [], routes: [] }).tenants).toEqual([
      { id: 'acme', name: 'Acme', monthly_budget: 50, daily_budget: 3 },
    ]);
  });

  it('leaves an agent\'s suspension alone while the file leaves suspended out (unmanagedWhenAbsent), and manages it when set', async () => {
    const fake = new FakeAdmin();
    await run(fake, desired, { mode: 'sync', dry: false });
    const bot = [...fake.agents.values()].find((a) => a.name === 'bot')!;
    await fake.updateAgent(bot.id, { suspended: true });
    expect((await planChanges(fake, desired, { mode: 'sync' })).changes).toEqual([]);
    // another change to the agent does not lift the suspension either
    const relabelled: DeclarativeFile = { ...desired, agents: [{ ...desired.agents[0], labels: { team: 'y' } }, desired.agents[1]] };
    await run(fake, relabelled, { mode: 'sync', dry: false });
    expect(fake.agents.get(bot.id)).toMatchObject({ suspended: true, labels: { team: 'y', managed_by: 'agentgw' } });

    const resumed: DeclarativeFile = { ...relabelled, agents: [{ ...relabelled.agents[0], suspended: false }, desired.agents[1]] };
    const plan = await planChanges(fake, resumed, { mode: 'sync' });
    expect(plan.changes.map((c) => [c.op, c.id, c.changes])).toEqual([['update', 'acme/bot', [{ field: 'suspended', old: true, new: false }]]]);
    fake.calls = [];
    await run(fake, resumed, { mode: 'sync', dry: false });
    expect(fake.calls).toEqual([`update agent ${bot.id}`]);
    expect(fake.agents.get(bot.id)?.suspended).toBe(false);

    // a new agent created suspended carries it in its create request
    const fresh: DeclarativeFile = { ...resumed, agents: [...resumed.agents, { name: 'paused', tenant_id: 'acme', suspended: true }] };
    await run(fake, fresh, { mode: 'sync', dry: false });
    expect([...fake.agents.values()].find((a) => a.name === 'paused')?.suspended).toBe(true);
  });

  it('refuses a plan whose references neither the file nor the gateway can satisfy, each problem at its object and field', async () => {
    const fake = new FakeAdmin();
    const dangling: DeclarativeFile = {
      ...desired,
      agents: [
        { name: 'bot', tenant_id: 'acme', policy_id: 'missing' },
        { name: 'stray', tenant_id: 'elsewhere' },
      ],
    };
    const err = await planChanges(fake, dangling, { mode: 'sync' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlanError);
    expect((err as PlanError).problems).toEqual([
      {
        message: 'agent "acme/bot": policy_id names policy "missing", which neither the file nor the gateway has',
        site: { kind: 'agent', id: 'acme/bot', field: 'policy_id' },
      },
      {
        message: 'agent "elsewhere/stray": tenant_id names tenant "elsewhere", which neither the file nor the gateway has',
        site: { kind: 'agent', id: 'elsewhere/stray', field: 'tenant_id' },
      },
    ]);
    expect(fake.calls).toEqual([]);
    // what the gateway has counts, even when the listing left it out (a tenant key does not list global policies)
    await fake.putPolicy('missing', {});
    const listed = fake.listAllPolicies.bind(fake);
    fake.listAllPolicies = async (q) => (await listed(q)).filter((p) => p.id !== 'missing');
    await expect(planChanges(fake, { ...dangling, agents: [dangling.agents[0]] }, { mode: 'sync' })).resolves.toMatchObject({ summary: { add: 3 } });
    // destroy needs no references
    await expect(planChanges(fake, dangling, { mode: 'destroy' })).resolves.toMatchObject({ changes: [] });
  });
});
