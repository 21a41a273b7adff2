// Routes through the reconcile engine: plan shows them readably, apply writes them, a second plan is empty, export
// carries them, and routes of the server config (source "config") are never changed, deleted, pruned or exported.
import { DeclarativeFile } from '@agentgw/gateway/contract';
import { describe, expect, it } from 'vitest';
import { planLines } from '../ui/lines.js';
import { FakeAdmin } from './__fixtures__/fake-admin.js';
import { PlanError } from './diff/plan-error.js';
import { planChanges, reconcile, type PlanOptions } from './engine.js';
import { exportDeclarative } from './export/export-state.js';

const file = (routes: unknown[]) => DeclarativeFile.parse({ version: 1, routes });

async function apply(fake: FakeAdmin, f: DeclarativeFile, opts: PlanOptions = { mode: 'sync' }) {
  const gen = reconcile(fake, f, { ...opts, dry: false });
  let r = await gen.next();
  while (!r.done) r = await gen.next();
  return r.value;
}

const configRoute = (fake: FakeAdmin) =>
  fake.routes.set('fixed', {
    alias: 'fixed',
    strategy: 'fallback',
    targets: [{ model: 'a/alpha', weight: 1, priority: 0, rpm: null, tpm: null }],
    labels: {},
    source: 'config',
    created_at: null,
    updated_at: null,
  });

