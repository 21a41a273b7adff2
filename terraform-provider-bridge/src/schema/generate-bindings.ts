import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GEN_DIR, SCHEMA_FILE } from './package-paths.js';
import { renderBindings } from './render-bindings.js';

// Run as `npm run gen:bindings -w terraform-provider-bridge`: rewrites src/gen/ from schema/provider-schema.json.
const files = await renderBindings(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')));
rmSync(GEN_DIR, { recursive: true, force: true });
for (const [path, source] of files) {
  mkdirSync(dirname(join(GEN_DIR, path)), { recursive: true });
  writeFileSync(join(GEN_DIR, path), source);
}
console.log(`wrote ${files.size} files to ${GEN_DIR}`);
