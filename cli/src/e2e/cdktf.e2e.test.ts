import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, serveGateway, type ServedGateway } from './__fixtures__/harness.js';

const STACK = {
  terraform: { required_providers: { agentgw: { source: 'agentgw/agentgw' } } },
  provider: { agentgw: [{}] },
  resource: {
    agentgw_tenant: { cd: { id: 'cdk-tenant', name: 'From CDKTF' } },
    agentgw_policy: { p: { id: 'cdk-policy', tenant_id: '${agentgw_tenant.cd.id}', monthly_budget: 10 } },
    agentgw_agent: { a: { name: 'cdk-bot', tenant_id: '${agentgw_tenant.cd.id}', policy_id: '${agentgw_policy.p.id}' } },
  },
};

// @agentgw/cdktf is loaded from its build output, as the binary does: npm test builds every package first, so a missing build fails here.
describe('--cdktf: desired state from a synthesized CDKTF stack', () => {
  let gw: ServedGateway;
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-cdktf-'));
  writeFileSync(join(dir, 'cdk.tf.json'), JSON.stringify(STACK));

  beforeAll(async () => {
    gw = await serveGateway();
  });
  afterAll(async () => {
    if (gw) await gw.stop();
  });

  it('plans, applies, re-plans nothing and destroys through the same engine', async () => {
    const plan = await runCli(['plan', '--cdktf', dir, '--detailed-exitcode'], gw.env);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('Plan: 3 to add, 0 to change, 0 to destroy.');
    expect((await runCli(['apply', '--cdktf', dir, '--auto-approve'], gw.env)).code).toBe(0);
    expect((await runCli(['plan', '--cdktf', dir, '--detailed-exitcode'], gw.env)).code).toBe(0);
    const destroy = await runCli(['destroy', '--cdktf', dir, '--auto-approve'], gw.env);
    expect(destroy.code).toBe(0);
    expect(destroy.stdout).toContain('Plan: 0 to add, 0 to change, 3 to destroy.');
  });

  it('a reference to nothing is a plan error naming the stack file and the resource address', async () => {
    const bad = mkdtempSync(join(tmpdir(), 'agentgw-cdktf-bad-'));
    const stack = structuredClone(STACK);
    stack.resource.agentgw_agent.a.policy_id = 'no-such-policy';
    writeFileSync(join(bad, 'cdk.tf.json'), JSON.stringify(stack));
    const res = await runCli(['plan', '--cdktf', bad], gw.env);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(
      `Error: ${join(bad, 'cdk.tf.json')}: agentgw_agent.a.policy_id: agent "cdk-tenant/cdk-bot": policy_id names policy "no-such-policy", which neither the file nor the gateway has\n`,
    );
  });

  it('a directory without a synthesized stack is one sentence', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'agentgw-cdktf-empty-'));
    const res = await runCli(['plan', '--cdktf', empty], gw.env);
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/^Error: cannot read the CDKTF app in .*cdk\.tf\.json does not exist/);
  });
});
