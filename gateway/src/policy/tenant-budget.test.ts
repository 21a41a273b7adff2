// CONTRACT "Tenant budgets": one pool shared by every agent of a tenant, reserved with the agent's own budgets in one
// atomic step, so concurrent agents (on one node or several) cannot take the tenant over it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nextUtcDayStart } from '../accounting/budget-window.js';
import { UsageJournal, journalStoreId } from '../accounting/usage-journal.js';
import { adminClient } from '../test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { TEST_REDIS_URL, type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { usageRecord } from '../test-support/store.js';

// gpt-4o-mini: $0.15 / $0.60 per million; the fake upstream bills ceil(len(messages JSON) / 4) prompt tokens and 7 completion tokens.
const BODY = { model: 'openai/gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] };
const COST_PER_REQUEST = (Math.ceil(JSON.stringify(BODY.messages).length / 4) * 0.15 + 7 * 0.6) / 1e6;
/** About 50 requests' worth; each reserves its worst case (10 output tokens), so fewer than 50 pass at once. */
const BUDGET = Number((COST_PER_REQUEST * 50).toFixed(10));
const TOTAL = 500;
const AGENTS = 10;

let upstream: FakeOpenAI;
beforeAll(async () => {
  upstream = await startFakeOpenAI();
});
afterAll(async () => upstream?.close());

const providers = () => ({ openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk' } });

function chat(baseUrl: string, key: string, body: object = BODY): Promise<Response> {
  return fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** A 429 of the tenant's pool, with the headers of every budget 429 (CONTRACT errors table). */
async function expectTenantRefusal(r: Response, code = 'tenant_daily_budget_exceeded'): Promise<void> {
  const body = (await r.json()) as { error: { type: string; code: string; message: string } };
  expect(r.status, JSON.stringify(body)).toBe(429);
  expect(body.error).toMatchObject({ type: 'budget_exceeded', code });
  expect(r.headers.get('x-should-retry')).toBe('false');
  const reset = code === 'tenant_daily_budget_exceeded' ? nextUtcDayStart(new Date()) : new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1));
  expect(r.headers.get('x-agentgw-budget-reset')).toBe(reset.toISOString().replace(/\.\d{3}Z$/, 'Z'));
  const retryAfter = Number(r.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(Math.abs(retryAfter - (reset.getTime() - Date.now()) / 1000)).toBeLessThan(60);
}

/**
 * 500 requests at once, spread over the agents' keys and the nodes. A 503 can only be store_unavailable: Redis commands
 * give up after 250 ms, which a loaded test machine can exceed, and budgets then fail closed (never open).
 */
async function flood(baseUrls: string[], keys: string[]): Promise<Map<number, number>> {
  const statuses = await Promise.all(
    Array.from({ length: TOTAL }, async (_, i) => {
      const r = await chat(baseUrls[i % baseUrls.length]!, keys[i % keys.length]!);
      if (r.status === 429) await expectTenantRefusal(r);
      else if (r.status === 503) expect(((await r.json()) as { error: { code: string } }).error.code).toBe('store_unavailable');
      else await r.arrayBuffer();
      return r.status;
    }),
  );
  const counts = new Map<number, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return counts;
}

/** `failClosed`: 503 store_unavailable answers are allowed (counters on Redis), as refusals. */
function checkOutcome(counts: Map<number, number>, recorded: number, label: string, failClosed = false): void {
  console.log(
    `${label}: ${TOTAL} requests from ${AGENTS} agents of one tenant: ${counts.get(200)} answered 200, ${counts.get(429)} answered 429 ` +
      `(tenant_daily_budget_exceeded)${counts.has(503) ? `, ${counts.get(503)} answered 503 (store_unavailable)` : ''}, ` +
      `tenant spent $${recorded.toFixed(10)} of its $${BUDGET}`,
  );
  expect([...counts.keys()].filter((s) => !(failClosed && s === 503)).sort()).toEqual([200, 429]);
  expect(counts.get(200)! + counts.get(429)! + (counts.get(503) ?? 0)).toBe(TOTAL);
  expect(counts.get(200)!).toBeGreaterThanOrEqual(10);
  expect(counts.get(429)! + (counts.get(503) ?? 0)).toBeGreaterThanOrEqual(TOTAL - 60);
  expect(recorded).toBeGreaterThan(0);
  expect(recorded).toBeLessThanOrEqual(BUDGET + 1e-12);
}

/** One request on Redis counters, asked again while a loaded machine makes Redis time out (503 store_unavailable). */
async function chatOnRedis(baseUrl: string, key: string): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const r = await chat(baseUrl, key);
    if (r.status !== 503 || attempt >= 4) return r;
    await r.arrayBuffer();
    await new Promise((res) => setTimeout(res, 1_200));
  }
}

/** A tenant with a daily pool and AGENTS agents without any policy: the tenant's budget is their only limit. */
async function tenantWithAgents(admin: ReturnType<typeof adminClient>, id: string, budgets: Record<string, unknown>, n = AGENTS) {
  await admin.call('POST', '/tenants', { id, name: id, ...budgets });
  const agents: Array<{ id: string; api_key: string }> = [];
  for (let i = 0; i < n; i++) agents.push(await admin.agent(id, `bot-${i}`));
  return agents;
}

async function recordedCost(admin: ReturnType<typeof adminClient>, tenantId: string): Promise<{ cost: number; requests: number }> {
  const usage = await admin.call('GET', `/usage?group_by=tenant&tenant_id=${tenantId}`);
  const row = usage.data.find((r: { key: string }) => r.key === tenantId);
  return { cost: row?.cost ?? 0, requests: row?.requests ?? 0 };
}

describe('a tenant budget on one node (SQLite, memory counters)', () => {
  let gw: TestGateway;
  let admin: ReturnType<typeof adminClient>;
  beforeAll(async () => {
    gw = await startTestGateway({ config: { providers: providers() } });
    admin = adminClient(gw.adminUrl, gw.adminKey);
  });
  afterAll(async () => gw?.close());

  test('500 concurrent requests from 10 agents never take the tenant over its budget; the rest are 429 tenant_daily_budget_exceeded', async () => {
    const agents = await tenantWithAgents(admin, 'acme', { daily_budget: BUDGET });
    const counts = await flood([gw.baseUrl], agents.map((a) => a.api_key));
    await gw.runtime.dataPlane.usage.flush();
    const { cost, requests } = await recordedCost(admin, 'acme');
    checkOutcome(counts, cost, 'one node');
    expect(requests).toBe(TOTAL);
    const tenant = await admin.call('GET', '/tenants/acme');
    expect(tenant.spend.day).toBeCloseTo(cost, 10);
    expect(tenant.spend.daily_limit).toBe(BUDGET);
    // The pool is the tenant's: every agent of it is refused now, another tenant's agent is not.
    await expectTenantRefusal(await chat(gw.baseUrl, agents[7]!.api_key));
    const [other] = await tenantWithAgents(admin, 'globex', { daily_budget: BUDGET }, 1);
    expect((await chat(gw.baseUrl, other!.api_key)).status).toBe(200);
  });

  test("applies with no agent policy, after the agent's own budget; an unpriced model is 403 price_unknown only when a budget applies", async () => {
    const [free] = await tenantWithAgents(admin, 'unbudgeted', {}, 1);
    const [capped] = await tenantWithAgents(admin, 'capped', { monthly_budget: 5 }, 1);
    const unpriced = { ...BODY, model: 'openai/some-unpriced-model' };
    expect((await chat(gw.baseUrl, free!.api_key, unpriced)).status).toBe(200);
    const refused = await chat(gw.baseUrl, capped!.api_key, unpriced);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('price_unknown');
    expect((await chat(gw.baseUrl, capped!.api_key)).status).toBe(200);
    // The agent's own budget is checked first (CONTRACT decision order).
    await admin.policy('spent-agent', { tenant_id: 'capped', daily_budget: 0 });
    await admin.call('PATCH', '/tenants/capped', { daily_budget: 0 });
    const agent = await admin.agent('capped', 'own-budget', 'spent-agent');
    const r = await chat(gw.baseUrl, agent.api_key);
    expect(r.status).toBe(429);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('daily_budget_exceeded');
    await expectTenantRefusal(await chat(gw.baseUrl, capped!.api_key));
  });

  test('a monthly budget alone is monthly / days in the month a day; past the month it is tenant_monthly_budget_exceeded', async () => {
    // Under one request's worst case a day, over it a month.
    const [agent] = await tenantWithAgents(admin, 'monthly-only', { monthly_budget: 0.0001 }, 1);
    await expectTenantRefusal(await chat(gw.baseUrl, agent!.api_key), 'tenant_daily_budget_exceeded');
    await admin.call('PATCH', '/tenants/monthly-only', { daily_budget: 1, monthly_budget: 0.000001 });
    await expectTenantRefusal(await chat(gw.baseUrl, agent!.api_key), 'tenant_monthly_budget_exceeded');
    await admin.call('PATCH', '/tenants/monthly-only', { monthly_budget: null });
    expect((await chat(gw.baseUrl, agent!.api_key)).status).toBe(200);
  });
});

describe('tenant spend after a restart', () => {
  test('is seeded from the usage rows at start, those the usage journal replays included, and still enforced', async () => {
    const own = mkdtempSync(join(tmpdir(), 'agentgw-tenant-seed-'));
    const sqlitePath = join(own, 'agentgw.db');
    try {
      const first = await startTestGateway({ sqlitePath, config: { providers: providers() } });
      const admin = adminClient(first.adminUrl, first.adminKey);
      const agents = await tenantWithAgents(admin, 'acme', { daily_budget: 5, monthly_budget: 50 }, 2);
      for (const a of agents) expect((await chat(first.baseUrl, a.api_key)).status).toBe(200);
      await first.runtime.dataPlane.usage.flush();
      const before = (await admin.call('GET', '/tenants/acme')).spend;
      expect(before.day).toBeCloseTo(2 * COST_PER_REQUEST, 10);
      const storeId = await journalStoreId(first.runtime.store);
      await first.close();
      // A node killed after answering: its rows are in its journal, not in the database.
      const killed = UsageJournal.open({ dir: own, storeId });
      const now = new Date().toISOString();
      for (const [i, cost] of [1.25, 2.5].entries()) killed.append(usageRecord({ agent_id: agents[i]!.id, tenant_id: 'acme', trace_id: 'crashed', started_at: now, cost }));
      await killed.written();
      killed.abandon();

      const second = await startTestGateway({ sqlitePath, adminKey: first.adminKey, config: { providers: providers() } });
      try {
        const api = adminClient(second.adminUrl, second.adminKey);
        const { spend } = await api.call('GET', '/tenants/acme');
        expect(spend.day).toBeCloseTo(before.day + 3.75, 9);
        expect(spend.month).toBeCloseTo(before.month + 3.75, 9);
        // The restored spend counts against the pool: a limit just under it refuses, one a few requests above it admits.
        await api.call('PATCH', '/tenants/acme', { daily_budget: 3.75 + 1.5 * COST_PER_REQUEST });
        expect((await chat(second.baseUrl, agents[0]!.api_key)).status).toBe(429);
        await api.call('PATCH', '/tenants/acme', { daily_budget: 3.75 + 10 * COST_PER_REQUEST });
        expect((await chat(second.baseUrl, agents[1]!.api_key)).status).toBe(200);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe('a tenant budget on 3 nodes sharing PostgreSQL and Redis', () => {
  const nodes: TestGateway[] = [];
  let prefix = '';
  afterAll(async () => {
    for (const n of nodes.reverse()) await n.close();
    // Only this test's own keys: the shared Redis is never flushed.
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const keys = await redis.keys(`${prefix}*`);
      if (prefix && keys.length) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  });

  test('500 concurrent requests from 10 agents over 3 nodes stay within the pool; a budget change holds on every node at the next request', async () => {
    const config = { providers: providers(), counters: { kind: 'redis', url: TEST_REDIS_URL } };
    // One fresh schema and Redis prefix (named after it) for the three; the first node creates the schema and drops it last.
    nodes.push(await startTestGateway({ storage: 'postgres', config }));
    const { schema } = nodes[0]!.storage as { schema: string };
    prefix = `agentgw-test:${schema}:`;
    for (let i = 0; i < 2; i++) nodes.push(await startTestGateway({ storage: 'postgres', pgSchema: schema, adminKey: nodes[0]!.adminKey, config }));
    expect(nodes.map((n) => n.runtime.countersKind)).toEqual(['redis', 'redis', 'redis']);
    const admin = adminClient(nodes[0]!.adminUrl, nodes[0]!.adminKey);
    const agents = await tenantWithAgents(admin, 'acme', { daily_budget: BUDGET });
    // A node's first model call does one-off work (its event loop then stalls past the 250 ms Redis timeout): done before.
    const [warm] = await tenantWithAgents(admin, 'warm-up', {}, 1);
    for (const n of nodes) expect((await chatOnRedis(n.baseUrl, warm!.api_key)).status).toBe(200);

    const counts = await flood(
      nodes.map((n) => n.baseUrl),
      agents.map((a) => a.api_key),
    );
    for (const n of nodes) await n.runtime.dataPlane.usage.flush();
    // After 503s the counters' circuit breaker stays open for its cooldown (1 s): what follows waits it out.
    if (counts.has(503)) await new Promise((r) => setTimeout(r, 1_500));
    const { cost, requests } = await recordedCost(admin, 'acme');
    checkOutcome(counts, cost, '3 nodes', true);
    expect(requests).toBe(TOTAL);
    for (const n of nodes) {
      const { spend } = await adminClient(n.adminUrl, n.adminKey).call('GET', '/tenants/acme');
      // A settle refused while Redis did not answer in time is in the usage rows only (brought back later): never more.
      if (counts.has(503)) expect(spend.day).toBeLessThanOrEqual(cost + 1e-12);
      else expect(spend.day).toBeCloseTo(cost, 10);
    }

    // Raised on one node: the next request on another passes; lowered to 0 on a third: the next is refused everywhere.
    await adminClient(nodes[1]!.adminUrl, nodes[1]!.adminKey).call('PATCH', '/tenants/acme', { daily_budget: BUDGET * 10 });
    expect((await chatOnRedis(nodes[2]!.baseUrl, agents[3]!.api_key)).status).toBe(200);
    await adminClient(nodes[2]!.adminUrl, nodes[2]!.adminKey).call('PATCH', '/tenants/acme', { daily_budget: 0 });
    await expectTenantRefusal(await chatOnRedis(nodes[0]!.baseUrl, agents[4]!.api_key));
    await expectTenantRefusal(await chatOnRedis(nodes[1]!.baseUrl, agents[5]!.api_key));
    await admin.call('PATCH', '/tenants/acme', { daily_budget: null });
    expect((await chatOnRedis(nodes[1]!.baseUrl, agents[6]!.api_key)).status).toBe(200);
  });
});
