import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RFC3339, adminApi, expectError, type AdminCall, type TraceDetail } from '../test-support/admin-api.js';
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
  'stopped',
  'tenant_id',
  'trace_id',
];
const REQUEST_FIELDS = [
  'cached_tokens',
  'cleaned',
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
  'requested_model',
  'response_id',
  'started_at',
  'status',
  'step',
  'stream',
  'tool',
  'tool_calls',
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
      stopped: null,
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
      return r.body.data as Array<{ key: string; requests: number; errors: number; prompt_tokens: number; completion_tokens: number; cost: number }>;
    };
    const byAgent = await usage('');
    expect(byAgent).toEqual([
      { key: 'agt_a', requests: 3, errors: 1, prompt_tokens: 350, completion_tokens: 30, cost: 0.03 },
      { key: 'agt_b', requests: 1, errors: 0, prompt_tokens: 10, completion_tokens: 5, cost: 0.5 },
      { key: 'agt_g', requests: 1, errors: 0, prompt_tokens: 10, completion_tokens: 5, cost: 1 },
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

describe.each(['sqlite', 'postgres'] as const)('POST /traces/{trace_id}/stop on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  const keys = { viewer: '', adminA: '', adminB: '' };
  const stopped = (tenant: string, trace: string) => gw.runtime.snapshot.isTraceStopped(tenant, trace);

  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
    for (const id of ['acme', 'globex']) expect((await api('POST', '/tenants', { body: { id, name: id } })).status).toBe(201);
    const key = async (name: string, role: string, tenant_id?: string) => (await api('POST', '/admin-keys', { body: { name, role, tenant_id } })).body.api_key as string;
    keys.viewer = await key('viewer', 'viewer');
    keys.adminA = await key('admin-acme', 'tenant_admin', 'acme');
    keys.adminB = await key('admin-globex', 'tenant_admin', 'globex');
    await gw.runtime.store.insertUsage([
      usageRecord({ trace_id: 'loop-1', tenant_id: 'acme', agent_id: 'agt_a', started_at: at(0) }),
      usageRecord({ trace_id: 'loop-1', tenant_id: 'acme', agent_id: 'agt_a', started_at: at(1) }),
      usageRecord({ trace_id: 'calm-1', tenant_id: 'acme', agent_id: 'agt_a', started_at: at(2) }),
      usageRecord({ trace_id: 'both', tenant_id: 'acme', agent_id: 'agt_a', started_at: at(3) }),
      usageRecord({ trace_id: 'both', tenant_id: 'globex', agent_id: 'agt_g', started_at: at(4) }),
      usageRecord({ trace_id: 'globex-1', tenant_id: 'globex', agent_id: 'agt_g', started_at: at(5) }),
      usageRecord({ trace_id: 'no reason/1', tenant_id: 'acme', agent_id: 'agt_a', started_at: at(6) }),
      usageRecord({ trace_id: 'own-a', tenant_id: 'acme', agent_id: 'agt_a', started_at: at(7) }),
    ]);
  });
  afterAll(async () => gw?.close());

  test('stops a trace: the stop in the answer, in the snapshot when the call returns, on the trace and in the list', async () => {
    const before = Date.now();
    const r = await api('POST', '/traces/loop-1/stop', { body: { reason: 'calling the same tool in a loop' } });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['stopped', 'tenant_id', 'trace_id']);
    expect(r.body).toEqual({ trace_id: 'loop-1', tenant_id: 'acme', stopped: { at: expect.stringMatching(RFC3339), reason: 'calling the same tool in a loop' } });
    expect(Date.parse(r.body.stopped.at)).toBeGreaterThanOrEqual(before - 5);
    expect(stopped('acme', 'loop-1')).toBe(true);
    expect(stopped('acme', 'calm-1')).toBe(false);

    const trace = await api('GET', '/traces/loop-1');
    expect(trace.body).toMatchObject({ trace_id: 'loop-1', request_count: 2, stopped: r.body.stopped });
    const listed = (await api('GET', '/traces?tenant_id=acme')).body.data as Array<{ trace_id: string; stopped: unknown }>;
    expect(listed.find((t) => t.trace_id === 'loop-1')?.stopped).toEqual(r.body.stopped);
    expect(listed.find((t) => t.trace_id === 'calm-1')?.stopped).toBeNull();
  });

  test('idempotent: a trace stopped again keeps its first stop, which is answered again', async () => {
    const first = await api('POST', '/traces/calm-1/stop', { body: { reason: 'first' } });
    expect(first.status).toBe(200);
    const again = await api('POST', '/traces/calm-1/stop', { body: { reason: 'second' } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await api('POST', '/traces/calm-1/stop')).body).toEqual(first.body);
    expect((await api('GET', '/traces/calm-1')).body.stopped).toEqual({ at: first.body.stopped.at, reason: 'first' });
  });

  test('the body may be left out, be empty, or give no reason; ids with spaces and slashes are reachable URL-encoded', async () => {
    const r = await api('POST', `/traces/${encodeURIComponent('no reason/1')}/stop`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ trace_id: 'no reason/1', tenant_id: 'acme', stopped: { reason: null } });
    expect((await api('POST', `/traces/${encodeURIComponent('no reason/1')}/stop`, { body: {} })).body).toEqual(r.body);
    expect((await api('POST', `/traces/${encodeURIComponent('no reason/1')}/stop`, { body: { reason: null } })).body).toEqual(r.body);
  });

  test('bad input is a 400 naming the field', async () => {
    expectError(await api('POST', '/traces/globex-1/stop', { body: { reason: 'x', why: 'typo' } }), 400, 'validation_failed');
    expectError(await api('POST', '/traces/globex-1/stop', { body: { reason: '' } }), 400, 'validation_failed', 'reason');
    expectError(await api('POST', '/traces/globex-1/stop', { body: { reason: 'x'.repeat(1001) } }), 400, 'validation_failed', 'reason');
    expectError(await api('POST', '/traces/globex-1/stop', { body: { reason: 42 } }), 400, 'validation_failed', 'reason');
    expectError(await api('POST', '/traces/globex-1/stop', { raw: '{"reason":' }), 400, 'invalid_json');
    expectError(await api('POST', `/traces/${'t'.repeat(129)}/stop`), 400, 'validation_failed', 'trace_id');
    expectError(await api('POST', '/traces/globex-1/stop?tenant_id=Not%20An%20Id'), 400, 'validation_failed', 'tenant_id');
    expectError(await api('POST', '/traces/globex-1/stop?tenant=globex'), 400, 'validation_failed');
    expect(stopped('globex', 'globex-1')).toBe(false);
  });

  test('an unknown trace is 404 trace_not_found, in any tenant asked for', async () => {
    expectError(await api('POST', '/traces/never-seen/stop'), 404, 'trace_not_found');
    expectError(await api('POST', '/traces/globex-1/stop?tenant_id=acme'), 404, 'trace_not_found');
    expectError(await api('POST', '/traces/globex-1/stop?tenant_id=initech'), 404, 'trace_not_found');
    expect(stopped('acme', 'never-seen')).toBe(false);
    expect(stopped('acme', 'globex-1')).toBe(false);
  });

  test('a trace id two tenants share needs ?tenant_id=, and stops only that tenant\'s trace', async () => {
    expectError(await api('POST', '/traces/both/stop'), 400, 'validation_failed', 'tenant_id');
    const r = await api('POST', '/traces/both/stop?tenant_id=globex', { body: { reason: 'globex only' } });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ trace_id: 'both', tenant_id: 'globex' });
    expect(stopped('globex', 'both')).toBe(true);
    expect(stopped('acme', 'both')).toBe(false);
    expect((await api('GET', '/traces/both?tenant_id=globex')).body.stopped).toMatchObject({ reason: 'globex only' });
    expect((await api('GET', '/traces/both?tenant_id=acme')).body.stopped).toBeNull();
  });

  test('RBAC: viewers may not stop; a tenant_admin stops only its own tenant\'s traces', async () => {
    expectError(await api('POST', '/traces/globex-1/stop', { key: keys.viewer }), 403, 'insufficient_role');
    expectError(await api('POST', '/traces/globex-1/stop', { key: keys.adminA }), 403, 'tenant_forbidden');
    expectError(await api('POST', '/traces/globex-1/stop?tenant_id=globex', { key: keys.adminA }), 403, 'tenant_forbidden');
    expectError(await api('POST', '/traces/never-seen/stop', { key: keys.adminA }), 404, 'trace_not_found');
    expect(stopped('globex', 'globex-1')).toBe(false);
    expectError(await api('POST', '/traces/own-a/stop', { key: null }), 401, 'invalid_api_key');

    // The id both tenants use: a scoped key needs no ?tenant_id=, it means its own.
    const own = await api('POST', '/traces/both/stop', { key: keys.adminA, body: { reason: 'acme too' } });
    expect(own.status, own.text).toBe(200);
    expect(own.body).toMatchObject({ tenant_id: 'acme', stopped: { reason: 'acme too' } });
    expect(stopped('acme', 'both')).toBe(true);
    const mine = await api('POST', '/traces/own-a/stop', { key: keys.adminA });
    expect(mine.status).toBe(200);
    expect((await api('GET', '/traces/own-a', { key: keys.adminA })).body.stopped).toEqual(mine.body.stopped);
    expect((await api('POST', '/traces/globex-1/stop', { key: keys.adminB })).status).toBe(200);
  });

  test('the OpenAPI document describes the route', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    expect(doc.paths['/traces/{trace_id}/stop']?.post).toBeDefined();
    expect(JSON.stringify(doc.components?.schemas ?? {})).toContain('TraceStopped');
  });
});
