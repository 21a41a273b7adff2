// Redis flushed or restarted (empty) while 30 long streams are in flight on 3 gateway nodes, against an agent, a tenant
// and a trace budget: the spend recorded never passes the budget, and the counters' spend equals the usage rows once
// the streams are done. PostgreSQL and Redis are the test's own (never the shared servers).
// AGENTGW_LOSS_STREAM_MS sets the length of the streams (default 2,500 ms; the acceptance run uses 10,000).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { startTestGateway, type TestGateway } from '../../test-support/gateway.js';
import { type OwnPostgres, startOwnPostgres } from '../../test-support/own-postgres.js';
import { type OwnRedis, startOwnRedis } from '../../test-support/own-redis.js';

const STREAM_MS = Number(process.env.AGENTGW_LOSS_STREAM_MS ?? 2_500);
const STREAMS = 30;
/** Every request costs exactly $1: 100 output tokens at $10,000 per million, nothing for input (its worst case too). */
const MODEL = 'openai/test-stream';
const PRICES = { [MODEL]: { input: 0, output: 10_000 } };
const MAX_TOKENS = 100;
const BUDGET = 40;

/** An OpenAI-format upstream: a request whose text says "slow" streams for STREAM_MS, any other answers at once. */
async function startUpstream(): Promise<{ url: string; slowStarted: () => number; close(): Promise<void> }> {
  let slow = 0;
  const server: Server = createServer(async (req, res) => {
    let raw = '';
    for await (const c of req) raw += String(c);
    const body = JSON.parse(raw) as { model: string; messages: unknown };
    const isSlow = JSON.stringify(body.messages).includes('slow');
    if (isSlow) slow++;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (choices: unknown[], extra: object = {}) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: body.model, choices, ...extra })}\n\n`;
    res.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
    const parts = isSlow ? 10 : 1;
    for (let i = 0; i < parts; i++) {
      if (isSlow) await new Promise((r) => setTimeout(r, STREAM_MS / parts));
      if (res.destroyed) return;
      res.write(chunk([{ index: 0, delta: { content: `part${i} ` }, finish_reason: null }]));
    }
    res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
    res.write(chunk([], { usage: { prompt_tokens: 10, completion_tokens: MAX_TOKENS, total_tokens: 10 + MAX_TOKENS } }));
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    slowStarted: () => slow,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function chat(node: TestGateway, key: string, text: string, traceId: string | undefined): Promise<number> {
  const res = await fetch(`${node.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(traceId ? { 'x-agent-trace-id': traceId } : {}) },
    body: JSON.stringify({ model: MODEL, stream: true, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: text }] }),
  });
  await res.text();
  return res.status;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let pgServer: OwnPostgres;
let redis: OwnRedis;
let upstream: Awaited<ReturnType<typeof startUpstream>>;
let db: pg.Client;
beforeAll(async () => {
  [pgServer, redis, upstream] = await Promise.all([startOwnPostgres(), startOwnRedis(), startUpstream()]);
  db = new pg.Client({ connectionString: pgServer.url });
  await db.connect();
}, 60_000);
afterAll(async () => {
  await db?.end();
  await upstream?.close();
  await redis?.cleanup();
  await pgServer?.cleanup();
});

interface Scope {
  name: string;
  /** Sets the budget up; returns the agents' keys and how the recorded spend and the counters' spend are read. */
  setUp(admin: ReturnType<typeof adminClient>, tag: string): Promise<{ keys: string[]; traceId?: string; rows(schema: string): Promise<number>; counted(admin: ReturnType<typeof adminClient>): Promise<number> }>;
}

const sum = async (sql: string, params: unknown[]) => Number((await db.query<{ cost: string }>(sql, params)).rows[0]!.cost);

const agentBudget: Scope = {
  name: 'agent daily budget',
  async setUp(admin, tag) {
    await admin.tenant(tag);
    await admin.policy(`${tag}-p`, { tenant_id: tag, daily_budget: BUDGET, monthly_budget: 10_000 });
    const agent = await admin.agent(tag, 'bot', `${tag}-p`);
    return {
      keys: [agent.api_key],
      rows: (schema) => sum(`select coalesce(sum(cost), 0) as cost from "${schema}".usage_records where agent_id = $1`, [agent.id]),
      counted: async (a) => (await a.call('GET', `/agents/${agent.id}`)).spend.day,
    };
  },
};

const tenantBudget: Scope = {
  name: 'tenant daily budget',
  async setUp(admin, tag) {
    await admin.call('POST', '/tenants', { id: tag, name: tag, daily_budget: BUDGET });
    const agents = await Promise.all([0, 1, 2].map((i) => admin.agent(tag, `bot${i}`)));
    return {
      keys: agents.map((a) => a.api_key),
      rows: (schema) => sum(`select coalesce(sum(cost), 0) as cost from "${schema}".usage_records where tenant_id = $1`, [tag]),
      counted: async (a) => (await a.call('GET', `/tenants/${tag}`)).spend.day,
    };
  },
};

