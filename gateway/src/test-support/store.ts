import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../storage/open-store.js';
import type { Store, UsageRecord } from '../storage/store.js';
import { TEST_PG_URL, dropSchema } from './pg.js';

export interface TestStore {
  store: Store;
  close(): Promise<void>;
}

/** A migrated store of its own: a fresh SQLite file or a fresh PostgreSQL schema. */
export async function openTestStore(kind: 'sqlite' | 'postgres'): Promise<TestStore> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-store-'));
    const store = await openStore({ kind: 'sqlite', path: join(dir, 'agentgw.db') });
    return {
      store,
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `s_${randomBytes(6).toString('hex')}`;
  const store = await openStore({ kind: 'postgres', url: TEST_PG_URL, schema });
  return {
    store,
    async close() {
      await store.close();
      await dropSchema(schema);
    },
  };
}

/** One usage record with plausible defaults; pass what the test is about. */
export function usageRecord(over: Partial<UsageRecord> & Pick<UsageRecord, 'trace_id' | 'tenant_id' | 'agent_id' | 'started_at'>): UsageRecord {
  return {
    request_id: `req_${randomUUID().replace(/-/g, '')}`,
    model: 'openai/gpt-4o-mini',
    provider: 'openai',
    stream: false,
    status: 'ok',
    http_status: 200,
    error_code: null,
    prompt_tokens: 10,
    completion_tokens: 5,
    cached_tokens: 0,
    reasoning_tokens: 0,
    response_id: null,
    endpoint: 'chat.completions',
    cost: 0.001,
    estimated: false,
    latency_ms: 100,
    ttft_ms: null,
    pii_types: [],
    body: null,
    ...over,
  };
}
