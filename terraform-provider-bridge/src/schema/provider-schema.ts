import { z } from 'zod';
import { toAttribute, toAttributes, type JsonSchema } from './json-schema-to-terraform.js';
import { PROVIDER_ADDRESS, ProviderConfig, RESOURCE_SPECS, RESOURCE_TYPES, type ResourceSpec } from './resource-specs.js';
import type { TfAttribute, TfProviderSchemaFile, TfSchema } from './terraform-schema-types.js';

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return z.toJSONSchema(schema, { io, unrepresentable: 'any', reused: 'inline' }) as JsonSchema;
}

/** The Terraform schema of one resource: what the user writes, plus what only the server knows (computed). */
export function resourceSchema(spec: ResourceSpec): TfSchema {
  const input = jsonSchema(spec.input, 'input');
  const output = jsonSchema(spec.output, 'output');
  const fallback = (path: string) => spec.kind.describe(path);
  const attributes: Record<string, TfAttribute> = toAttributes(input, input, spec.docs, '', fallback);
  const outputProps = (output.$ref ? output.$defs![output.$ref.replace('#/$defs/', '')] : output).properties ?? {};
  for (const name of Object.keys(outputProps)) {
    if (name in attributes || spec.hidden.includes(name)) continue;
    const { required: _r, optional: _o, ...rest } = toAttribute(outputProps[name], output, {
      docs: spec.docs,
      fallback,
      path: name,
      required: false,
    });
    attributes[name] = { ...rest, computed: true };
  }
  for (const name of spec.sensitive) attributes[name] = { ...attributes[name], sensitive: true };
  const sorted = Object.fromEntries(Object.keys(attributes).sort().map((k) => [k, attributes[k]]));
  return { version: 0, block: { attributes: sorted, description: spec.description, description_kind: 'plain' } };
}

/** The provider block: admin_key is sensitive so that terraform never prints it. */
export function providerConfigSchema(): TfSchema {
  const input = jsonSchema(ProviderConfig, 'input');
  const attributes = toAttributes(input, input, {});
  attributes.admin_key = { ...attributes.admin_key, sensitive: true };
  return {
    version: 0,
    block: { attributes, description: 'The agentgw admin interface to manage.', description_kind: 'plain' },
  };
}

/** The whole `terraform providers schema -json` document of this provider. */
export function buildProviderSchema(): TfProviderSchemaFile {
  return {
    format_version: '1.0',
    provider_schemas: {
      [PROVIDER_ADDRESS]: {
        provider: providerConfigSchema(),
        resource_schemas: Object.fromEntries(RESOURCE_TYPES.map((t) => [t, resourceSchema(RESOURCE_SPECS[t])])),
        data_source_schemas: {},
      },
    },
  };
}

export function renderProviderSchema(): string {
  return `${JSON.stringify(buildProviderSchema(), null, 2)}\n`;
}
