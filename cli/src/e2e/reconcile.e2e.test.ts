import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { AdminClient } from '../admin-client/admin-client.js';
import { EXAMPLE, runCli, serveGateway, type ServedGateway } from './__fixtures__/harness.js';

// One gateway for the whole story: each step starts from the state the previous one left.
describe.sequential('agentgw plan/apply/destroy/export against a real server', () => {
  let gw: ServedGateway;
  let admin: AdminClient;
  const file = (name: string) => join(gw.dir, name);
  const cli = (...args: string[]) => runCli(args, gw.env);

  beforeAll(async () => {
    gw = await serveGateway();
    admin = new AdminClient({ baseUrl: gw.adminUrl, adminKey: gw.adminKey });
  });

  afterAll(async () => {
    if (gw) expect(await gw.stop()).toBe(0);
  });

  it('apply creates everything and writes the new keys once, mode 0600', async () => {
    const res = await cli('apply', '-f', EXAMPLE, '--auto-approve', '--keys-out', file('keys.json'));
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Plan: 8 to add, 0 to change, 0 to destroy.');
    expect(res.stdout).toContain('Apply complete: 8 added, 0 changed, 0 destroyed.');
    expect(res.stdout).toContain('Wrote 3 new agent keys to');
    expect(res.stdout).not.toMatch(/agk_/);

    expect(statSync(file('keys.json')).mode & 0o777).toBe(0o600);
    const keys = JSON.parse(readFileSync(file('keys.json'), 'utf8')) as Record<string, string>;
    expect(Object.keys(keys).sort()).toEqual(['acme/research-agent', 'acme/support-bot', 'globex/billing-assistant']);
    for (const k of Object.values(keys)) expect(k).toMatch(/^agk_/);

    const tenants = await admin.listAllTenants();
    expect(tenants.map((t) => [t.id, t.labels.managed_by])).toEqual([
      ['acme', 'agentgw'],
      ['globex', 'agentgw'],
    ]);
    const policy = await admin.getPolicy('support-standard');
    expect(policy).toMatchObject({ tenant_id: 'acme', monthly_budget: 250, rules: { pii: 'block', max_cost_per_request: 0.5 } });
  });

  it('a second apply plans nothing', async () => {
    const plan = await cli('plan', '-f', EXAMPLE, '--detailed-exitcode');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toBe('No changes: the gateway matches the desired state.\nPlan: 0 to add, 0 to change, 0 to destroy.\n');
    const apply = await cli('apply', '-f', EXAMPLE, '--auto-approve');
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain('Plan: 0 to add, 0 to change, 0 to destroy.');
  });

  it('an edited file plans exactly the edit (exit 2), in text and JSON', async () => {
    const edited = readFileSync(EXAMPLE, 'utf8').replace('monthly_budget: 250', 'monthly_budget: 300').replace('labels: { channel: web }', 'labels: { channel: chat }');
    writeFileSync(file('edited.yaml'), edited);
    const plan = await cli('plan', '-f', file('edited.yaml'), '--detailed-exitcode');
    expect(plan.code).toBe(2);
    expect(plan.stdout).toBe(
      [
        '~ update policy support-standard',
        '    monthly_budget: 250 -> 300',
        '~ update agent acme/support-bot',
        '    labels.channel: "web" -> "chat"',
        '',
        'Plan: 0 to add, 2 to change, 0 to destroy.',
        '',
      ].join('\n'),
    );
    const json = await cli('plan', '-f', file('edited.yaml'), '--json');
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc.summary).toEqual({ add: 0, change: 2, destroy: 0 });
    expect(doc.changes[0]).toMatchObject({ op: 'update', kind: 'policy', id: 'support-standard', changes: [{ field: 'monthly_budget', old: 250, new: 300 }] });

    const apply = await cli('apply', '-f', file('edited.yaml'), '--auto-approve', '--json');
    expect(apply.code).toBe(0);
    const result = JSON.parse(apply.stdout);
    expect(result.ok).toBe(true);
    expect(result.results.map((r: { status: string }) => r.status)).toEqual(['done', 'done']);
    expect((await admin.getPolicy('support-standard')).labels).toEqual({ managed_by: 'agentgw' });
  });

  it('--prune deletes only managed objects the file no longer names', async () => {
    const manual = await cli('agents', 'create', '--tenant', 'globex', '--name', 'manual', '--policy', 'globex-default');
    expect(manual.code).toBe(0);
    expect(manual.stdout).toMatch(/API key \(shown once; store it now\): agk_/);
    const manualPolicy = await cli('policies', 'create', 'hand-made', '--tenant', 'acme', '--monthly-budget', '5');
    expect(manualPolicy.code).toBe(0);

    const doc = parse(readFileSync(file('edited.yaml'), 'utf8'));
    doc.agents = doc.agents.filter((a: { name: string }) => a.name !== 'billing-assistant');
    writeFileSync(file('pruned.yaml'), JSON.stringify(doc));

    const withoutPrune = await cli('plan', '-f', file('pruned.yaml'), '--detailed-exitcode');
    expect(withoutPrune.code).toBe(0);

    const apply = await cli('apply', '-f', file('pruned.yaml'), '--auto-approve', '--prune');
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain('- delete agent globex/billing-assistant');
    expect(apply.stdout).toContain('Plan: 0 to add, 0 to change, 1 to destroy.');
    const agents = (await admin.listAllAgents()).map((a) => `${a.tenant_id}/${a.name}`).sort();
    expect(agents).toEqual(['acme/research-agent', 'acme/support-bot', 'globex/manual']);
    expect((await admin.listAllPolicies()).map((p) => p.id)).toContain('hand-made');
  });

  it('export round-trips: applying it back plans no changes, and it holds no key', async () => {
    const res = await cli('export', '-o', file('exported.yaml'));
    expect(res.code).toBe(0);
    const text = readFileSync(file('exported.yaml'), 'utf8');
    expect(text).not.toMatch(/agk_|managed_by|api_key/);
    expect(parse(text).agents).toContainEqual({ name: 'manual', tenant_id: 'globex', policy_id: 'globex-default' });
    const plan = await cli('plan', '-f', file('exported.yaml'), '--prune', '--detailed-exitcode');
    expect(plan.stdout).toContain('No changes');
    expect(plan.code).toBe(0);

    const one = await cli('export', '--tenant', 'globex');
    expect(one.code).toBe(0);
    expect(parse(one.stdout).tenants).toEqual([{ id: 'globex', name: 'Globex Corporation' }]);
  });

  it('destroy removes what the file names, agents first and tenants last', async () => {
    expect((await cli('agents', 'delete', 'globex/manual')).code).toBe(0);
    expect((await cli('policies', 'delete', 'hand-made')).code).toBe(0);
    const res = await cli('destroy', '-f', file('pruned.yaml'), '--auto-approve');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const deletes = res.stdout.split('\n').filter((l) => l.startsWith('- deleted'));
    expect(deletes).toEqual([
      '- deleted agent acme/research-agent',
      '- deleted agent acme/support-bot',
      '- deleted policy globex-default',
      '- deleted policy research',
      '- deleted policy support-standard',
      '- deleted tenant acme',
      '- deleted tenant globex',
    ]);
    expect(await admin.listAllTenants()).toEqual([]);
    expect(await admin.listAllAgents()).toEqual([]);
  });

  it('a refusal mid-apply reports what was done and what was not; a re-run finishes the job', async () => {
    writeFileSync(
      file('partial.yaml'),
      [
        'version: 1',
        'tenants:',
        '  - { id: initech, name: Initech }',
        'agents:',
        '  - { name: a1, tenant_id: initech }',
        '  - { name: a2, tenant_id: initech, policy_id: later }',
        '  - { name: a3, tenant_id: initech }',
      ].join('\n'),
    );
    const first = await cli('apply', '-f', file('partial.yaml'), '--auto-approve', '--keys-out', file('partial-keys.json'));
    expect(first.code).toBe(1);
    expect(first.stdout).toContain('+ created tenant initech\n+ created agent initech/a1\n! failed to create agent initech/a2: ');
    expect(first.stdout).toContain('  not done: create agent initech/a3\n');
    expect(first.stdout).toContain('Apply stopped: 2 done, 1 failed, 1 not done. Fix the cause and run apply again to finish the rest.');
    expect(first.stderr.trim().split('\n')).toHaveLength(1);
    expect(first.stderr).toMatch(/^Error: stopped at "create agent initech\/a2": .*policy_not_found/);
    expect(Object.keys(JSON.parse(readFileSync(file('partial-keys.json'), 'utf8')))).toEqual(['initech/a1']);

    expect((await cli('policies', 'create', 'later', '--tenant', 'initech')).code).toBe(0);
    const second = await cli('apply', '-f', file('partial.yaml'), '--auto-approve', '--keys-out', file('partial-keys.json'));
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Plan: 2 to add, 0 to change, 0 to destroy.');
    expect(Object.keys(JSON.parse(readFileSync(file('partial-keys.json'), 'utf8'))).sort()).toEqual(['initech/a1', 'initech/a2', 'initech/a3']);
    expect((await cli('plan', '-f', file('partial.yaml'), '--detailed-exitcode')).code).toBe(0);
  });

  it('resource commands: list, get, config, maintenance', async () => {
    const tenants = await cli('tenants', 'list', '--json');
    expect(JSON.parse(tenants.stdout).map((t: { id: string }) => t.id)).toEqual(['initech']);
    const list = await cli('agents', 'list', '--tenant', 'initech');
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+TENANT\s+NAME\s+POLICY\s+KEY\s+LABELS$/);
    expect(list.stdout).not.toMatch(/agk_[0-9A-Za-z]{32}/);
    const get = await cli('agents', 'get', 'initech/a2', '--json');
    expect(JSON.parse(get.stdout)).toMatchObject({ name: 'a2', policy_id: 'later', spend: { day: 0 } });
    const rotated = await cli('agents', 'rotate-key', 'initech/a1');
    expect(rotated.stdout).toMatch(/agk_/);
    const config = await cli('config', '--json');
    expect(JSON.parse(config.stdout)).toMatchObject({ storage: { kind: 'sqlite' }, maintenance: { enabled: false } });
    expect((await cli('maintenance', 'on', '--message', 'back soon')).code).toBe(0);
    expect((await admin.getSystemConfig()).maintenance).toMatchObject({ enabled: true, message: 'back soon' });
    expect((await cli('maintenance', 'off')).code).toBe(0);
    expect((await admin.getSystemConfig()).maintenance.enabled).toBe(false);
  });
});
