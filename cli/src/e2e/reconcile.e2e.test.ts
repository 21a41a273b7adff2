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

  it('a reference to nothing is a plan error at its file and line, printed once; apply changes nothing', async () => {
    writeFileSync(
      file('dangling.yaml'),
      [
        'version: 1',
        'tenants:',
        '  - { id: initech, name: Initech }',
        'agents:',
        '  - { name: a1, tenant_id: initech }',
        '  - name: a2',
        '    tenant_id: initech',
        '    policy_id: later',
        '  - { name: a3, tenant_id: nowhere }',
      ].join('\n'),
    );
    const plan = await cli('plan', '-f', file('dangling.yaml'));
    expect(plan.code).toBe(1);
    expect(plan.stdout).toBe('');
    expect(plan.stderr.split('\n').filter(Boolean)).toEqual([
      `Error: ${file('dangling.yaml')}:8:16: agent "initech/a2": policy_id names policy "later", which neither the file nor the gateway has`,
      `Error: ${file('dangling.yaml')}:9:28: agent "nowhere/a3": tenant_id names tenant "nowhere", which neither the file nor the gateway has`,
    ]);
    const detailed = await cli('plan', '-f', file('dangling.yaml'), '--detailed-exitcode');
    expect(detailed.code).toBe(1);
    const apply = await cli('apply', '-f', file('dangling.yaml'), '--auto-approve');
    expect(apply.code).toBe(1);
    expect(apply.stderr).toBe(plan.stderr);
    expect((await admin.listAllTenants()).map((t) => t.id)).not.toContain('initech');
  });

  it('apply without a terminal shows the plan first; with nothing to change it exits 0 without --auto-approve', async () => {
    writeFileSync(file('small.yaml'), ['version: 1', 'tenants:', '  - { id: initech, name: Initech }', 'agents:', '  - { name: a1, tenant_id: initech }'].join('\n'));
    const refused = await cli('apply', '-f', file('small.yaml'));
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('+ create tenant initech');
    expect(refused.stdout).toContain('Plan: 2 to add, 0 to change, 0 to destroy.');
    expect(refused.stderr).toBe(
      'Error: apply asks for confirmation, but this is not an interactive terminal: pass --auto-approve to apply without asking\n',
    );
    expect((await admin.listAllTenants()).map((t) => t.id)).not.toContain('initech');

    expect((await cli('apply', '-f', file('small.yaml'), '--auto-approve')).code).toBe(0);
    const nothing = await cli('apply', '-f', file('small.yaml'));
    expect(nothing.stderr).toBe('');
    expect(nothing.code).toBe(0);
    expect(nothing.stdout).toBe('No changes: the gateway matches the desired state.\nPlan: 0 to add, 0 to change, 0 to destroy.\n');
    const json = await cli('apply', '-f', file('small.yaml'), '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ summary: { add: 0, change: 0, destroy: 0 }, ok: true });
    const destroy = await cli('destroy', '-f', file('small.yaml'));
    expect(destroy.code).toBe(1);
    expect(destroy.stdout).toContain('Plan: 0 to add, 0 to change, 2 to destroy.');
    expect(destroy.stderr).toContain('pass --auto-approve to destroy without asking');
  });

  it('a refusal mid-apply reports what was done and what was not, once; a re-run finishes the job', async () => {
    const lines = (...extra: string[]) =>
      ['version: 1', 'tenants:', '  - { id: initech, name: Initech }', ...extra, 'agents:', '  - { name: a1, tenant_id: initech }'].join('\n');
    writeFileSync(file('three.yaml'), lines('  - { id: umbrella, name: Umbrella }', '  - { id: zeta, name: Zeta }'));
    expect((await cli('apply', '-f', file('three.yaml'), '--auto-approve')).code).toBe(0);
    // an agent made by hand in a tenant the file will drop: the gateway refuses to delete a tenant that is not empty
    expect((await cli('agents', 'create', '--tenant', 'umbrella', '--name', 'manual')).code).toBe(0);

    writeFileSync(file('one.yaml'), lines().replace('agents:\n', 'agents:\n  - { name: a2, tenant_id: initech }\n'));
    const first = await cli('apply', '-f', file('one.yaml'), '--auto-approve', '--prune', '--keys-out', file('partial-keys.json'));
    expect(first.code).toBe(1);
    expect(first.stdout).toContain('+ created agent initech/a2\n! failed to delete tenant umbrella: ');
    expect(first.stdout).toMatch(/! failed to delete tenant umbrella: .*409 tenant_not_empty/);
    expect(first.stdout).toContain('  not done: delete tenant zeta\n');
    expect(first.stdout).toContain('Apply stopped: 1 done, 1 failed, 1 not done. Fix the cause and run apply again to finish the rest.');
    // the progress said it: stderr does not say it again
    expect(first.stderr).toBe('');
    expect(first.stdout.match(/tenant_not_empty/g)).toHaveLength(1);
    expect(Object.keys(JSON.parse(readFileSync(file('partial-keys.json'), 'utf8')))).toEqual(['initech/a2']);

    const json = await cli('apply', '-f', file('one.yaml'), '--auto-approve', '--prune', '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, results: [{ status: 'failed', error: { code: 'tenant_not_empty' } }, { status: 'not_done' }] });
    expect(json.stderr).toMatch(/^Error: stopped at "delete tenant umbrella": .*tenant_not_empty/);

    expect((await cli('agents', 'delete', 'umbrella/manual')).code).toBe(0);
    const second = await cli('apply', '-f', file('one.yaml'), '--auto-approve', '--prune');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Plan: 0 to add, 0 to change, 2 to destroy.');
    expect((await cli('plan', '-f', file('one.yaml'), '--prune', '--detailed-exitcode')).code).toBe(0);
  });

  it('plan and apply warn, once each, when they change an object another manager owns (labels.managed_by)', async () => {
    const headers = { authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json' };
    const made = await fetch(`${gw.adminUrl}/tenants`, { method: 'POST', headers, body: JSON.stringify({ id: 'tf-owned', name: 'Terraform owned', labels: { managed_by: 'terraform' } }) });
    expect(made.status).toBe(201);
    writeFileSync(file('takeover.yaml'), ['version: 1', 'tenants:', '  - { id: tf-owned, name: Renamed }'].join('\n'));
    const warning = 'Warning: tenant tf-owned is managed by "terraform" (labels.managed_by): this plan changes it, and that manager may change it back; leave it out of the file, or change its label to take it over.';
    const plan = await cli('plan', '-f', file('takeover.yaml'), '--detailed-exitcode');
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('~ update tenant tf-owned');
    expect(plan.stderr.split('\n').filter(Boolean)).toEqual([warning]);
    const apply = await cli('apply', '-f', file('takeover.yaml'), '--auto-approve');
    expect(apply.code).toBe(0);
    expect(apply.stderr.split('\n').filter((l) => l.startsWith('Warning:'))).toEqual([warning]);
    // Applied, nothing is left to change there: no warning; nor for a file of objects apply made.
    expect((await cli('plan', '-f', file('takeover.yaml'))).stderr).toBe('');
    expect((await cli('plan', '-f', EXAMPLE)).stderr).toBe('');
    expect((await fetch(`${gw.adminUrl}/tenants/tf-owned`, { method: 'DELETE', headers })).status).toBe(204);
  });

  it('fields the contract added flow through the file: tenant budgets; an agent\'s suspension is left alone unless the file sets it', async () => {
    const doc = (agent: string) =>
      ['version: 1', 'tenants:', '  - { id: budgets, name: Budgets, monthly_budget: 40, daily_budget: 2 }', 'agents:', `  - ${agent}`].join('\n');
    writeFileSync(file('budgets.yaml'), doc('{ name: worker, tenant_id: budgets }'));
    const apply = await cli('apply', '-f', file('budgets.yaml'), '--auto-approve');
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain('+ create tenant budgets\n    name: "Budgets"\n    monthly_budget: 40\n    daily_budget: 2\n');
    expect(await admin.getTenant('budgets')).toMatchObject({ monthly_budget: 40, daily_budget: 2 });

    expect((await cli('agents', 'suspend', 'budgets/worker')).code).toBe(0);
    const untouched = await cli('plan', '-f', file('budgets.yaml'), '--detailed-exitcode');
    expect(untouched.stdout).toContain('No changes');
    expect(untouched.code).toBe(0);

    writeFileSync(file('budgets.yaml'), doc('{ name: worker, tenant_id: budgets, suspended: false }'));
    const resume = await cli('apply', '-f', file('budgets.yaml'), '--auto-approve');
    expect(resume.stdout).toContain('~ update agent budgets/worker\n    suspended: true -> false\n');
    expect((await admin.listAllAgents({ tenant_id: 'budgets' }))[0].suspended).toBe(false);
    expect(parse((await cli('export', '--tenant', 'budgets')).stdout).tenants).toEqual([{ id: 'budgets', name: 'Budgets', monthly_budget: 40, daily_budget: 2 }]);
    expect((await cli('destroy', '-f', file('budgets.yaml'), '--auto-approve')).code).toBe(0);
  });

  it("a policy's tool_rules flow through the file: applied as written, then no changes; an edited pattern is a change; --tool-rules takes JSON", async () => {
    const doc = (pattern: string) =>
      [
        'version: 1',
        'tenants:',
        '  - { id: guarded, name: Guarded }',
        'policies:',
        '  - id: guarded-dev',
        '    tenant_id: guarded',
        '    tool_rules:',
        `      - { tools: [Bash, shell], when: { command: "${pattern}", "/edits/0/file_path": ["/etc/*", "re:^/root/"] }, action: deny, reason: destructive }`,
        '      - { tools: [Read], action: allow }',
      ].join('\n');
    writeFileSync(file('tools.yaml'), doc('rm *'));
    const apply = await cli('apply', '-f', file('tools.yaml'), '--auto-approve');
    expect(apply.code).toBe(0);
    expect((await admin.getPolicy('guarded-dev')).tool_rules).toEqual([
      { tools: ['Bash', 'shell'], when: { command: 'rm *', '/edits/0/file_path': ['/etc/*', 're:^/root/'] }, action: 'deny', reason: 'destructive' },
      { tools: ['Read'], action: 'allow' },
    ]);
    expect((await cli('plan', '-f', file('tools.yaml'), '--detailed-exitcode')).code).toBe(0);
    writeFileSync(file('tools.yaml'), doc('*rm -rf*'));
    const plan = await cli('plan', '-f', file('tools.yaml'), '--detailed-exitcode');
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('~ update policy guarded-dev');
    writeFileSync(file('bad-tools.yaml'), doc('re:(?=rm)'));
    const bad = await cli('plan', '-f', file('bad-tools.yaml'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/linear-time engine/);
    const put = await cli('policies', 'put', 'guarded-cli', '--tenant', 'guarded', '--tool-rules', '[{"tools":["Write"],"action":"deny"}]');
    expect(put.code, put.stderr).toBe(0);
    expect((await admin.getPolicy('guarded-cli')).tool_rules).toEqual([{ tools: ['Write'], action: 'deny' }]);
    expect((await cli('policies', 'delete', 'guarded-cli')).code).toBe(0);
    expect((await cli('destroy', '-f', file('tools.yaml'), '--auto-approve')).code).toBe(0);
  });

  it('resource commands: list, get, config, maintenance', async () => {
    const tenants = await cli('tenants', 'list', '--json');
    expect(JSON.parse(tenants.stdout).map((t: { id: string }) => t.id)).toEqual(['initech']);
    expect((await cli('policies', 'put', 'later', '--tenant', 'initech', '--pii', 'redact', '--retry-block', '3/300', '--no-clamp-output')).code).toBe(0);
    expect(await admin.getPolicy('later')).toMatchObject({ rules: { pii: 'redact', retry_block: { max_repeats: 3, window_seconds: 300 }, clamp_output: false } });
    expect((await cli('agents', 'create', '--tenant', 'initech', '--name', 'a9', '--policy', 'later')).code).toBe(0);
    const list = await cli('agents', 'list', '--tenant', 'initech');
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+TENANT\s+NAME\s+POLICY\s+KEY\s+LABELS$/);
    expect(list.stdout).not.toMatch(/agk_[0-9A-Za-z]{32}/);
    const get = await cli('agents', 'get', 'initech/a9', '--json');
    expect(JSON.parse(get.stdout)).toMatchObject({ name: 'a9', policy_id: 'later', spend: { day: 0 } });
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
