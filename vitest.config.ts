import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { ensureTestClients } from './test-clients/ensure.mjs';

// The real clients the tests drive live in test-clients/ (not in `npm install`): installed there when missing, linked
// into node_modules so the tests resolve them.
ensureTestClients();

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@agentgw\/gateway\/contract$/, replacement: src('./gateway/src/contract/index.ts') },
      { find: /^@agentgw\/gateway$/, replacement: src('./gateway/src/index.ts') },
      { find: /^@agentgw\/cli$/, replacement: src('./cli/src/index.ts') },
    ],
  },
  test: {
    include: ['{gateway,cli,terraform-provider-bridge,bench,examples}/**/*.test.{ts,tsx}'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
