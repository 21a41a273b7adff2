import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ErrorBody } from '../contract/index.js';
import { adminClient } from '../test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { TEST_PG_URL, TEST_REDIS_URL, startTestGateway } from '../test-support/gateway.js';
import { type SpawnedGateway, spawnGateway } from '../test-support/spawn-gateway.js';

// gpt-4o-mini: $0.15 / $0.60 per million; the fake upstream bills ceil(len(messages JSON) / 4) prompt tokens and 7 completion tokens.
const BODY = { model: 'openai/gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] };
const COST_PER_REQUEST = (Math.ceil(JSON.stringify(BODY.messages).length / 4) * 0.15 + 7 * 0.6) / 1e6;
const BUDGET = Number((COST_PER_REQUEST * 50).toFixed(10));
const TOTAL = 500;

let upstream: FakeOpenAI;
beforeAll(async () => {
  upstream = await startFakeOpenAI();
});
afterAll(async () => upstream?.close());

async function fire(baseUrls: string[], key: string): Promise<Map<number, number>> {
  const statuses = await Promise.all(
    Array.from({ length: TOTAL }, (_, i) =>
      fetch(`${baseUrls[i % baseUrls.length]}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(BODY),
      }).then(async (r) => {
        const body = await r.json();
        if (r.status === 429) expect((body as ErrorBody).error.code).toMatch(/^(daily|monthly)_budget_exceeded$/);
        // A node too loaded to hear from Redis within its command timeout fails closed: a refusal, never an overspend.
        if (r.status === 503) expect((body as ErrorBody).error.code).toBe('store_unavailable');
        return r.status;
      }),
    ),
  );
  const counts = new Map<number, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return counts;
}

function checkOutcome(counts: Map<number, number>, spent: number, label: string) {
  const refused = (counts.get(429) ?? 0) + (counts.get(503) ?? 0);
  console.log(`${label}: ${counts.get(200)} answered 200, ${counts.get(429)} answered 429, ${counts.get(503) ?? 0} answered 503, spent $${spent.toFixed(10)} of $${BUDGET}`);
  for (const status of counts.keys()) expect([200, 429, 503]).toContain(status);
  expect(counts.get(429)).toBeGreaterThan(0);
  expect(counts.get(200)! + refused).toBe(TOTAL);
  expect(counts.get(200)!).toBeGreaterThanOrEqual(10);
  expect(refused).toBeGreaterThanOrEqual(TOTAL - 60);
  expect(spent).toBeGreaterThan(0);
  expect(spent).toBeLessThanOrEqual(BUDGET + 1e-12);
}

describe('500 simultaneous requests against a budget that covers about 50', () => {
  test('one process: spend stays within the budget, the rest are 429', async () => {
    const gw = await startTestGateway({ config: { providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk' } } } });
    try {
      const admin = adminClient(gw.adminUrl, gw.adminKey);
      await admin.tenant('acme');
      await admin.policy('tight', { tenant_id: 'acme', monthly_budget: BUDGET, daily_budget: BUDGET });
      const agent = await admin.agent('acme', 'bot', 'tight');
      const counts = await fire([gw.baseUrl], agent.api_key);
      await gw.runtime.dataPlane.usage.flush();
      const usage = await admin.call('GET', '/usage?group_by=agent');
      const recorded = usage.data.find((r: { key: string }) => r.key === agent.id).cost;
      const spend = (await admin.call('GET', `/agents/${agent.id}`)).spend;
      checkOutcome(counts, recorded, 'one process');
      expect(spend.month).toBeCloseTo(recorded, 10);
      expect(counts.get(200)).toBe(usage.data.find((r: { key: string }) => r.key === agent.id).requests - counts.get(429)!);
    } finally {
      await gw.close();
    }
  });

  test('two gateway processes sharing PostgreSQL and Redis', async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const client = new pg.Client({ connectionString: TEST_PG_URL });
    await client.connect();
    await client.query(`create schema "${schema}"`);
    const url = new URL(TEST_PG_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const adminKey = `adk_${randomBytes(16).toString('hex')}`;
    const config = {
      storage: { kind: 'postgres', url: url.toString() },
      counters: { kind: 'redis', url: TEST_REDIS_URL, prefix: `agentgw-test:${schema}:` },
      providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk' } },
    };
    const nodes: SpawnedGateway[] = [];
    try {
      nodes.push(await spawnGateway({ config, env: { AGENTGW_ADMIN_KEY: adminKey } }));
      nodes.push(await spawnGateway({ config, env: { AGENTGW_ADMIN_KEY: adminKey } }));
      const admin = adminClient(nodes[0]!.adminUrl, adminKey);
      await admin.tenant('acme');
      await admin.policy('tight', { tenant_id: 'acme', monthly_budget: BUDGET, daily_budget: BUDGET });
      const agent = await admin.agent('acme', 'bot', 'tight');
      // The second node learns of the new agent through the shared database within a second.
      for (let i = 0; i < 50; i++) {
        const r = await fetch(`${nodes[1]!.baseUrl}/models`, { headers: { authorization: `Bearer ${agent.api_key}` } });
        if (r.status === 200) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      const counts = await fire(
        nodes.map((n) => n.baseUrl),
        agent.api_key,
      );
      // SIGTERM flushes every usage record before the process exits.
      for (const n of nodes) expect(await n.stop()).toBe(0);
      const { rows } = await client.query(`select count(*)::int as n, coalesce(sum(cost), 0) as cost from "${schema}".usage_records where agent_id = $1 and status = 'ok'`, [
        agent.id,
      ]);
      checkOutcome(counts, Number(rows[0].cost), 'two processes');
      expect(rows[0].n).toBe(counts.get(200));
    } finally {
      for (const n of nodes) await n.stop();
      await client.query(`drop schema "${schema}" cascade`);
      await client.end();
    }
  });
});
