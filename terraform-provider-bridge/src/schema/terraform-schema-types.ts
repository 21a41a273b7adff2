/** The `terraform providers schema -json` format, as far as this provider uses it. */

export type TfType = 'string' | 'number' | 'bool' | ['list' | 'set' | 'map', TfType];

export interface TfNestedType {
  attributes: Record<string, TfAttribute>;
  /** single: one object (a policy's rules); list: a list of them (a policy's tool_rules). */
  nesting_mode: 'single' | 'list';
}

export interface TfAttribute {
  type?: TfType;
  nested_type?: TfNestedType;
  description?: string;
  description_kind: 'plain';
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
  sensitive?: boolean;
}

export interface TfBlock {
  attributes: Record<string, TfAttribute>;
  description?: string;
  description_kind: 'plain';
}

export interface TfSchema {
  version: number;
  block: TfBlock;
}

export interface TfProviderSchema {
  provider: TfSchema;
  resource_schemas: Record<string, TfSchema>;
  data_source_schemas: Record<string, TfSchema>;
}

export interface TfProviderSchemaFile {
  format_version: '1.0';
  provider_schemas: Record<string, TfProviderSchema>;
}
