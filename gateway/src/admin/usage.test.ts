import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RFC3339, adminApi, expectError, type AdminCall } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { usageRecord } from '../test-support/store.js';

type Row = { key: string; requests: number; errors: number; prompt_tokens: number; completion_tokens: number; cost: number };
const ROW_FIELDS = ['completion_tokens', 'cost', 'errors', 'key', 'prompt_tokens', 'requests'];

describe.each(['sqlite', 'postgres'] as const)('GET /usage by tool and by hour on %s', (storage) => {
  let gw: TestGateway;
  let api: AdminCall;
  const usage = async (qs: string, key?: string): Promise<Row[]> => {
    const r = await api('GET', `/usage${qs}`, key === undefined ? {} : { key });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body)).toEqual(['data']);
    for (const row of r.body.data) expect(Object.keys(row).sort()).toEqual(ROW_FIELDS);
    return r.body.data;
  };

  beforeAll(async () => {
    gw = await startTestGateway({ storage });
    api = adminApi(gw.adminUrl, gw.adminKey);
    const mcp = { endpoint: 'mcp', model: null, provider: null, prompt_tokens: 0, completion_tokens: 0, cost: 0 };
    await gw.runtime.store.insertUsage([
      // acme: a model step, two calls of one tool (one failed), a call refused by policy, a model step the next hour.
      usageRecord({ request_id: 'a-plan', trace_id: 'run-1', tenant_id: 'acme', agent_id: 'agt_a', started_at: '2030-06-01T08:59:59.999Z', cost: 0.5 }),
      usageRecord({ request_id: 'a-read', trace_id: 'run-1', tenant_id: 'acme', agent_id: 'agt_a', started_at: '2030-06-01T09:00:00.000Z', ...mcp, tool: 'files/read' }),
      usageRecord({ request_id: 'a-read2', trace_id: 'run-1', tenant_id: 'acme', agent_id: 'agt_a', started_at: '2030-06-01T09:10:00.000Z', ...mcp, tool: 'files/read', status: 'error', http_status: 502, error_code: 'upstream_unavailable' }),
      usageRecord({ request_id: 'a-web', trace_id: 'run-1', tenant_id: 'acme', agent_id: 'agt_a', started_at: '2030-06-01T09:20:00.000Z', ...mcp, tool: 'search/web', status: 'blocked', http_status: 403, error_code: 'tool_not_allowed' }),
      usageRecord({ request_id: 'a-answer', trace_id: 'run-1', tenant_id: 'acme', agent_id: 'agt_a', started_at: '2030-06-01T10:30:00.000Z', status: 'error', http_status: 500, error_code: 'internal_error', cost: 0 }),
      // globex: one tool call, the next day.
      usageRecord({ request_id: 'g-read', trace_id: 'run-g', tenant_id: 'globex', agent_id: 'agt_g', started_at: '2030-06-02T00:00:00.000Z', ...mcp, tool: 'files/read' }),
    ]);
  });
  afterAll(async () => gw?.close());

  test('group_by=tool: one row per server/tool, model steps left out, in key order', async () => {
    expect(await usage('?group_by=tool')).toEqual([
      { key: 'files/read', requests: 3, errors: 1, prompt_tokens: 0, completion_tokens: 0, cost: 0 },
      { key: 'search/web', requests: 1, errors: 1, prompt_tokens: 0, completion_tokens: 0, cost: 0 },
    ]);
    expect((await usage('?group_by=tool&tenant_id=globex')).map((r) => [r.key, r.requests])).toEqual([['files/read', 1]]);
    expect((await usage(`?group_by=tool&from=${encodeURIComponent('2030-06-01T09:15:00Z')}&to=${encodeURIComponent('2030-06-02T00:00:00Z')}`)).map((r) => [r.key, r.requests])).toEqual([
      ['search/web', 1],
    ]);
  });

  test('group_by=hour: keys are the UTC hour starts in RFC 3339, in time order', async () => {
    const byHour = await usage('?group_by=hour');
    expect(byHour.map((r) => [r.key, r.requests, r.errors])).toEqual([
      ['2030-06-01T08:00:00Z', 1, 0],
      ['2030-06-01T09:00:00Z', 3, 2],
      ['2030-06-01T10:00:00Z', 1, 1],
      ['2030-06-02T00:00:00Z', 1, 0],
    ]);
    expect(byHour[0]).toMatchObject({ prompt_tokens: 10, completion_tokens: 5, cost: 0.5 });
    for (const r of byHour) {
      expect(r.key).toMatch(RFC3339);
      expect(r.key).toMatch(/T\d{2}:00:00Z$/);
    }
    // Hours add up to the days they are in, whose keys they start with.
    const byDay = await usage('?group_by=day');
    expect(byDay.map((r) => [r.key, r.requests, r.errors])).toEqual([
      ['2030-06-01', 5, 3],
      ['2030-06-02', 1, 0],
    ]);
    // Bounds with an offset are the same instants; `to` is exclusive.
    expect((await usage(`?group_by=hour&tenant_id=acme&from=${encodeURIComponent('2030-06-01T11:00:00+02:00')}&to=${encodeURIComponent('2030-06-01T10:30:00Z')}`)).map((r) => [r.key, r.requests])).toEqual([
      ['2030-06-01T09:00:00Z', 3],
    ]);
  });

  test('errors on every grouping: requests whose status is not ok, as a trace summary counts them', async () => {
    const trace = (await api('GET', '/traces/run-1')).body;
    expect(trace.error_count).toBe(3);
    expect((await usage('?group_by=tenant')).map((r) => [r.key, r.requests, r.errors])).toEqual([
      ['acme', 5, trace.error_count],
      ['globex', 1, 0],
    ]);
    expect((await usage('?group_by=agent')).map((r) => [r.key, r.errors])).toEqual([
      ['agt_a', 3],
      ['agt_g', 0],
    ]);
    expect((await usage('?group_by=model')).map((r) => [r.key, r.requests, r.errors])).toEqual([
      ['', 4, 2],
      ['openai/gpt-4o-mini', 2, 1],
    ]);
  });

  test('a tenant-scoped key sees its own tenant only, by tool and by hour', async () => {
    expect((await api('POST', '/tenants', { body: { id: 'globex', name: 'Globex' } })).status).toBe(201);
    const created = await api('POST', '/admin-keys', { body: { name: 'viewer-globex', role: 'viewer', tenant_id: 'globex' } });
    expect(created.status, created.text).toBe(201);
    const key = created.body.api_key as string;
    expect((await usage('?group_by=tool', key)).map((r) => [r.key, r.requests])).toEqual([['files/read', 1]]);
    expect((await usage('?group_by=hour', key)).map((r) => r.key)).toEqual(['2030-06-02T00:00:00Z']);
  });

  test('other groupings are refused', async () => {
    for (const g of ['week', 'minute', 'server', 'HOUR']) expectError(await api('GET', `/usage?group_by=${g}`), 400, 'validation_failed', 'group_by');
  });
});
