import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminApi, expectError, type AdminCall, type TraceDetail } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { usageRecord } from '../test-support/store.js';

const T0 = Date.parse('2030-06-01T08:00:00.000Z');
const at = (s: number) => new Date(T0 + Math.round(s * 1000)).toISOString();
const SUMMARY_FIELDS = [
  'agent_id',
  'completion_tokens',
  'cost',
  'ended_at',
  'error_count',
  'prompt_tokens',
  'request_count',
  'started_at',
  'tenant_id',
  'trace_id',
];
const REQUEST_FIELDS = [
  'cached_tokens',
  'completion_tokens',
  'cost',
  'endpoint',
  'error_code',
  'http_status',
  'latency_ms',
  'model',
  'pii_types',
  'prompt_tokens',
  'provider',
  'reasoning_tokens',
  'request_id',
  'response_id',
  'started_at',
  'status',
  'step',
  'stream',
  'ttft_ms',
];

describe.each(['sqlite', 'postgres'] as const)('traces and usage over HTTP on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
    await gw.runtime.store.insertUsage([
      usageRecord({ request_id: 'r-plan', trace_id: 'run-1', tenant_id: 'acme', agent_id: 'agt_a', started_at: at(0), prompt_tokens: 100, completion_tokens: 10, cost: 0.01, latency_ms: 900 }),
      usageRecord({ request_id: 'r-act', trace_id: 'run-1', tenant_id: 'acme', agent_id: 'agt_a', started_at: at(60), prompt_tokens: 200, completion_tokens: 20, cost: 0.02, latency_ms: 1500, stream: true, ttft_ms: 120 }),
      usageRecord({ request_id: 'r-blocked', trace_id: 'run-1', tenant_id: 'acme', agent_id: 'agt_a', started_at: at(30), prompt_tokens: 50, completion_tokens: 0, cost: 0, status: 'blocked', http_status: 403, error_code: 'pii_detected', pii_types: ['email'], latency_ms: 3 }),
      usageRecord({ request_id: 'r-2', trace_id: 'run-2', tenant_id: 'acme', agent_id: 'agt_b', started_at: at(3600), model: 'anthropic/claude-sonnet-4-5', provider: 'anthropic', cost: 0.5 }),
      usageRecord({ request_id: 'r-3', trace_id: 'flow/42 step', tenant_id: 'globex', agent_id: 'agt_g', started_at: at(86_400 + 10), cost: 1 }),
    ]);
  });
  afterAll(async () => gw?.close());

  test('GET /traces lists summaries newest first', async () => {
    const r = await api('GET', '/traces');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'next_cursor']);
    expect(r.body.data.map((t: { trace_id: string }) => t.trace_id)).toEqual(['flow/42 step', 'run-2', 'run-1']);
    for (const t of r.body.data) expect(Object.keys(t).sort()).toEqual(SUMMARY_FIELDS);
    expect(r.body.data[2]).toEqual({
      trace_id: 'run-1',
      tenant_id: 'acme',
      agent_id: 'agt_a',
      started_at: at(0),
      ended_at: at(61.5),
      request_count: 3,
      error_count: 1,
      prompt_tokens: 350,
      completion_tokens: 30,
      cost: 0.03,
    });
    expect(r.body.next_cursor).toBeNull();
  });

  test('GET /traces filters by tenant, agent and since, and pages with a cursor', async () => {
    const ids = async (qs: string) => (await api('GET', `/traces?${qs}`)).body.data.map((t: { trace_id: string }) => t.trace_id);
    expect(await ids('tenant_id=acme')).toEqual(['run-2', 'run-1']);
    expect(await ids('agent_id=agt_b')).toEqual(['run-2']);
    expect(await ids(`since=${encodeURIComponent(at(1))}`)).toEqual(['flow/42 step', 'run-2']);
    // Bounds with an offset or without milliseconds mean the same instant as the stored UTC times.
    expect(await ids('since=2030-06-01T09:00:00%2B01:00')).toEqual(['flow/42 step', 'run-2', 'run-1']);
    expect(await ids('since=2030-06-01T08:00:00Z')).toEqual(['flow/42 step', 'run-2', 'run-1']);
    expect(await ids('since=2030-06-01T08:00:00.001Z')).toEqual(['flow/42 step', 'run-2']);

    const p1 = await api('GET', '/traces?limit=1');
    const p2 = await api('GET', `/traces?limit=1&cursor=${p1.body.next_cursor}`);
    const p3 = await api('GET', `/traces?limit=1&cursor=${p2.body.next_cursor}`);
    expect([p1, p2, p3].map((p) => p.body.data[0].trace_id)).toEqual(['flow/42 step', 'run-2', 'run-1']);
    expect(p3.body.next_cursor).toBeNull();
    expectError(await api('GET', '/traces?cursor=bogus'), 400, 'validation_failed', 'cursor');
  });

  test('GET /traces/{id}: the summary plus requests in time order with derived steps', async () => {
    const r = await api('GET', '/traces/run-1');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ trace_id: 'run-1', request_count: 3, error_count: 1, prompt_tokens: 350, ended_at: at(61.5) });
    expect(r.body.requests.map((q: { request_id: string; step: number }) => [q.step, q.request_id])).toEqual([
      [1, 'r-plan'],
      [2, 'r-blocked'],
      [3, 'r-act'],
    ]);
    for (const q of r.body.requests) expect(Object.keys(q).sort()).toEqual(REQUEST_FIELDS);
    expect(r.body.requests[1]).toMatchObject({ status: 'blocked', http_status: 403, error_code: 'pii_detected', pii_types: ['email'], cost: 0 });
    expect(r.body.requests[2]).toMatchObject({ stream: true, ttft_ms: 120, latency_ms: 1500, model: 'openai/gpt-4o-mini', provider: 'openai' });
  });

  test('trace ids with spaces and slashes are reachable URL-encoded', async () => {
    const r = await api('GET', `/traces/${encodeURIComponent('flow/42 step')}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ trace_id: 'flow/42 step', tenant_id: 'globex', request_count: 1 });
  });

  test('an unknown trace is 404 trace_not_found', async () => {
    expectError(await api('GET', '/traces/never-seen'), 404, 'trace_not_found');
  });

  test('GET /usage groups by agent (default), tenant, model and day', async () => {
    const usage = async (qs: string) => {
      const r = await api('GET', `/usage${qs}`);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body)).toEqual(['data']);
      return r.body.data as Array<{ key: string; requests: number; prompt_tokens: number; completion_tokens: number; cost: number }>;
    };
    const byAgent = await usage('');
    expect(byAgent).toEqual([
      { key: 'agt_a', requests: 3, prompt_tokens: 350, completion_tokens: 30, cost: 0.03 },
      { key: 'agt_b', requests: 1, prompt_tokens: 10, completion_tokens: 5, cost: 0.5 },
      { key: 'agt_g', requests: 1, prompt_tokens: 10, completion_tokens: 5, cost: 1 },
    ]);
    expect(await usage('?group_by=agent')).toEqual(byAgent);
    expect((await usage('?group_by=tenant')).map((u) => [u.key, u.requests, u.cost])).toEqual([
      ['acme', 4, 0.53],
      ['globex', 1, 1],
    ]);
    expect((await usage('?group_by=model')).map((u) => [u.key, u.requests])).toEqual([
      ['anthropic/claude-sonnet-4-5', 1],
      ['openai/gpt-4o-mini', 4],
    ]);
    expect((await usage('?group_by=day')).map((u) => [u.key, u.requests])).toEqual([
      ['2030-06-01', 4],
      ['2030-06-02', 1],
    ]);
    expect((await usage(`?group_by=tenant&from=${encodeURIComponent(at(10))}&to=${encodeURIComponent(at(4000))}`)).map((u) => [u.key, u.requests])).toEqual([
      ['acme', 3],
    ]);
    expect((await usage('?group_by=agent&tenant_id=globex')).map((u) => u.key)).toEqual(['agt_g']);
  });
});

test('?tenant_id= picks one tenant of a trace id two tenants share', async () => {
  const own = await startTestGateway();
  const get = (path: string) => fetch(`${own.adminUrl}${path}`, { headers: { authorization: `Bearer ${own.adminKey}` } });
  try {
    await own.runtime.store.insertUsage([
      usageRecord({ request_id: 'shared-a', trace_id: 'shared', tenant_id: 'acme', agent_id: 'agt_a', started_at: at(5) }),
      usageRecord({ request_id: 'shared-g', trace_id: 'shared', tenant_id: 'globex', agent_id: 'agt_g', started_at: at(9) }),
    ]);
    const trace = (await (await get('/traces/shared?tenant_id=globex')).json()) as TraceDetail;
    expect(trace.tenant_id).toBe('globex');
    expect(trace.requests.map((r) => r.request_id)).toEqual(['shared-g']);
    expect((await get('/traces/shared?tenant_id=acme')).status).toBe(200);
    expect((await get('/traces/shared?tenant_id=initech')).status).toBe(404);
  } finally {
    await own.close();
  }
});
