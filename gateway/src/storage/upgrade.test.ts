import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { Kysely, type MigrationProvider, Migrator, SqliteDialect } from 'kysely';
import { describe, expect, test } from 'vitest';
import { buildMigrations } from './migrations.js';
import { openStore } from './open-store.js';

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
        expect(policy?.rules).toEqual({ ...oldRules, pii_scope: ['user'], clamp_output: false });
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
