import { TerraformStack, Testing } from 'cdktf';
import { describe, expect, it } from 'vitest';
import { desiredStateFromStackJson } from '../synth/index.js';
import { AgentgwProvider, Route } from './index.js';

describe('the Route construct', () => {
  it('synthesizes agentgw_route with the contract field names, and agentgw apply --cdktf reads it back', () => {
    const s = new TerraformStack(Testing.app(), 'test');
    new AgentgwProvider(s, 'agentgw');
    new Route(s, 'team', {
      alias: 'team/*',
      strategy: 'weighted',
      targets: [{ model: 'openai/gpt-4o', weight: 3 }, { model: 'anthropic/claude-sonnet-4-5', priority: 1, rpm: 60 }],
      labels: { team: 'x' },
    });
    const json = JSON.parse(Testing.synth(s));
    expect(json.resource.agentgw_route.team).toEqual({
      alias: 'team/*',
      strategy: 'weighted',
      targets: [{ model: 'openai/gpt-4o', weight: 3 }, { model: 'anthropic/claude-sonnet-4-5', priority: 1, rpm: 60 }],
      labels: { team: 'x' },
    });
    expect(desiredStateFromStackJson(json).routes).toEqual([
      {
        alias: 'team/*',
        strategy: 'weighted',
        targets: [
          { model: 'openai/gpt-4o', weight: 3, priority: 0 },
          { model: 'anthropic/claude-sonnet-4-5', weight: 1, priority: 1, rpm: 60 },
        ],
        labels: { team: 'x' },
      },
    ]);
  });

  it('fails synth on literal values the contract refuses, naming the construct', () => {
    const s = new TerraformStack(Testing.app(), 'test');
    new AgentgwProvider(s, 'agentgw');
    new Route(s, 'bad', { alias: 'has space', strategy: 'fallback', targets: [{ model: 'openai/gpt-4o' }] });
    // @ts-expect-error the contract's enum, not any string
    new Route(s, 'fast', { alias: 'fast', strategy: 'fastest', targets: [{ model: 'openai/gpt-4o' }] });
    new Route(s, 'none', { alias: 'none', strategy: 'fallback', targets: [] });
    expect(() => Testing.synth(s, true)).toThrow(/test\/bad: alias must be a model name[\s\S]*test\/fast: strategy [\s\S]*test\/none: targets must name at least one target/);
  });
});
