import { describe, expect, it } from 'vitest';
import { buildProviderSchema } from '../schema/provider-schema.js';
import { PROVIDER_ADDRESS } from '../schema/resource-specs.js';
import { conformObject } from './conform.js';
import { UNKNOWN } from './dynamic-value.js';

const policy = buildProviderSchema().provider_schemas[PROVIDER_ADDRESS]!.resource_schemas.agentgw_policy!.block.attributes;

describe('conformObject: a policy\'s tool_rules (a list nested attribute)', () => {
  it('shapes each rule as the schema says: every attribute present, a single pattern as a list of one', () => {
    const state = conformObject(
      { id: 'p', tool_rules: [{ tools: ['Bash'], when: { command: 'rm *', '/edits/0/file_path': ['/etc/*'] }, action: 'deny' }, { tools: ['Read'], action: 'allow', extra: 1 }] },
      policy,
    )!;
    expect(state.tool_rules).toEqual([
      { tools: ['Bash'], when: { command: ['rm *'], '/edits/0/file_path': ['/etc/*'] }, action: 'deny', reason: null },
      { tools: ['Read'], when: null, action: 'allow', reason: null },
    ]);
    expect(conformObject({ id: 'p' }, policy)!.tool_rules).toBeNull();
    expect(conformObject({ id: 'p', tool_rules: UNKNOWN }, policy)!.tool_rules).toBe(UNKNOWN);
  });
});
