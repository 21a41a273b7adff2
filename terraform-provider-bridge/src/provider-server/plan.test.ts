import { describe, expect, it } from 'vitest';
import { RESOURCE_SPECS } from '../schema/resource-specs.js';
import { UNKNOWN } from './dynamic-value.js';
import { planChange } from './plan.js';
import { providerSchema } from './provider-schema-file.js';

const schema = providerSchema().resource_schemas.agentgw_agent;
const spec = RESOURCE_SPECS.agentgw_agent;
const config = { name: 'bot', tenant_id: 'acme', policy_id: null, labels: null, id: null, key_prefix: null, api_key: null };
const state = { ...config, id: 'agt_1', key_prefix: 'agk_abc', api_key: 'agk_abcdef' };

describe('planChange', () => {
  it('leaves server-assigned attributes unknown on create', () => {
    expect(planChange(schema, spec, null, config)).toEqual({
      planned: { ...config, id: UNKNOWN, key_prefix: UNKNOWN, api_key: UNKNOWN },
      requiresReplace: [],
    });
  });

  it('keeps them on an in-place update', () => {
    expect(planChange(schema, spec, state, { ...state, name: 'bot-2' })).toEqual({ planned: { ...state, name: 'bot-2' }, requiresReplace: [] });
  });

  it('replaces when an immutable attribute changes (or may change)', () => {
    const moved = planChange(schema, spec, state, { ...state, tenant_id: 'other' });
    expect(moved.requiresReplace).toEqual(['tenant_id']);
    expect(moved.planned).toMatchObject({ id: UNKNOWN, api_key: UNKNOWN });
    expect(planChange(schema, spec, state, { ...state, tenant_id: UNKNOWN }).requiresReplace).toEqual(['tenant_id']);
  });

  it('plans a delete as null', () => {
    expect(planChange(schema, spec, state, null)).toEqual({ planned: null, requiresReplace: [] });
  });
});
