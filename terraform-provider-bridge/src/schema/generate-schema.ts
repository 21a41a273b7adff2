import { writeFileSync } from 'node:fs';
import { SCHEMA_FILE } from './package-paths.js';
import { renderProviderSchema } from './provider-schema.js';

// Run as `npm run gen:schema -w terraform-provider-bridge`: rewrites schema/provider-schema.json from the contract.
writeFileSync(SCHEMA_FILE, renderProviderSchema());
console.log(`wrote ${SCHEMA_FILE}`);
