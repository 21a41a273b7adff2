// Cost of listing steps in flight on the request path: begin (at admission) and end (at the record) for N requests of
// rotating traces, with memory (one node) and Redis (several nodes: one MULTI of HSET + PEXPIRE each, never awaited).
// Prints the CPU time per request on the event loop and, for Redis, the time until every write was acknowledged.
// Run after `npm run build`: `node bench/running-steps.mjs` (AGENTGW_TEST_REDIS_URL, default redis://127.0.0.1:6379).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { MemoryRunningSteps, RedisRunningSteps } from '../gateway/dist/data-plane/running-steps.js';

const N = Number(process.env.N ?? 20_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const url = process.env.AGENTGW_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const agent = { id: 'agt_bench', tenant_id: 'bench' };
function ctxOf(i) {
  const now = Date.now();
  return {
    requestId: `req_${i}_${randomBytes(4).toString('hex')}`,
    traceId: `trace-${i % 500}`,
    agent,
    endpoint: 'chat.completions',
    model: 'openai/gpt-4o-mini',
    requestedModel: 'openai/gpt-4o-mini',
    provider: 'openai',
    stream: true,
    startedAtIso: new Date(now).toISOString(),
  };
}
const recordOf = (c) => ({
  request_id: c.requestId, trace_id: c.traceId, tenant_id: 'bench', agent_id: agent.id, model: c.model, provider: 'openai', status: 'ok',
  http_status: 200, error_code: null, prompt_tokens: 10, completion_tokens: 5, cached_tokens: 0, reasoning_tokens: 0, cost: 0.0001,
  latency_ms: 12.5, ttft_ms: 3, pii_types: [], response_id: null, tool_calls: [], cleaned: [],
});

async function run(name, make, settle) {
  const perRequest = [];
  for (let r = 0; r < ROUNDS; r++) {
    const steps = await make(r);
    const ctxs = Array.from({ length: N }, (_, i) => ctxOf(i));
    const recs = ctxs.map(recordOf);
    const t0 = process.cpuUsage();
    const w0 = performance.now();
    for (let i = 0; i < N; i++) steps.begin(ctxs[i]);
    for (let i = 0; i < N; i++) steps.end(recs[i]);
    const cpu = process.cpuUsage(t0);
    const loopMs = performance.now() - w0;
    const acked = settle ? await settle(steps) : 0;
    perRequest.push({ cpuUs: (cpu.user + cpu.system) / N, loopUs: (loopMs * 1000) / N, ackedMs: acked });
    await steps.close();
  }
  const median = (k) => perRequest.map((p) => p[k]).sort((a, b) => a - b)[Math.floor(ROUNDS / 2)];
  console.log(`${name}: ${N} requests x ${ROUNDS} rounds; median per request: ${median('loopUs').toFixed(2)} µs on the event loop (CPU ${median('cpuUs').toFixed(2)} µs)` +
    (settle ? `; all writes acknowledged ${median('ackedMs').toFixed(0)} ms after the last end` : ''));
}

await run('memory', () => new MemoryRunningSteps());
const admin = new Redis(url);
await run(
  'redis',
  async (r) => {
    const steps = new RedisRunningSteps(url, `agentgw-bench:running-${r}-${randomBytes(3).toString('hex')}:`);
    const redis = steps['redis'];
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
    return steps;
  },
  async (steps) => {
    // A PING behind every write on the same connection answers once they all did.
    const t = performance.now();
    await steps['redis'].ping();
    return performance.now() - t;
  },
);
const keys = await admin.keys('agentgw-bench:running-*');
if (keys.length) await admin.del(...keys);
admin.disconnect();
