import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Fn, TerraformLocal, TerraformStack, TerraformVariable, Testing } from 'cdktf';
import { afterAll, describe, expect, it } from 'vitest';
import { Agent, AgentgwProvider, Policy, Tenant } from '../constructs/index.js';
import { CdktfStackError, desiredStateFromCdktf, desiredStateFromStackJson } from './index.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function synth(build: (stack: TerraformStack) => void): Record<string, any> {
  const stack = new TerraformStack(Testing.app(), 'test');
  new AgentgwProvider(stack, 'agentgw');
  build(stack);
  return JSON.parse(Testing.synth(stack));
}

function issues(stack: Record<string, any>): string[] {
  try {
    desiredStateFromStackJson(stack);
  } catch (e) {
    if (e instanceof CdktfStackError) return e.issues.map((i) => `${i.address}: ${i.message}`);
    throw e;
  }
  return [];
}

describe('desiredStateFromCdktf', () => {
  it('reads a synthesized stack dir, and a cdktf.out dir with one stack', async () => {
    const out = mkdtempSync(join(tmpdir(), 'agentgw-synth-'));
    dirs.push(out);
    const app = new App({ outdir: out });
    const stack = new TerraformStack(app, 'only');
    new AgentgwProvider(stack, 'agentgw');
    const t = new Tenant(stack, 'acme', { id: 'acme', name: 'Acme' });
    new Agent(stack, 'bot', { name: 'bot', tenantId: t.id });
    app.synth();
    const expected = { version: 1, tenants: [{ id: 'acme', name: 'Acme' }], policies: [], agents: [{ name: 'bot', tenant_id: 'acme' }], routes: [] };
    expect(await desiredStateFromCdktf(join(out, 'stacks', 'only'))).toEqual(expected);
    expect(await desiredStateFromCdktf(out)).toEqual(expected);
    await expect(desiredStateFromCdktf(join(out, 'nope'))).rejects.toThrow(/cdk\.tf\.json does not exist: run `cdktf synth` first/);
  });

  it('resolves references, string templates, variable defaults and locals', () => {
    const stack = synth((s) => {
      const t = new Tenant(s, 't', { id: 'acme', name: 'Acme', labels: { team: 'support' } });
      const budget = new TerraformVariable(s, 'budget', { type: 'number', default: 10 });
      const suffix = new TerraformLocal(s, 'suffix', 'bot');
      const base = new Policy(s, 'base', { id: 'base', tenantId: t.id, monthlyBudget: 5, allowedModels: ['openai/*'], rules: { pii: 'block', rpm: 5 } });
      const derived = new Policy(s, 'derived', {
        id: `${t.id}-derived`,
        tenantId: t.id,
        monthlyBudget: base.monthlyBudget,
        dailyBudget: budget.numberValue,
        allowedModels: base.allowedModels,
        labels: t.labels,
        rules: { pii: 'redact', rpm: base.rules.rpm },
      });
      new Agent(s, 'a', { name: `support-${suffix.asString}`, tenantId: t.id, policyId: derived.id, labels: { tenant: t.name } });
    });
    const desired = desiredStateFromStackJson(stack);
    expect(desired.policies.find((p) => p.id === 'acme-derived')).toEqual({
      id: 'acme-derived',
      tenant_id: 'acme',
      monthly_budget: 5,
      daily_budget: 10,
      allowed_models: ['openai/*'],
      labels: { team: 'support' },
      rules: { pii: 'redact', rpm: 5 },
    });
    expect(desired.agents).toEqual([{ name: 'support-bot', tenant_id: 'acme', policy_id: 'acme-derived', labels: { tenant: 'Acme' } }]);
  });

  it('reads a reference to an unset attribute as unset', () => {
    const stack = synth((s) => {
      const base = new Policy(s, 'base', { id: 'base' });
      new Policy(s, 'copy', { id: 'copy', dailyBudget: base.dailyBudget });
    });
    expect(desiredStateFromStackJson(stack).policies.find((p) => p.id === 'copy')).toEqual({ id: 'copy' });
  });

  it('names the resource address of values only terraform can know', () => {
    const stack = synth((s) => {
      const t = new Tenant(s, 't', { id: 'acme', name: 'Acme' });
      const a = new Agent(s, 'a', { name: 'a', tenantId: t.id });
      new Agent(s, 'b', { name: Fn.lower('B'), tenantId: t.id });
      new Agent(s, 'c', { name: 'c', tenantId: t.id, labels: { other: a.id } });
    });
    expect(issues(stack)).toEqual([
      'agentgw_agent.b: name ${lower("B")} needs terraform to evaluate; write the value itself or deploy the stack with terraform',
      'agentgw_agent.c: labels refers to agentgw_agent.a.id, which the server assigns on apply: only terraform can resolve it',
    ]);
  });

  it('explains unresolved cdktf tokens', () => {
    const stack = synth((s) => {
      const t = new Tenant(s, 't', { id: 'acme', name: 'Acme' });
      new Agent(s, 'a', { name: 'a', tenantId: t.id });
    });
    stack.resource.agentgw_agent.a.name = '${TfToken[TOKEN.12]}';
    stack.resource.agentgw_tenant.t.labels = { n: -8.10956221259138e298 };
    expect(issues(stack)).toEqual([
      expect.stringMatching(/^agentgw_tenant\.t: labels holds an unresolved cdktf number token/),
      expect.stringMatching(/^agentgw_agent\.a: name holds the unresolved cdktf token \$\{TfToken\[TOKEN\.12\]\}/),
    ]);
  });

  it('validates with the contract and names the resource', () => {
    const stack = synth((s) => {
      new Policy(s, 'p', { id: 'p', tenantId: 'acme' });
    });
    stack.resource.agentgw_policy.p.monthly_budget = -1;
    stack.resource.agentgw_policy.p.rules = { pii: 'loud' };
    expect(issues(stack)).toEqual(['agentgw_policy.p: monthly_budget: must be >= 0', expect.stringMatching(/^agentgw_policy\.p: rules\.pii: /)]);
  });

  it('refuses what agentgw apply cannot manage: other resources, data sources, count, duplicates', () => {
    const stack = synth((s) => {
      new Tenant(s, 'one', { id: 'acme', name: 'Acme' });
      new Tenant(s, 'two', { id: 'acme', name: 'Acme again' });
    });
    stack.resource.aws_s3_bucket = { logs: { bucket: 'x' } };
    stack.data = { http: { ping: { url: 'x' } } };
    stack.resource.agentgw_tenant.one.count = 2;
    expect(issues(stack)).toEqual([
      'aws_s3_bucket.logs: is not an agentgw resource: deploy this stack with terraform instead',
      'data.http.ping: is a data source, which only terraform can read: deploy this stack with terraform instead',
      'agentgw_tenant.one: uses count or for_each, which only terraform can expand: create one construct per object',
    ]);
    delete stack.resource.aws_s3_bucket;
    delete stack.data;
    delete stack.resource.agentgw_tenant.one.count;
    expect(issues(stack)).toEqual(['agentgw_tenant.two: declares tenant acme again (first declared by agentgw_tenant.one)']);
  });

  it('detects reference cycles', () => {
    const stack = synth((s) => {
      new Tenant(s, 't', { id: 'acme', name: 'Acme' });
    });
    stack.locals = { a: '${local.b}', b: '${local.a}' };
    stack.resource.agentgw_tenant.t.name = '${local.a}';
    expect(issues(stack)).toEqual([expect.stringMatching(/^agentgw_tenant\.t: name local\.a refers to itself through a cycle/)]);
  });
});
