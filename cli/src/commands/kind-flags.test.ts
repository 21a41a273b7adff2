import { Command } from 'commander';
import { PutPolicy } from '@agentgw/gateway/contract';
import { describe, expect, it } from 'vitest';
import { KINDS } from '../kinds/index.js';
import { addKindFlags, kindBody, kindFlags } from './kind-flags.js';

/** Parses argv with the flags a kind's descriptor gives, as `agentgw policies put ID ...` does. */
function parse(args: string[], kind = KINDS.policy, positional = ['id']) {
  const flags = kindFlags(kind, positional);
  const cmd = addKindFlags(new Command('put').exitOverride(), flags, { requireRequired: false });
  cmd.parse(args, { from: 'user' });
  return { body: kindBody(cmd.opts(), flags), help: cmd.helpInformation() };
}

describe('flags read from a kind descriptor', () => {
  it('give policies put one flag per field and rule, with the contract\'s names, and a body the contract accepts', () => {
    const { body } = parse([
      '--tenant', 'acme',
      '--monthly-budget', '250',
      '--daily-budget', 'none',
      '--allowed-models', 'openai/*,anthropic/claude-*',
      '--pii', 'block',
      '--pii-types', 'email,phone',
      '--pii-scope', 'user,tools',
      '--retry-block', '3/300',
      '--max-cost-per-request', '0.5',
      '--rpm', 'none',
      '--clamp-output',
      '--label', 'team=support',
      '--label', 'tier=gold',
    ]);
    expect(body).toEqual({
      tenant_id: 'acme',
      monthly_budget: 250,
      daily_budget: null,
      allowed_models: ['openai/*', 'anthropic/claude-*'],
      rules: { pii: 'block', pii_types: ['email', 'phone'], pii_scope: ['user', 'tools'], retry_block: { max_repeats: 3, window_seconds: 300 }, max_cost_per_request: 0.5, rpm: null, clamp_output: true },
      labels: { team: 'support', tier: 'gold' },
    });
    expect(PutPolicy.safeParse(body).success).toBe(true);
  });

  it('leave out what is not given (PUT keeps it), read "all" as unset for an allow-list, and --no-x as false', () => {
    expect(parse([]).body).toEqual({});
    expect(parse(['--allowed-models', 'all', '--no-clamp-output', '--retry-block', 'none']).body).toEqual({
      allowed_models: null,
      rules: { clamp_output: false, retry_block: null },
    });
  });

  it('refuse a malformed value naming the flag', () => {
    expect(() => parse(['--retry-block', '3'])).toThrow('--retry-block must be MAX_REPEATS/WINDOW_SECONDS such as 3/300, or "none"');
    expect(() => parse(['--monthly-budget', 'lots'])).toThrow('--monthly-budget must be a number (or "none" to clear it), not "lots"');
    expect(() => parse(['--pii', 'loud'])).toThrow(/Allowed choices are off, redact, block/);
  });

  it('give tenants and agents their fields too (tenant budgets, suspension), references named after their kind', () => {
    expect(parse(['--name', 'Acme', '--monthly-budget', '100'], KINDS.tenant).body).toEqual({ name: 'Acme', monthly_budget: 100 });
    const agent = parse(['--tenant', 'acme', '--name', 'bot', '--policy', 'std', '--suspended'], KINDS.agent, []);
    expect(agent.body).toEqual({ tenant_id: 'acme', name: 'bot', policy_id: 'std', suspended: true });
    expect(agent.help).toContain('--policy <id>');
    expect(agent.help).toContain('The policy applied to the agent; unset = none.');
  });
});
