import { readFileSync } from 'node:fs';
import { PROVIDER_ADDRESS } from '../schema/resource-specs.js';
import { SCHEMA_FILE } from '../schema/package-paths.js';
import type { TfProviderSchema } from '../schema/terraform-schema-types.js';

let cached: TfProviderSchema | undefined;

/** The checked-in schema/provider-schema.json: the plugin serves exactly what the bindings were generated from. */
export function providerSchema(): TfProviderSchema {
  cached ??= JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')).provider_schemas[PROVIDER_ADDRESS] as TfProviderSchema;
  return cached;
}
