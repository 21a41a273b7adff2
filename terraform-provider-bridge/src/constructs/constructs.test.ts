import { TerraformStack, Testing } from 'cdktf';
import { describe, expect, it } from 'vitest';
import { Agent, AgentgwProvider, Policy, Tenant } from './index.js';

function stack() {
  return new TerraformStack(Testing.app(), 'test');
}

describe('constructs', () => {
  it('synthesize the contract field names and the references between resources', () => {
    const s = stack();
    new AgentgwProvider(s, 'agentgw', { adminUrl: 'http://127.0.0.1:8080/api' });
    const acme = new Tenant(s, 'acme', { id: 'acme', name: 'Acme Inc.' });
    const standard = new Policy(s, 'standard', {
      id: 'standard',
      tenantId: acme.id,
      monthlyBudget: 250,
      rules: { pii: 'block', piiTypes: ['email'], retryBlock: { maxRepeats: 3, windowSeconds: 300 }, maxCostPerRequest: 0.5 },
    });
    const bot = new Agent(s, 'bot', { name: 'support-bot', tenantId: acme.id, policyId: standard.id });
    const json = JSON.parse(Testing.synth(s));
    expect(json.provider.agentgw).toEqual([{ admin_url: 'http://127.0.0.1:8080/api' }]);
    expect(json.terraform.required_providers.agentgw.source).toBe('registry.terraform.io/agentgw/agentgw');
    expect(json.resource.agentgw_policy.standard).toMatchObject({
      tenant_id: '${agentgw_tenant.acme.id}',
      monthly_budget: 250,
      rules: { pii: 'block', pii_types: ['email'], retry_block: { max_repeats: 3, window_seconds: 300 }, max_cost_per_request: 0.5 },
    });
    expect(json.resource.agentgw_agent.bot).toMatchObject({ policy_id: '${agentgw_policy.standard.id}', tenant_id: '${agentgw_tenant.acme.id}' });
    expect(bot.apiKey).toMatch(/TfToken/);
  });

  it('fail synth on literal values the contract refuses, naming the construct', () => {
    const s = stack();
    new AgentgwProvider(s, 'agentgw');
    new Tenant(s, 'bad', { id: 'Not An Id', name: 'x' });
    new Policy(s, 'neg', { id: 'neg', monthlyBudget: -5 });
    expect(() => Testing.synth(s, true)).toThrow(/test\/bad: id must be lowercase[\s\S]*test\/neg: monthly_budget must be >= 0/);
  });

  it('take every field of the contract, new ones included, with the contract\'s checks', () => {
    const s = stack();
    new AgentgwProvider(s, 'agentgw');
    const t = new Tenant(s, 't', { id: 'acme', name: 'Acme', monthlyBudget: 500, dailyBudget: 20 });
    new Agent(s, 'a', { name: 'bot', tenantId: t.id, suspended: true });
    new Policy(s, 'p', { id: 'p', rules: { piiScope: ['user', 'tools'], clampOutput: true } });
    const json = JSON.parse(Testing.synth(s));
    expect(json.resource.agentgw_tenant.t).toMatchObject({ monthly_budget: 500, daily_budget: 20 });
    expect(json.resource.agentgw_agent.a).toMatchObject({ suspended: true });
    expect(json.resource.agentgw_policy.p.rules).toMatchObject({ pii_scope: ['user', 'tools'], clamp_output: true });

    const bad = stack();
    new AgentgwProvider(bad, 'agentgw');
    new Tenant(bad, 'broke', { id: 'broke', name: 'Broke', monthlyBudget: -1 });
    // @ts-expect-error the contract's enum, not any string
    new Policy(bad, 'loud', { id: 'loud', rules: { pii: 'loud' } });
    expect(() => Testing.synth(bad, true)).toThrow(/test\/broke: monthly_budget must be >= 0[\s\S]*test\/loud: rules\.pii /);
  });

  it('carry a policy\'s tool_rules, argument names and pointers as written, checked as the server checks them', () => {
    const s = stack();
    new AgentgwProvider(s, 'agentgw');
    new Policy(s, 'guard', {
      id: 'guard',
      toolRules: [
        { tools: ['Bash'], when: { command: ['rm *', '*rm -rf*'], '/edits/0/file_path': ['/etc/*'] }, action: 'deny', reason: 'destructive' },
        { tools: ['Read'], action: 'allow' },
      ],
    });
    const json = JSON.parse(Testing.synth(s));
    expect(json.resource.agentgw_policy.guard.tool_rules).toEqual([
      { tools: ['Bash'], when: { command: ['rm *', '*rm -rf*'], '/edits/0/file_path': ['/etc/*'] }, action: 'deny', reason: 'destructive' },
      { tools: ['Read'], action: 'allow' },
    ]);

    const bad = stack();
    new AgentgwProvider(bad, 'agentgw');
    new Policy(bad, 'lookahead', { id: 'lookahead', toolRules: [{ tools: ['Bash'], when: { command: ['re:(?=rm)'] }, action: 'deny' }] });
    expect(() => Testing.synth(bad, true)).toThrow(/test\/lookahead: tool_rules\.0\.when\.command\.0 .*linear-time engine/);
  });

  it('leave references to the server', () => {
    const s = stack();
    new AgentgwProvider(s, 'agentgw');
    const t = new Tenant(s, 't', { id: 'acme', name: 'Acme' });
    new Agent(s, 'a', { name: 'bot', tenantId: t.id, policyId: t.id });
    expect(() => Testing.synth(s, true)).not.toThrow();
  });
});
