import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA_FILE } from './package-paths.js';
import { buildProviderSchema, renderProviderSchema } from './provider-schema.js';
import { PROVIDER_ADDRESS, RESOURCE_SPECS, RESOURCE_TYPES } from './resource-specs.js';
import type { TfAttribute } from './terraform-schema-types.js';

const provider = buildProviderSchema().provider_schemas[PROVIDER_ADDRESS];

function flatten(attributes: Record<string, TfAttribute>, prefix = ''): Array<[string, TfAttribute]> {
  return Object.entries(attributes).flatMap(([name, a]) => {
    const path = prefix ? `${prefix}.${name}` : name;
    return [[path, a] as [string, TfAttribute], ...(a.nested_type ? flatten(a.nested_type.attributes, path) : [])];
  });
}

describe('provider schema', () => {
  it('equals the checked-in schema/provider-schema.json (run npm run gen:schema -w terraform-provider-bridge)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(renderProviderSchema());
  });

  it('derives required, optional and computed attributes from the contract', () => {
    const attrs = (t: string) => provider.resource_schemas[t].block.attributes;
    expect(attrs('agentgw_tenant').id).toMatchObject({ type: 'string', required: true });
    expect(attrs('agentgw_tenant').labels).toMatchObject({ type: ['map', 'string'], optional: true });
    expect(attrs('agentgw_policy').monthly_budget).toMatchObject({ type: 'number', optional: true });
    const retry = attrs('agentgw_policy').rules.nested_type!.attributes.retry_block;
    expect(retry.nested_type!.attributes.max_repeats).toMatchObject({ type: 'number', required: true });
    // a list of objects, and `pattern or list of patterns` as a list (Terraform has no unions)
    const toolRules = attrs('agentgw_policy').tool_rules;
    expect(toolRules).toMatchObject({ optional: true, nested_type: { nesting_mode: 'list' } });
    expect(toolRules.nested_type!.attributes.when).toMatchObject({ type: ['map', ['list', 'string']], optional: true });
    expect(toolRules.nested_type!.attributes.tools).toMatchObject({ type: ['list', 'string'], required: true });
    const agent = attrs('agentgw_agent');
    expect(agent.id).toEqual(expect.objectContaining({ computed: true }));
    expect(agent.id.optional ?? agent.id.required).toBeUndefined();
    expect(agent.key_prefix).toMatchObject({ computed: true });
    expect(agent.api_key).toMatchObject({ computed: true, sensitive: true });
    expect(provider.provider.block.attributes.admin_key).toMatchObject({ optional: true, sensitive: true });
  });

  it('has an attribute for every field of every kind (cli/src/kinds), nested ones too, and nothing else', () => {
    for (const type of RESOURCE_TYPES) {
      const d = RESOURCE_SPECS[type].kind;
      // into nested objects, and into the objects of a list (a policy's tool_rules: `tool_rules[].tools` is tool_rules.tools)
      const inner = (shape: (typeof d.fields)[number]['shape']): string[] =>
        shape.type === 'object' ? fieldPaths(shape.fields).map((p) => p.replace(/\[\]/g, '')) : shape.type === 'list' ? inner(shape.item) : [];
      const fieldPaths = (fields: typeof d.fields): string[] => fields.flatMap((f) => [f.path, ...inner(f.shape)]);
      const attributes = flatten(provider.resource_schemas[type].block.attributes).map(([p]) => p);
      expect(attributes.sort(), type).toEqual([...fieldPaths(d.fields), ...d.serverFields, ...d.secrets].sort());
      for (const f of d.fields) expect(provider.resource_schemas[type].block.attributes[f.name].required ?? false, `${type}.${f.name}`).toBe(!f.optional);
    }
  });

  it('replaces on the fields the admin API cannot change', () => {
    expect(RESOURCE_SPECS.agentgw_tenant.replaceOn).toEqual(['id']);
    expect(RESOURCE_SPECS.agentgw_agent.replaceOn).toEqual(['tenant_id']);
    expect(RESOURCE_SPECS.agentgw_policy.replaceOn).toEqual(['id', 'tenant_id']);
  });

  it('documents every attribute, and documents no attribute that does not exist', () => {
    for (const type of RESOURCE_TYPES) {
      const paths = flatten(provider.resource_schemas[type].block.attributes);
      for (const [path, a] of paths) expect(a.description, `${type}.${path}`).toBeTruthy();
      const names = new Set(paths.map(([p]) => p));
      for (const documented of Object.keys(RESOURCE_SPECS[type].docs)) expect(names, `${type} docs`).toContain(documented);
    }
  });
});
