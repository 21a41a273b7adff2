import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../../gateway/src/test-support/gateway.js';
import { buildWorkspace, PACKAGE_DIR, REPO_ROOT } from '../test-support/build.js';
import { PROVIDER_ADDRESS } from '../schema/resource-specs.js';

const hasTerraform = spawnSync('terraform', ['version'], { stdio: 'ignore' }).status === 0;

/** The real terraform CLI with the plugin installed through dev_overrides (no registry, no init). */
describe.skipIf(!hasTerraform)('terraform plan/apply/import/destroy through the plugin', () => {
  let gw: TestGateway;
  let work: string;
  let env: NodeJS.ProcessEnv;
  const stackFile = () => join(work, 'stack', 'cdk.tf.json');

  /** Async on purpose: the gateway answers from this same process, so a blocking spawn would starve it. */
  function terraform(...args: string[]): Promise<{ status: number | null; out: string }> {
    return terraformIn('stack', env, ...args);
  }

  function terraformIn(dir: string, environment: NodeJS.ProcessEnv, ...args: string[]): Promise<{ status: number | null; out: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('terraform', [...args, '-no-color'], { cwd: join(work, dir), env: environment });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, out }));
    });
  }

  const admin = async (path: string) =>
    (await fetch(`${gw.adminUrl}${path}`, { headers: { authorization: `Bearer ${gw.adminKey}` } })).json() as Promise<any>;

  beforeAll(async () => {
    buildWorkspace();
    gw = await startTestGateway();
    work = mkdtempSync(join(tmpdir(), 'agentgw-tf-'));
    writeFileSync(
      join(work, 'terraformrc'),
      `provider_installation {\n  dev_overrides {\n    "${PROVIDER_ADDRESS}" = "${join(PACKAGE_DIR, 'bin')}"\n  }\n  direct {}\n}\n`,
    );
    env = {
      ...process.env,
      TF_CLI_CONFIG_FILE: join(work, 'terraformrc'),
      CHECKPOINT_DISABLE: '1',
      TF_IN_AUTOMATION: '1',
      AGENTGW_ADMIN_URL: gw.adminUrl,
      AGENTGW_ADMIN_KEY: gw.adminKey,
    };
    // The example stack, synthesized; its local backend block would need `terraform init`, which dev_overrides skip.
    const { buildApp } = (await import(join(REPO_ROOT, 'examples', 'cdktf', 'main.ts'))) as typeof import('../../../examples/cdktf/main.js');
    buildApp(join(work, 'out')).synth();
    const stack = JSON.parse(readFileSync(join(work, 'out', 'stacks', 'support', 'cdk.tf.json'), 'utf8'));
    delete stack.terraform.backend;
    mkdirSync(join(work, 'stack'));
    writeFileSync(stackFile(), JSON.stringify(stack, null, 2));
  });

  afterAll(async () => {
    await gw?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('applies the example stack, then plans nothing', async () => {
    const apply = await terraform('apply', '-auto-approve', '-input=false');
    expect(apply.out).toContain('Apply complete! Resources: 6 added, 0 changed, 0 destroyed.');
    expect(apply.status).toBe(0);
    expect((await admin('/policies')).data.map((p: { id: string }) => p.id).sort()).toEqual(['initech-research', 'initech-support']);
    expect((await admin('/agents')).data).toHaveLength(3);

    const key = (await terraform('output', '-raw', 'support_bot_key')).out.trim();
    expect(key).toMatch(/^agk_/);
    expect((await fetch(`${gw.baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

    const again = await terraform('plan', '-detailed-exitcode', '-input=false');
    expect(again.out).toContain('No changes.');
    expect(again.status).toBe(0);
  });

  it('plans exactly a changed budget, and applies it in place', async () => {
    writeFileSync(stackFile(), readFileSync(stackFile(), 'utf8').replace('"monthly_budget": 250', '"monthly_budget": 300'));
    const plan = await terraform('plan', '-detailed-exitcode', '-input=false');
    expect(plan.status).toBe(2);
    expect(plan.out).toContain('Plan: 0 to add, 1 to change, 0 to destroy.');
    expect(plan.out).toMatch(/monthly_budget = 250 -> 300/);
    expect((await terraform('apply', '-auto-approve', '-input=false')).status).toBe(0);
    expect((await admin('/policies/initech-support')).monthly_budget).toBe(300);
  });

  it('carries the tenant budget fields, and leaves an operator\'s suspension alone while the agent does not set it', async () => {
    const stack = JSON.parse(readFileSync(stackFile(), 'utf8'));
    stack.resource.agentgw_tenant.initech.monthly_budget = 500;
    writeFileSync(stackFile(), JSON.stringify(stack, null, 2));
    const plan = await terraform('plan', '-detailed-exitcode', '-input=false');
    expect(plan.status).toBe(2);
    expect(plan.out).toMatch(/\+ monthly_budget += 500/);
    expect(plan.out).toContain('Plan: 0 to add, 1 to change, 0 to destroy.');
    expect((await terraform('apply', '-auto-approve', '-input=false')).status).toBe(0);
    expect((await admin('/tenants/initech')).monthly_budget).toBe(500);

    const bot = (await admin('/agents')).data.find((a: { name: string }) => a.name === 'support-bot');
    await fetch(`${gw.adminUrl}/agents/${bot.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ suspended: true }),
    });
    const again = await terraform('plan', '-detailed-exitcode', '-input=false');
    expect(again.out).toContain('No changes.');
    expect(again.status).toBe(0);
    expect((await admin(`/agents/${bot.id}`)).suspended).toBe(true);
  });

  it("carries a policy's tool_rules: applied as written, then no changes, and an edited pattern is one change", async () => {
    const stack = JSON.parse(readFileSync(stackFile(), 'utf8'));
    const rules = [
      { tools: ['Bash', 'shell'], when: { command: ['rm *', '*rm -rf*'], '/edits/0/file_path': ['/etc/*'] }, action: 'deny', reason: 'destructive' },
      { tools: ['Read'], action: 'allow' },
    ];
    stack.resource.agentgw_policy.support_standard.tool_rules = rules;
    writeFileSync(stackFile(), JSON.stringify(stack, null, 2));
    const apply = await terraform('apply', '-auto-approve', '-input=false');
    expect(apply.out).toContain('Apply complete! Resources: 0 added, 1 changed, 0 destroyed.');
    expect((await admin('/policies/initech-support')).tool_rules).toEqual(rules);
    const again = await terraform('plan', '-detailed-exitcode', '-input=false');
    expect(again.out).toContain('No changes.');
    expect(again.status).toBe(0);

    stack.resource.agentgw_policy.support_standard.tool_rules[0].when.command = ['rm -rf *'];
    writeFileSync(stackFile(), JSON.stringify(stack, null, 2));
    const plan = await terraform('plan', '-detailed-exitcode', '-input=false');
    expect(plan.status).toBe(2);
    expect(plan.out).toContain('Plan: 0 to add, 1 to change, 0 to destroy.');
    expect((await terraform('apply', '-auto-approve', '-input=false')).status).toBe(0);
    expect((await admin('/policies/initech-support')).tool_rules[0].when.command).toEqual(['rm -rf *']);
  });

  it('fails plan on a policy_id that neither the configuration nor the gateway has, naming the resource and attribute', async () => {
    mkdirSync(join(work, 'dangling'), { recursive: true });
    const config = {
      terraform: { required_providers: { agentgw: { source: 'agentgw/agentgw' } } },
      provider: { agentgw: [{}] },
      resource: {
        agentgw_policy: { fresh: { id: 'fresh-policy', tenant_id: 'initech' } },
        agentgw_agent: {
          good: { name: 'uses-fresh', tenant_id: 'initech', policy_id: '${agentgw_policy.fresh.id}' },
          bad: { name: 'dangling', tenant_id: 'initech', policy_id: 'no-such-policy' },
        },
      },
    };
    writeFileSync(join(work, 'dangling', 'main.tf.json'), JSON.stringify(config, null, 2));
    const plan = await terraformIn('dangling', env, 'plan', '-input=false');
    expect(plan.status).toBe(1);
    expect(plan.out).toContain('Error: Unknown policy');
    expect(plan.out).toContain('with agentgw_agent.bad');
    expect(plan.out).toMatch(/on main\.tf\.json line \d+, in resource\.agentgw_agent\.bad:\n\s*\d+:\s+"policy_id": "no-such-policy"/);
    expect(plan.out.replace(/\s+/g, ' ')).toContain('policy_id names policy "no-such-policy", which neither this configuration nor the gateway has');
    // one error, once: the agent that refers to the policy planned in the same run is fine
    expect(plan.out.match(/Error: /g)).toHaveLength(1);
    expect((await admin('/policies')).data.map((p: { id: string }) => p.id)).not.toContain('fresh-policy');
  });

  it('fails plan, not apply, on a wrong admin key', async () => {
    const plan = await terraformIn('stack', { ...env, AGENTGW_ADMIN_KEY: 'adk_wrongwrongwrongwrongwrongwrong12' }, 'plan', '-input=false');
    expect(plan.status).toBe(1);
    expect(plan.out).toContain('Error: Admin key refused');
    expect(plan.out).toContain('401 invalid_api_key');
    expect(plan.out.match(/Error: /g)).toHaveLength(1);
  });

  it('imports an agent by tenant/name and finds no difference', async () => {
    expect((await terraform('state', 'rm', 'agentgw_agent.support_triage')).status).toBe(0);
    const imported = await terraform('import', '-input=false', 'agentgw_agent.support_triage', 'initech/support-triage');
    expect(imported.out).toContain('Import successful!');
    expect((await terraform('plan', '-detailed-exitcode', '-input=false')).status).toBe(0);
  });

  it('destroys everything it created', async () => {
    const destroy = await terraform('destroy', '-auto-approve', '-input=false');
    expect(destroy.out).toContain('Destroy complete! Resources: 6 destroyed.');
    expect((await admin('/tenants')).data).toEqual([]);
  });
});