describe('routes in the declarative file', () => {
  const desired = file([
    { alias: 'smart', strategy: 'fallback', targets: [{ model: 'a/alpha' }, { model: 'b/beta', priority: 1, rpm: 60 }] },
    { alias: 'team/*', strategy: 'weighted', targets: [{ model: 'a/alpha', weight: 3 }, { model: 'b/beta' }], labels: { team: 'x' } },
  ]);

  it('plans readable creates, applies them with the ownership label, then plans nothing', async () => {
    const fake = new FakeAdmin();
    const plan = await planChanges(fake, desired, { mode: 'sync' });
    expect(plan.summary).toEqual({ add: 2, change: 0, destroy: 0 });
    expect(planLines(plan).map((l) => l.text)).toEqual([
      '+ create route smart',
      '    strategy: "fallback"',
      '    targets: a/alpha, b/beta (priority 1, rpm 60)',
      '+ create route team/*',
      '    strategy: "weighted"',
      '    targets: a/alpha (weight 3), b/beta',
      '    labels.team: "x"',
      '',
      'Plan: 2 to add, 0 to change, 0 to destroy.',
    ]);
    const result = await apply(fake, desired);
    expect(result.failed).toBeNull();
    expect(fake.calls).toEqual(['put route smart', 'put route team/*']);
    expect(fake.routes.get('team/*')).toMatchObject({ labels: { team: 'x', managed_by: 'agentgw' }, targets: [{ model: 'a/alpha', weight: 3, priority: 0, rpm: null, tpm: null }, { model: 'b/beta' }] });
    expect((await planChanges(fake, desired, { mode: 'sync' })).changes).toEqual([]);
  });

  it('an update shows old -> new targets and keeps the strategy it does not change', async () => {
    const fake = new FakeAdmin();
    await apply(fake, desired);
    const next = file([
      { alias: 'smart', strategy: 'fallback', targets: [{ model: 'b/beta', tpm: 1000 }] },
      { alias: 'team/*', strategy: 'weighted', targets: [{ model: 'a/alpha', weight: 3 }, { model: 'b/beta' }], labels: { team: 'x' } },
    ]);
    const plan = await planChanges(fake, next, { mode: 'sync' });
    expect(planLines(plan).map((l) => l.text).slice(0, 2)).toEqual(['~ update route smart', '    targets: a/alpha, b/beta (priority 1, rpm 60) -> b/beta (tpm 1000)']);
    fake.calls = [];
    await apply(fake, next);
    expect(fake.calls).toEqual(['put route smart']);
    expect(fake.routes.get('smart')).toMatchObject({ strategy: 'fallback', targets: [{ model: 'b/beta', tpm: 1000 }], labels: { managed_by: 'agentgw' } });
    expect((await planChanges(fake, next, { mode: 'sync' })).changes).toEqual([]);
  });

  it('export carries stored routes and plans nothing applied back; --prune deletes only managed stored routes', async () => {
    const fake = new FakeAdmin();
    configRoute(fake);
    await apply(fake, desired);
    const exported = exportDeclarative({ tenants: [], policies: [], agents: [], routes: await fake.listAllRoutes() });
    expect(exported.routes).toEqual([
      { alias: 'smart', strategy: 'fallback', targets: [{ model: 'a/alpha', weight: 1, priority: 0, rpm: null, tpm: null }, { model: 'b/beta', weight: 1, priority: 1, rpm: 60, tpm: null }] },
      { alias: 'team/*', strategy: 'weighted', targets: [{ model: 'a/alpha', weight: 3, priority: 0, rpm: null, tpm: null }, { model: 'b/beta', weight: 1, priority: 0, rpm: null, tpm: null }], labels: { team: 'x' } },
    ]);
    expect((await planChanges(fake, DeclarativeFile.parse(exported), { mode: 'sync', prune: true })).changes).toEqual([]);
    fake.calls = [];
    await apply(fake, file([]), { mode: 'sync', prune: true });
    expect(fake.calls.sort()).toEqual(['delete route smart', 'delete route team/*']);
    expect([...fake.routes.keys()]).toEqual(['fixed']);
  });

  it('a route of the server config is never written: naming it as it is plans nothing, changing or destroying it is a plan error', async () => {
    const fake = new FakeAdmin();
    configRoute(fake);
    expect((await planChanges(fake, file([{ alias: 'fixed', strategy: 'fallback', targets: [{ model: 'a/alpha' }] }]), { mode: 'sync', prune: true })).changes).toEqual([]);
    const changed = planChanges(fake, file([{ alias: 'fixed', strategy: 'fallback', targets: [{ model: 'b/beta' }] }]), { mode: 'sync' });
    await expect(changed).rejects.toBeInstanceOf(PlanError);
    await expect(changed).rejects.toThrow(/route "fixed" comes from the server config .* remove it from the file or use another alias/);
    await expect(planChanges(fake, file([{ alias: 'fixed', strategy: 'fallback', targets: [{ model: 'a/alpha' }] }]), { mode: 'destroy' })).rejects.toThrow(/comes from the server config/);
    expect(fake.calls).toEqual([]);
  });

  it("a tenant_admin key's --prune leaves routes and tenants alone; a file that would write one is a plan error", async () => {
    const fake = new FakeAdmin();
    // An admin's run made these, with the ownership label.
    await apply(fake, DeclarativeFile.parse({ version: 1, tenants: [{ id: 'acme', name: 'Acme' }], agents: [{ name: 'old', tenant_id: 'acme' }], routes: [{ alias: 'smart', strategy: 'fallback', targets: [{ model: 'a/alpha' }] }] }));
    fake.role = 'tenant_admin';
    fake.calls = [];
    // The tenant team's file: its agents only.
    const team = DeclarativeFile.parse({ version: 1, agents: [{ name: 'bot', tenant_id: 'acme' }] });
    const plan = await planChanges(fake, team, { mode: 'sync', prune: true });
    expect(plan.changes.map((c) => `${c.op} ${c.kind} ${c.id}`).sort()).toEqual(['create agent acme/bot', 'delete agent acme/old']);
    await apply(fake, team, { mode: 'sync', prune: true });
    expect(fake.calls.sort()).toEqual(['create agent acme/bot', 'delete agent agt_0000000000000001']);
    expect([...fake.routes.keys()]).toEqual(['smart']);
    // Naming them as they are plans nothing; a new route, a changed one or a tenant renamed is refused before any write.
    expect((await planChanges(fake, DeclarativeFile.parse({ ...team, tenants: [{ id: 'acme', name: 'Acme' }] }), { mode: 'sync' })).changes).toEqual([]);
    const refusals: Array<[unknown, RegExp]> = [
      [{ routes: [{ alias: 'fast', strategy: 'fallback', targets: [{ model: 'b/beta' }] }] }, /route "fast" is written by admin keys only, and this key has the tenant_admin role; the file creates it, so remove it from the file or plan and apply it with an admin key/],
      [{ routes: [{ alias: 'smart', strategy: 'fallback', targets: [{ model: 'b/beta' }] }] }, /route "smart" is written by admin keys only.*the file changes it/],
      [{ tenants: [{ id: 'acme', name: 'Acme Corp' }] }, /tenant "acme" is written by admin keys only.*the file changes it/],
      [{ policies: [{ id: 'everyone', monthly_budget: 10 }] }, /policy "everyone" is written by admin keys only.*the file creates it/],
    ];
    for (const [extra, message] of refusals) {
      fake.calls = [];
      const refused = planChanges(fake, DeclarativeFile.parse({ ...team, ...(extra as object) }), { mode: 'sync' });
      await expect(refused).rejects.toBeInstanceOf(PlanError);
      await expect(refused).rejects.toThrow(message);
      expect(fake.calls).toEqual([]);
    }
    // A global policy (not in a tenant key's listings) named as it is plans nothing; changed, it is refused as a change.
    fake.role = 'admin';
    await apply(fake, DeclarativeFile.parse({ version: 1, policies: [{ id: 'everyone', monthly_budget: 10 }] }));
    fake.role = 'tenant_admin';
    fake.calls = [];
    expect((await planChanges(fake, DeclarativeFile.parse({ ...team, policies: [{ id: 'everyone', monthly_budget: 10 }] }), { mode: 'sync' })).changes).toEqual([]);
    await expect(planChanges(fake, DeclarativeFile.parse({ ...team, policies: [{ id: 'everyone', monthly_budget: 20 }] }), { mode: 'sync' })).rejects.toThrow(
      /policy "everyone" is written by admin keys only.*the file changes it/,
    );
    // Another tenant, which this key may not even read, is refused as a create.
    await expect(planChanges(fake, DeclarativeFile.parse({ ...team, tenants: [{ id: 'beta', name: 'Beta' }] }), { mode: 'sync' })).rejects.toThrow(/tenant "beta" is written by admin keys only.*the file creates it/);
    // destroy of a file naming its tenant, a route and a global policy deletes only what the key may delete.
    const destroy = await planChanges(
      fake,
      DeclarativeFile.parse({ ...team, tenants: [{ id: 'acme', name: 'Acme' }], policies: [{ id: 'everyone', monthly_budget: 10 }], routes: [{ alias: 'smart', strategy: 'fallback', targets: [{ model: 'a/alpha' }] }] }),
      { mode: 'destroy' },
    );
    expect(destroy.changes.map((c) => `${c.op} ${c.kind} ${c.id}`)).toEqual(['delete agent acme/bot']);
    expect(fake.calls).toEqual([]);

    // The same file under an admin key plans them.
    fake.role = 'admin';
    expect((await planChanges(fake, DeclarativeFile.parse({ ...team, ...(refusals[0]![0] as object) }), { mode: 'sync' })).summary.add).toBe(1);
  });
});
