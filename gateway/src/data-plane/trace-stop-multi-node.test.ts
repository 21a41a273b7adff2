// A stopped trace and a suspended agent hold on every node before the admin call returns (like a revoked key), and they
// live in the database: a Redis restart or a gateway restart forgets neither.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { eventually } from '../test-support/admin-api.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { type OwnRedis, startOwnRedis } from '../test-support/own-redis.js';

const MODEL = 'openai/gpt-4o-mini';

let openai: FakeOpenAI;
beforeAll(async () => {
  openai = await startFakeOpenAI();
});
afterAll(async () => openai?.close());

const providers = () => ({ openai: { type: 'openai', base_url: `${openai.url}/v1`, api_key: 'sk-upstream' } });

/** One chat request on `gw`: its status and error code. */
async function chat(gw: TestGateway, key: string, trace?: string): Promise<{ status: number; code: string | undefined; retry: string | null }> {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(trace ? { 'x-agent-trace-id': trace } : {}) },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 }),
  });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: body.error?.code, retry: res.headers.get('x-should-retry') };
}

/** Waits until the trace is in the database, so that it can be stopped by id. */
const traceRecorded = (gw: TestGateway, trace: string) =>
  eventually(async () => (await fetch(`${gw.adminUrl}/traces/${trace}`, { headers: { authorization: `Bearer ${gw.adminKey}` } })).status === 200, 5000, `trace ${trace}`);

describe.each(['postgres', 'sqlite'] as const)('two gateway nodes on one %s database', (storage) => {
  let one: TestGateway;
  let two: TestGateway;
  let admin1: ReturnType<typeof adminClient>;
  let n = 0;

  beforeAll(async () => {
    one = await startTestGateway({ storage, config: { providers: providers() } });
    two = await startTestGateway({
      storage,
      adminKey: one.adminKey,
      config: { providers: providers() },
      pgSchema: one.storage.kind === 'postgres' ? one.storage.schema : undefined,
      sqlitePath: one.storage.kind === 'sqlite' ? one.storage.path : undefined,
    });
    admin1 = adminClient(one.adminUrl, one.adminKey);
    await admin1.tenant('shared');
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
  });

  test('a trace stopped through node one is refused by node two the moment the call returns', async () => {
    const agent = await admin1.agent('shared', `roamer-${++n}`);
    const trace = `multi-${storage}-${n}`;
    expect((await chat(two, agent.api_key, trace)).status).toBe(200);
    await traceRecorded(one, trace);
    await admin1.call('POST', `/traces/${trace}/stop`, { reason: 'looping' });
    // No waiting: node two holds the stop already.
    expect(two.runtime.snapshot.isTraceStopped('shared', trace)).toBe(true);
    expect(await chat(two, agent.api_key, trace)).toEqual({ status: 403, code: 'trace_stopped', retry: 'false' });
    expect(await chat(one, agent.api_key, trace)).toEqual({ status: 403, code: 'trace_stopped', retry: 'false' });
    expect((await chat(two, agent.api_key, `${trace}-next`)).status).toBe(200);
  });

  test('an agent suspended through node one is refused by node two the moment the call returns; resumed, it is served again', async () => {
    const agent = await admin1.agent('shared', `suspendee-${++n}`);
    expect((await chat(two, agent.api_key)).status).toBe(200);
    await admin1.call('PATCH', `/agents/${agent.id}`, { suspended: true });
    expect(await chat(two, agent.api_key)).toEqual({ status: 403, code: 'agent_suspended', retry: 'false' });
    await admin1.call('PATCH', `/agents/${agent.id}`, { suspended: false });
    expect((await chat(two, agent.api_key)).status).toBe(200);
  });

  test('a node that starts later loads the stops and suspensions from the database', async () => {
    const agent = await admin1.agent('shared', `late-${++n}`);
    const stoppedOne = await admin1.agent('shared', `late-stopped-${n}`);
    const trace = `late-${storage}-${n}`;
    expect((await chat(one, stoppedOne.api_key, trace)).status).toBe(200);
    await traceRecorded(one, trace);
    await admin1.call('POST', `/traces/${trace}/stop`);
    await admin1.call('PATCH', `/agents/${agent.id}`, { suspended: true });
    const three = await startTestGateway({
      storage,
      adminKey: one.adminKey,
      config: { providers: providers() },
      pgSchema: one.storage.kind === 'postgres' ? one.storage.schema : undefined,
      sqlitePath: one.storage.kind === 'sqlite' ? one.storage.path : undefined,
    });
    try {
      expect((await chat(three, agent.api_key)).code).toBe('agent_suspended');
      expect((await chat(three, stoppedOne.api_key, trace)).code).toBe('trace_stopped');
      expect((await chat(three, stoppedOne.api_key)).status).toBe(200);
    } finally {
      await three.close();
    }
  });
});

describe('with Redis counters', () => {
  let redis: OwnRedis;
  let gw: TestGateway;
  beforeAll(async () => {
    redis = await startOwnRedis();
    gw = await startTestGateway({ storage: 'postgres', config: { providers: providers(), counters: { kind: 'redis', url: redis.url } } });
  });
  afterAll(async () => {
    await gw?.close();
    await redis?.cleanup();
  });

  test('a Redis restart (its data gone) forgets neither a stopped trace nor a suspended agent', async () => {
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    await admin.policy('budgeted', { tenant_id: 'acme', monthly_budget: 100 });
    const suspended = await admin.agent('acme', 'suspended', 'budgeted');
    const worker = await admin.agent('acme', 'worker', 'budgeted');
    expect((await chat(gw, worker.api_key, 'redis-trace')).status).toBe(200);
    await traceRecorded(gw, 'redis-trace');
    await admin.call('POST', '/traces/redis-trace/stop');
    await admin.call('PATCH', `/agents/${suspended.id}`, { suspended: true });

    await redis.restartWithoutData();
    // Budgeted requests are served again once the counters are rebuilt; the stop and the suspension hold throughout.
    await eventually(async () => (await chat(gw, worker.api_key, 'redis-after')).status === 200, 10_000, 'counters rebuilt');
    expect((await chat(gw, worker.api_key, 'redis-trace')).code).toBe('trace_stopped');
    expect((await chat(gw, suspended.api_key)).code).toBe('agent_suspended');
  });
});
