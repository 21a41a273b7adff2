import { describe, expect, it } from 'vitest';
import type { TraceSummary, TracesQuery } from '../admin-client/types.js';
import { followTraces } from './follow-traces.js';

const T0 = Date.parse('2026-01-31T10:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

function trace(id: string, startMs: number, endMs: number, requests = 1, tenant = 'acme'): TraceSummary {
  return {
    trace_id: id,
    tenant_id: tenant,
    agent_id: 'agt_0123456789abcdef',
    started_at: iso(startMs),
    ended_at: iso(endMs),
    request_count: requests,
    error_count: 0,
    prompt_tokens: 10 * requests,
    completion_tokens: 5 * requests,
    cost: 0.001 * requests,
    stopped: null,
  };
}

/** A gateway whose traces change between polls as a script says; the clock moves 2 s per poll. */
class ScriptedGateway {
  polls = 0;
  queries: Omit<TracesQuery, 'limit' | 'cursor'>[] = [];
  clock = T0;
  constructor(private readonly script: TraceSummary[][]) {}

  now = () => this.clock;

  async listAllTraces(q: Omit<TracesQuery, 'limit' | 'cursor'>): Promise<TraceSummary[]> {
    this.queries.push(q);
    const all = this.script[Math.min(this.polls, this.script.length - 1)];
    this.polls++;
    this.clock += 2_000;
    return all.filter((t) => !q.since || t.started_at >= q.since);
  }
}

async function collect(gw: ScriptedGateway, opts: { maxPolls: number; idleWindowMs?: number; signal?: AbortSignal }) {
  const batches: string[][] = [];
  for await (const batch of followTraces(gw, { intervalMs: 0, now: gw.now, ...opts })) {
    batches.push(batch.map((t) => `${t.trace_id}:${t.request_count}`));
  }
  return batches;
}

describe('following traces', () => {
  it('prints new and changed traces once, and history not at all', async () => {
    const old = trace('old', -60_000, -50_000);
    const gw = new ScriptedGateway([
      [old],
      [old, trace('a', 2_500, 2_600)],
      [old, trace('a', 2_500, 2_600)],
      [old, trace('a', 2_500, 4_100, 2), trace('b', 4_000, 4_050)],
      [old, trace('a', 2_500, 4_100, 2), trace('b', 4_000, 4_050)],
    ]);
    expect(await collect(gw, { maxPolls: 5 })).toEqual([['a:1'], ['b:1', 'a:2']]);
    expect(gw.polls).toBe(5);
  });

  it('a trace active before the start that changes is news', async () => {
    const gw = new ScriptedGateway([[trace('long', -30_000, -20_000)], [trace('long', -30_000, 1_000, 2)]]);
    expect(await collect(gw, { maxPolls: 2 })).toEqual([['long:2']]);
  });

  it('the same trace id in two tenants is two traces', async () => {
    const gw = new ScriptedGateway([[], [trace('x', 1_000, 1_100, 1, 'acme'), trace('x', 1_000, 1_100, 1, 'globex')]]);
    expect(await collect(gw, { maxPolls: 2 })).toEqual([['x:1', 'x:1']]);
  });

  it('since moves forward past idle traces without printing anything twice', async () => {
    const gw = new ScriptedGateway([[trace('a', 500, 600)], [trace('a', 500, 600)], [trace('a', 500, 600), trace('b', 4_500, 4_600)], [trace('b', 4_500, 4_600)]]);
    const batches = await collect(gw, { maxPolls: 6, idleWindowMs: 3_000 });
    expect(batches).toEqual([['a:1'], ['b:1']]);
    const since = gw.queries.map((q) => Date.parse(q.since!) - T0);
    expect(since[0]).toBe(-3_000);
    for (let i = 1; i < since.length; i++) expect(since[i]).toBeGreaterThanOrEqual(since[i - 1]);
    // a stays followed while active, then drops out of the window
    expect(since[since.length - 1]).toBeGreaterThan(500);
  });

  it('stops when signalled, between polls or during one', async () => {
    const controller = new AbortController();
    const gw = new ScriptedGateway([[]]);
    const slow = {
      listAllTraces: (q: Omit<TracesQuery, 'limit' | 'cursor'>) => {
        if (gw.polls === 2) setTimeout(() => controller.abort(), 5);
        return gw.polls >= 2 ? new Promise<TraceSummary[]>(() => {}) : gw.listAllTraces(q);
      },
    };
    const seen = [];
    for await (const b of followTraces(slow, { intervalMs: 1, now: gw.now, signal: controller.signal })) seen.push(b);
    expect(seen).toEqual([]);
    expect(gw.polls).toBe(2);
  });
});
