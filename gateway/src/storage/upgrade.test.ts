import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { Kysely, type MigrationProvider, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { TEST_PG_URL, dropSchema } from '../test-support/pg.js';
import { usageRecord } from '../test-support/store.js';
import { buildMigrations, type StorageKind } from './migrations.js';
import { openStore } from './open-store.js';
import type { Store } from './store.js';

// A database written by the release before trace steps named their endpoint and policies had pii_scope and
// clamp_output: opened by this one, it is migrated at start and reads as that release left it, with the new defaults.
describe('upgrading a database of an earlier release', () => {
  test('usage rows gain endpoint chat.completions and zero cached/reasoning tokens; policies gain the new rules at their defaults', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-upgrade-'));
    const path = join(dir, 'agentgw.db');
    try {
      const old = new Kysely<any>({ dialect: new SqliteDialect({ database: new Sqlite(path) }) });
      const provider: MigrationProvider = { getMigrations: async () => buildMigrations('sqlite') };
      const { error } = await new Migrator({ db: old, provider }).migrateTo('0003_usage_tenant_time');
      expect(error).toBeUndefined();
      const ts = '2026-01-01T00:00:00.000Z';
      await old.insertInto('tenants').values({ id: 'acme', name: 'Acme', labels: '{}', created_at: ts, updated_at: ts }).execute();
      const oldRules = { pii: 'block', pii_types: ['email'], retry_block: null, max_cost_per_request: 1, max_cost_per_trace: null, rpm: null, tpm: null };
      await old
        .insertInto('policies')
        .values({ id: 'p1', tenant_id: 'acme', monthly_budget: 10, daily_budget: null, allowed_models: null, rules: JSON.stringify(oldRules), labels: '{}', created_at: ts, updated_at: ts })
        .execute();
      await old
        .insertInto('usage_records')
        .values({
          request_id: 'req_old', trace_id: 'trace-old', tenant_id: 'acme', agent_id: 'agt_1', model: 'openai/gpt-4o-mini', provider: 'openai',
          stream: 0, status: 'ok', http_status: 200, error_code: null, prompt_tokens: 12, completion_tokens: 3, cost: 0.001, estimated: 0,
          latency_ms: 20, ttft_ms: null, started_at: ts, pii_types: '[]', body: null,
        })
        .execute();
      await old.destroy();

      const store = await openStore({ kind: 'sqlite', path, usageThread: false });
      try {
        const trace = await store.getTrace('trace-old');
        expect(trace?.requests[0]).toMatchObject({ request_id: 'req_old', endpoint: 'chat.completions', cached_tokens: 0, reasoning_tokens: 0, prompt_tokens: 12 });
        const policy = await store.getPolicy('p1');
        expect(policy?.rules).toEqual({ ...oldRules, pii_scope: ['user'], pii_allow: [], clamp_output: false, max_tool_calls_per_trace: null });
        // Policies of the release before MCP allow every tool; their steps name no tool.
        expect(policy?.allowed_tools).toBeNull();
        expect(trace?.requests[0]?.tool).toBeNull();
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A database of the release before stored responses: migrated up to 0004 only, opened by this release afterwards. */
interface OldDatabase {
  db: Kysely<any>;
  open(): Promise<Store>;
  remove(): Promise<void>;
}

async function databaseAt(kind: StorageKind, migration: string): Promise<OldDatabase> {
  const provider: MigrationProvider = { getMigrations: async () => buildMigrations(kind) };
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-upgrade-'));
    const path = join(dir, 'agentgw.db');
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new Sqlite(path) }) });
    expect((await new Migrator({ db, provider }).migrateTo(migration)).error).toBeUndefined();
    return { db, open: () => openStore({ kind, path, usageThread: false }), remove: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `u_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
  await admin.query(`create schema "${schema}"`);
  await admin.end();
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: TEST_PG_URL, options: `-c search_path=${schema}` }) }) });
  expect((await new Migrator({ db, provider, migrationTableSchema: schema }).migrateTo(migration)).error).toBeUndefined();
  return { db, open: () => openStore({ kind, url: TEST_PG_URL, schema }), remove: () => dropSchema(schema) };
}

describe.each(['sqlite', 'postgres'] as const)('upgrading a database of the release before stored responses on %s', (kind) => {
  test('the responses table is created; usage rows written before read response_id null', async () => {
    const old = await databaseAt(kind, '0004_usage_endpoint_tokens');
    try {
      const ts = '2026-02-01T00:00:00.000Z';
      await old.db
        .insertInto('usage_records')
        .values({
          request_id: 'req_before', trace_id: 'trace-before', tenant_id: 'acme', agent_id: 'agt_1', model: 'openai/gpt-4o-mini', provider: 'openai',
          stream: 0, status: 'ok', http_status: 200, error_code: null, prompt_tokens: 12, completion_tokens: 3, cost: 0.001, estimated: 0,
          latency_ms: 20, ttft_ms: null, started_at: ts, pii_types: '[]', body: null, endpoint: 'messages', cached_tokens: 4, reasoning_tokens: 0,
        })
        .execute();
      await old.db.destroy();

      const store = await old.open();
      try {
        await store.insertUsage([usageRecord({ trace_id: 'trace-before', tenant_id: 'acme', agent_id: 'agt_1', started_at: '2026-02-01T00:00:01.000Z', endpoint: 'responses', response_id: 'resp_after' })]);
        const trace = await store.getTrace('trace-before');
        expect(trace?.requests.map((r) => [r.request_id, r.endpoint, r.cached_tokens, r.response_id])).toEqual([
          ['req_before', 'messages', 4, null],
          [expect.any(String), 'responses', 0, 'resp_after'],
        ]);
        const stored = {
          id: 'resp_after', tenant_id: 'acme', agent_id: 'agt_1', trace_id: 'trace-before', request_id: 'req_after', model: 'openai/gpt-5',
          provider_type: 'openai', created_at: '2026-02-01T00:00:01.000Z', input: '[]', response: '{}',
        };
        await store.putResponse(stored);
        expect(await store.getResponse('resp_after')).toEqual(stored);
        expect(await store.sweepResponses('2026-03-01T00:00:00.000Z')).toBe(1);
      } finally {
        await store.close();
      }
    } finally {
      await old.remove();
    }
  });
});

describe.each(['sqlite', 'postgres'] as const)('upgrading a database of the release before trace stops and suspension on %s', (kind) => {
  test('agents written before are not suspended; traces written before are not stopped and can be', async () => {
    const old = await databaseAt(kind, '0005_responses');
    try {
      const ts = '2026-03-01T00:00:00.000Z';
      await old.db.insertInto('tenants').values({ id: 'acme', name: 'Acme', labels: '{}', created_at: ts, updated_at: ts }).execute();
      await old.db
        .insertInto('agents')
        .values({ id: 'agt_0000000000000001', tenant_id: 'acme', name: 'bot', policy_id: null, labels: '{}', key_prefix: 'agk_old', key_hash: 'hash-old', created_at: ts, updated_at: ts })
        .execute();
      await old.db.destroy();

      const store = await old.open();
      try {
        expect(await store.getAgent('agt_0000000000000001')).toMatchObject({ name: 'bot', suspended: false });
        expect((await store.allAgents())[0]).toMatchObject({ key_hash: 'hash-old', suspended: false });
        expect((await store.updateAgent('agt_0000000000000001', { suspended: true }))?.suspended).toBe(true);

        await store.insertUsage([usageRecord({ trace_id: 'trace-before', tenant_id: 'acme', agent_id: 'agt_0000000000000001', started_at: ts })]);
        expect((await store.getTrace('trace-before'))?.stopped).toBeNull();
        await store.stopTrace({ tenant_id: 'acme', trace_id: 'trace-before', reason: null, stopped_at: '2026-03-01T00:01:00.000Z', stopped_by: 'root' });
        expect((await store.getTrace('trace-before'))?.stopped).toEqual({ at: '2026-03-01T00:01:00.000Z', reason: null });
        expect(await store.recentTraceStops(ts, 10)).toEqual([{ tenant_id: 'acme', trace_id: 'trace-before' }]);
      } finally {
        await store.close();
      }
    } finally {
      await old.remove();
    }
  });
});
