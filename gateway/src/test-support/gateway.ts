import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { createRuntime, type Runtime } from '../runtime.js';

import { TEST_PG_URL, dropSchema } from './pg.js';

export { TEST_PG_URL, dropSchema };
export const TEST_REDIS_URL = process.env.AGENTGW_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestGatewayOptions {
  adminKey?: string;
  storage?: 'sqlite' | 'postgres';
  /** Any agentgw.yaml keys (providers, models, prices, counters...). */
  config?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** Share an existing PostgreSQL schema (another gateway's): it is left in place on close. */
  pgSchema?: string;
  /** The PostgreSQL server to use with storage 'postgres' (a test's own cluster); TEST_PG_URL by default. */
  pgUrl?: string;
  /** Share an existing SQLite file (another gateway's): it is left in place on close. */
  sqlitePath?: string;
  /** The port to listen on (a free one when left out): for config that names the gateway's own URL. */
  port?: number;
}

export type TestStorage = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; schema: string };

export interface TestGateway {
  url: string;
  adminUrl: string;
  baseUrl: string;
  adminKey: string;
  app: FastifyInstance;
  runtime: Runtime;
  /** Where this gateway keeps its data, for tests that read the raw tables. */
  storage: TestStorage;
  close(): Promise<void>;
}

/** A real gateway in this process on a free port, with its own SQLite file or PostgreSQL schema. */
export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const adminKey = opts.adminKey ?? `adk_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-test-'));
  const pgSchema = opts.pgSchema ?? `t_${randomBytes(6).toString('hex')}`;
  const sqlitePath = opts.sqlitePath ?? join(dir, 'agentgw.db');
  const pgUrl = opts.pgUrl ?? TEST_PG_URL;
  const storage = opts.storage === 'postgres' ? { kind: 'postgres', url: pgUrl } : { kind: 'sqlite', path: sqlitePath };
  const env = { ...opts.env, AGENTGW_ADMIN_KEY: adminKey };
  const config = loadConfig({ env, overrides: { log_level: 'silent', ...opts.config, storage } });
  const runtime = await createRuntime(config, {
    env,
    pgSchema: opts.storage === 'postgres' ? pgSchema : undefined,
    redisPrefix: `agentgw-test:${pgSchema}:`,
  });
  const app = await buildApp({ services: runtime, logger: false });
  await app.listen({ host: '127.0.0.1', port: opts.port ?? 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url,
    adminUrl: `${url}/api`,
    baseUrl: `${url}/v1`,
    adminKey,
    app,
    runtime,
    storage: opts.storage === 'postgres' ? { kind: 'postgres', url: pgUrl, schema: pgSchema } : { kind: 'sqlite', path: sqlitePath },
    async close() {
      await app.close();
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
      if (opts.storage === 'postgres' && !opts.pgSchema) await dropSchema(pgSchema, pgUrl);
    },
  };
}

/** A port free now on loopback (for a gateway whose config must name its own URL before it starts). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
