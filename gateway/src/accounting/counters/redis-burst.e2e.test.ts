// A healthy Redis under 500-way bursts on 3 gateway nodes (one process here, so their event loops are as busy as a
// small machine's): with the default limits.redis_timeout_ms and limits.redis_breaker_failures no request is refused
// with 503 store_unavailable, since a busy event loop is not taken for a Redis that hangs.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from '../../test-support/fake-openai.js';
import { startTestGateway, type TestGateway } from '../../test-support/gateway.js';
import { type OwnRedis, startOwnRedis } from '../../test-support/own-redis.js';

const BURSTS = Number(process.env.AGENTGW_BURSTS ?? 2);
const BURST = 500;

let redis: OwnRedis;
let upstream: FakeOpenAI;
const nodes: TestGateway[] = [];
beforeAll(async () => {
  [redis, upstream] = await Promise.all([startOwnRedis(), startFakeOpenAI()]);
}, 60_000);
afterAll(async () => {
  for (const n of nodes.reverse()) await n.close();
  await upstream?.close();
  await redis?.cleanup();
});

test(`${BURSTS} bursts of ${BURST} budgeted requests over 3 nodes, Redis healthy: no 503`, async () => {
  const sqlitePath = `/tmp/agentgw-burst-${randomBytes(6).toString('hex')}.db`;
  const adminKey = `adk_${randomBytes(16).toString('hex')}`;
  const config = {
    providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk' } },
    // One set of counters for the 3 nodes, as in a cluster.
    counters: { kind: 'redis', url: redis.url, prefix: `agentgw:burst:${randomBytes(4).toString('hex')}:` },
  };
  for (let i = 0; i < 3; i++) nodes.push(await startTestGateway({ adminKey, sqlitePath, config }));
  const admin = adminClient(nodes[0]!.adminUrl, adminKey);
  await admin.tenant('acme');
  await admin.policy('budgeted', { tenant_id: 'acme', daily_budget: 1000, monthly_budget: 1000, rules: { rpm: 100_000 } });
  const agent = await admin.agent('acme', 'bot', 'budgeted');
  const statuses = new Map<number, number>();
  const reasons = new Map<string, number>();
  const started = performance.now();
  for (let b = 0; b < BURSTS; b++) {
    await Promise.all(
      Array.from({ length: BURST }, async (_, i) => {
        const res = await fetch(`${nodes[i % 3]!.baseUrl}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${agent.api_key}`, 'content-type': 'application/json', 'x-agent-trace-id': `burst-${b}-${i % 50}` },
          body: JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 16, stream: i % 2 === 0, messages: [{ role: 'user', content: `burst ${b} request ${i}` }] }),
        });
        const text = await res.text();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 503) reasons.set(text.slice(0, 300), (reasons.get(text.slice(0, 300)) ?? 0) + 1);
      }),
    );
  }
  console.log(`${BURSTS * BURST} requests in ${BURSTS} bursts of ${BURST} over 3 nodes in ${Math.round(performance.now() - started)} ms: ${JSON.stringify(Object.fromEntries(statuses))}`);
  if (reasons.size > 0) console.log([...reasons].map(([r, n]) => `${n} x ${r}`).join('\n'));
  expect(statuses.get(503) ?? 0).toBe(0);
  expect(statuses.get(200)).toBe(BURSTS * BURST);
}, 120_000);
