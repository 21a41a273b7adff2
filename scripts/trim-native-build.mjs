#!/usr/bin/env node
// Run after `npm install` (the root's postinstall): better-sqlite3 is compiled on this machine when no prebuilt binary
// can be fetched, and node-gyp leaves its intermediate files beside the module it built (a second copy of the SQLite
// source, object files, a static library: about 17 MB of the install). Only build/Release/better_sqlite3.node is
// loaded; `npm rebuild better-sqlite3` makes everything again from deps/, which stays.
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

let dir;
try {
  dir = dirname(createRequire(join(process.cwd(), 'package.json')).resolve('better-sqlite3/package.json'));
} catch {
  process.exit(0); // not installed (an install that left it out): nothing to trim
}
const release = join(dir, 'build', 'Release');
if (existsSync(join(release, 'better_sqlite3.node'))) {
  for (const leftover of ['obj', 'obj.target', '.deps', 'sqlite3.a', 'test_extension.node']) {
    rmSync(join(release, leftover), { recursive: true, force: true });
  }
}
