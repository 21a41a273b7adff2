import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GEN_DIR, SCHEMA_FILE } from './package-paths.js';
import { renderBindings } from './render-bindings.js';

function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) => {
    const rel = prefix ? `${prefix}/${name}` : name;
    return statSync(join(dir, name)).isDirectory() ? listFiles(join(dir, name), rel) : [rel];
  });
}

describe('generated bindings', () => {
  it('equal what @cdktf/provider-generator makes from the checked-in schema (run npm run gen:bindings -w terraform-provider-bridge)', async () => {
    const fresh = await renderBindings(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')));
    expect(listFiles(GEN_DIR).sort()).toEqual([...fresh.keys()].sort());
    for (const [path, source] of fresh) expect(readFileSync(join(GEN_DIR, path), 'utf8'), path).toBe(source);
  }, 60_000);
});
