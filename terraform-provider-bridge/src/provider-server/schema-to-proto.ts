import type { TfAttribute, TfSchema } from '../schema/terraform-schema-types.js';

/** tfplugin6.Schema.Attribute as @grpc/proto-loader takes it (cty types travel as JSON bytes). */
function attributeMessage(name: string, a: TfAttribute): Record<string, unknown> {
  return {
    name,
    type: a.type ? Buffer.from(JSON.stringify(a.type)) : Buffer.alloc(0),
    nested_type: a.nested_type
      ? { attributes: Object.entries(a.nested_type.attributes).map(([n, v]) => attributeMessage(n, v)), nesting: a.nested_type.nesting_mode === 'list' ? 'LIST' : 'SINGLE' }
      : null,
    description: a.description ?? '',
    description_kind: 'PLAIN',
    required: a.required ?? false,
    optional: a.optional ?? false,
    computed: a.computed ?? false,
    sensitive: a.sensitive ?? false,
  };
}

/** The JSON schema format (`terraform providers schema -json`) as a tfplugin6.Schema message. */
export function schemaMessage(schema: TfSchema): Record<string, unknown> {
  return {
    version: schema.version,
    block: {
      version: schema.version,
      attributes: Object.entries(schema.block.attributes).map(([n, a]) => attributeMessage(n, a)),
      block_types: [],
      description: schema.block.description ?? '',
      description_kind: 'PLAIN',
    },
  };
}
