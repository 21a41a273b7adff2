// One node on SQLite never loads ioredis; a node whose counters are in Redis does. Each case starts the built gateway in
// a process of its own, so that no other test's import of ioredis is counted.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { stringify } from 'yaml';
import { TEST_REDIS_URL } from '../test-support/gateway.js';

const GATEWAY = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const dirs: string[] = [];

/** Starts and closes the built gateway with `config` (in a data folder of its own); whether ioredis was loaded meanwhile. */
function ioredisLoaded(config: Record<string, unknown>): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-redis-client-'));
  dirs.push(dir);
  const configPath = join(dir, 'agentgw.yaml');
  writeFileSync(configPath, stringify({ log_level: 'warn', storage: { kind: 'sqlite', path: join(dir, 'agentgw.db') }, ...config }));
  const script = `
    import { createRequire } from 'node:module';
    const { startServer } = await import(${JSON.stringify(GATEWAY)});
    const server = await startServer({ configPath: ${JSON.stringify(configPath)}, host: '127.0.0.1', port: 0, env: { AGENTGW_ADMIN_KEY: 'adk_${'0'.repeat(32)}' } });
    const loaded = Object.keys(createRequire(${JSON.stringify(configPath)}).cache).some((k) => k.includes('/node_modules/ioredis/'));
    await server.close();
    console.log(JSON.stringify({ loaded }));
  `;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, timeout: 30_000 }, (err, out, stderr) => {
      if (err) return reject(new Error(`the gateway did not start and close: ${stderr || err.message}`));
      resolve((JSON.parse(out.trim().split('\n').pop()!) as { loaded: boolean }).loaded);
    }),
  );
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('ioredis is loaded with the first Redis client', () => {
  test('not by one node on SQLite with counters in memory', async () => {
    expect(await ioredisLoaded({})).toBe(false);
  });

  test('by a node whose counters are in Redis', async () => {
    expect(await ioredisLoaded({ counters: { kind: 'redis', url: TEST_REDIS_URL, prefix: `agentgw-test:redis-client-${process.pid}:` } })).toBe(true);
  });
});
