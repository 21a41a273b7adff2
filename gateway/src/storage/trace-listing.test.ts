import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openTestStore, usageRecord, type TestStore } from '../test-support/store.js';
import type { KyselyStore } from './kysely-store.js';
import type { TraceSummary } from '../contract/index.js';
import type { TraceFilter, UsageRecord } from './store.js';

/**
 * Trace listings read usage rows newest first and stop early; this holds them to the plain definition (group all rows
 * by tenant and trace, filter, sort) on a table large enough to take several scan chunks, with many traces starting
 * in the same millisecond, long-running traces, trace ids shared by tenants and agents sharing a trace.
 */
const T0 = Date.parse('2032-05-01T00:00:00.000Z');
const TENANTS = ['ta', 'tb', 'tc'];
const AGENTS: Record<string, string[]> = { ta: ['agt_a1', 'agt_a2'], tb: ['agt_b1'], tc: ['agt_c1', 'agt_c2'] };

function dataset(seed: number): UsageRecord[] {
  // mulberry32: a small seeded generator, so each run sees the same table.
  let s = seed >>> 0;
  const rnd = (n: number) => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
  const rows: UsageRecord[] = [];
  for (let i = 0; i < 1400; i++) {
    const tenant = TENANTS[rnd(10) < 6 ? 0 : 1 + rnd(2)]!;
    const agents = AGENTS[tenant]!;
    // Few ids and coarse times: ids shared across tenants and many rows in the same millisecond.
    const trace = rnd(4) === 0 ? `run-${rnd(30)}` : `t-${rnd(150).toString(36)}`;
    // Most traces are short, some are spread over the whole range (long-running).
    const at = rnd(5) === 0 ? rnd(600) : (Number.parseInt(trace.slice(2), 36) || 0) * 2 + rnd(6);
    rows.push(
      usageRecord({
        trace_id: trace,
        tenant_id: tenant,
        agent_id: agents[rnd(agents.length)]!,
        started_at: new Date(T0 + at * 1000 + rnd(3)).toISOString(),
        status: rnd(7) === 0 ? 'error' : 'ok',
        prompt_tokens: rnd(50),
        completion_tokens: rnd(20),
        cost: rnd(1000) / 1000,
        latency_ms: rnd(5000) + 0.25,
      }),
    );
  }
  return rows;
}

/** The definition: every row that the filter's tenant and agent cover, grouped by (tenant, trace). */
function expected(rows: UsageRecord[], f: Omit<TraceFilter, 'limit' | 'cursor'>): TraceSummary[] {
  const groups = new Map<string, UsageRecord[]>();
  for (const r of rows) {
    if (f.tenant_id && r.tenant_id !== f.tenant_id) continue;
    if (f.agent_id && r.agent_id !== f.agent_id) continue;
    const key = `${r.tenant_id}\u0000${r.trace_id}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const out: TraceSummary[] = [];
  for (const g of groups.values()) {
    const started = g.map((r) => r.started_at).sort()[0]!;
    if (f.since && started < f.since) continue;
    out.push({
      trace_id: g[0]!.trace_id,
      tenant_id: g[0]!.tenant_id,
      agent_id: g.map((r) => r.agent_id).sort()[0]!,
      started_at: started,
      ended_at: g.map((r) => new Date(Date.parse(r.started_at) + Math.round(r.latency_ms)).toISOString()).sort().at(-1)!,
      request_count: g.length,
      error_count: g.filter((r) => r.status !== 'ok').length,
      prompt_tokens: g.reduce((n, r) => n + r.prompt_tokens, 0),
      completion_tokens: g.reduce((n, r) => n + r.completion_tokens, 0),
      cost: g.reduce((n, r) => n + r.cost, 0),
      stopped: null,
    });
  }
  const key = (t: TraceSummary) => [t.started_at, t.trace_id, t.tenant_id];
  return out.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? 1 : -1;
    return 0;
  });
}

const comparable = (t: TraceSummary) => ({ ...t, cost: Math.round(t.cost * 1e6) });

describe.each(['sqlite', 'postgres'] as const)('trace listing on %s', (kind) => {
  let ts: TestStore;
  const rows = dataset(kind === 'sqlite' ? 7 : 11);
  beforeAll(async () => {
    ts = await openTestStore(kind);
    for (let i = 0; i < rows.length; i += 200) await ts.store.insertUsage(rows.slice(i, i + 200));
  });
  afterAll(async () => ts?.close());

  test('the dataset has what the listing must get right', () => {
    const all = expected(rows, {});
    expect(all.length).toBeGreaterThan(150);
    expect(new Set(all.map((t) => t.started_at)).size).toBeLessThan(all.length);
    expect(all.some((t) => Date.parse(t.ended_at) - Date.parse(t.started_at) > 300_000)).toBe(true);
    expect(new Set(all.map((t) => t.trace_id)).size).toBeLessThan(all.length);
  });

  test('every page, followed by its cursor, is the definition cut into pages', async () => {
    const filter = fc.record({
      limit: fc.integer({ min: 1, max: 300 }),
      tenant: fc.option(fc.constantFrom(...TENANTS), { nil: undefined }),
      agent: fc.option(fc.constantFrom('agt_a1', 'agt_a2', 'agt_b1', 'agt_c2'), { nil: undefined }),
      since: fc.option(fc.integer({ min: -5, max: 620 }), { nil: undefined }),
      // Small scan steps put step boundaries inside runs of rows with the same time.
      chunk: fc.constantFrom(1, 2, 3, 7, 50, 500),
    });
    await fc.assert(
      fc.asyncProperty(filter, async ({ limit, tenant, agent, since, chunk }) => {
        (ts.store as KyselyStore).traceScanChunk = chunk;
        const f = { tenant_id: tenant, agent_id: agent, since: since === undefined ? undefined : new Date(T0 + since * 1000).toISOString() };
        const want = expected(rows, f).map(comparable);
        const got: TraceSummary[] = [];
        let cursor: string | undefined;
        for (let pages = 0; ; pages++) {
          expect(pages).toBeLessThanOrEqual(want.length);
          const page = await ts.store.listTraces({ ...f, limit, cursor });
          expect(page.data.length).toBeLessThanOrEqual(limit);
          got.push(...page.data);
          if (page.next_cursor === null) break;
          expect(page.data.length).toBe(limit);
          cursor = page.next_cursor;
        }
        expect(got.map(comparable)).toEqual(want);
      }),
      { numRuns: kind === 'sqlite' ? 80 : 30 },
    );
  });
});