const traceBudget: Scope = {
  name: 'trace budget',
  async setUp(admin, tag) {
    await admin.tenant(tag);
    await admin.policy(`${tag}-p`, { tenant_id: tag, rules: { max_cost_per_trace: BUDGET } });
    const agent = await admin.agent(tag, 'bot', `${tag}-p`);
    const traceId = `trace-${tag}`;
    return {
      keys: [agent.api_key],
      traceId,
      rows: (schema) => sum(`select coalesce(sum(cost), 0) as cost from "${schema}".usage_records where trace_id = $1`, [traceId]),
      // The trace's spend is not on the admin interface: the rows bound it, and the agent's day spend (same requests) is checked.
      counted: async (a) => (await a.call('GET', `/agents/${agent.id}`)).spend.day,
    };
  },
};

async function run(scope: Scope, lose: 'flush' | 'restart') {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const adminKey = `adk_${randomBytes(16).toString('hex')}`;
  const config = {
    providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk' } },
    prices: PRICES,
    counters: { kind: 'redis', url: redis.url, prefix: `agentgw:${schema}:` },
  };
  const nodes: TestGateway[] = [];
  for (let i = 0; i < 3; i++) {
    nodes.push(await startTestGateway({ adminKey, storage: 'postgres', pgUrl: pgServer.url, pgSchema: schema, config }));
  }
  const flusher = new Redis(redis.url, { maxRetriesPerRequest: 0 });
  flusher.on('error', () => undefined);
  try {
    const admin = adminClient(nodes[0]!.adminUrl, adminKey);
    const s = await scope.setUp(admin, schema.slice(2));
    const key = (i: number) => s.keys[i % s.keys.length]!;
    const before = upstream.slowStarted();
    // 30 long streams, 10 per node, each holding its $1 worst case.
    const streams = Array.from({ length: STREAMS }, (_, i) => chat(nodes[i % 3]!, key(i), `slow stream ${i}`, s.traceId));
    while (upstream.slowStarted() - before < STREAMS) await sleep(10);
    await sleep(100);
    if (lose === 'flush') await flusher.flushall();
    else await redis.restartWithoutData();
    // Every node is asked for more at once, until each client is told the budget is spent.
    const statuses = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 12 }, async (_, w) => {
        for (let refused = 0, i = 0; refused < 2 && i < 200; i++) {
          const status = await chat(nodes[w % 3]!, key(w), `quick ${w}-${i}`, s.traceId);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status === 429) refused++;
          else if (status === 503) await sleep(20);
          else expect(status).toBe(200);
        }
      }),
    );
    const streamed = await Promise.all(streams);
    expect(streamed.every((st) => st === 200)).toBe(true);
    for (const n of nodes) await n.runtime.dataPlane.usage.flush();
    const spent = await s.rows(schema);
    let counted = NaN;
    for (let i = 0; i < 100; i++) {
      counted = await s.counted(admin).catch(() => NaN);
      if (Math.abs(counted - spent) < 1e-9) break;
      await sleep(50);
    }
    const over = ((spent - BUDGET) / BUDGET) * 100;
    console.log(
      `${scope.name}, Redis ${lose === 'flush' ? 'flushed' : 'restarted empty'} with ${STREAMS} streams of ${STREAM_MS} ms in flight on 3 nodes: ` +
        `answers ${JSON.stringify(Object.fromEntries(statuses))}; rows $${spent.toFixed(2)} of $${BUDGET} (${over > 0 ? '+' : ''}${over.toFixed(1)}%), counters $${counted.toFixed(2)}`,
    );
    expect(spent).toBeLessThanOrEqual(BUDGET + 1e-9);
    expect(statuses.get(429)).toBeGreaterThan(0);
    // Every hold was put back and every cost counted once: the counters' spend is the rows'.
    expect(counted).toBeCloseTo(spent, 9);
  } finally {
    flusher.disconnect();
    for (const n of nodes.reverse()) await n.close();
  }
}

describe(`Redis lost with ${STREAMS} streams in flight on 3 nodes: no budget passed`, () => {
  const timeout = 60_000 + 3 * STREAM_MS;
  test('flush, agent budget', () => run(agentBudget, 'flush'), timeout);
  test('restart without data, agent budget', () => run(agentBudget, 'restart'), timeout);
  test('flush, tenant budget', () => run(tenantBudget, 'flush'), timeout);
  test('flush, trace budget', () => run(traceBudget, 'flush'), timeout);
});
