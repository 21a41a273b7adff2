#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=8 --heap-growing-percent=50
// The `agentgw` command. This file is committed so that `npm install` links it (node_modules/.bin/agentgw, what
// `npx agentgw` runs) before anything is built; it runs the build output, made by `npm run build` or `npm start`.
// The node flags are the launcher's (README, "Benchmark"); `node cli/dist/bin.js` runs without them.
import { existsSync } from 'node:fs';

const built = new URL('../dist/bin.js', import.meta.url);
if (!existsSync(built)) {
  process.stderr.write('agentgw is not built yet: run `npm run build` (or `npm start`) at the root of the repository first.\n');
  process.exit(1);
}
await import(built.href);
