// Issue 23, item 10, through a real gateway: a trace idle for AGENTGW_TRACE_IDLE_SECONDS leaves the in-memory counters,
// a new trace costs no database read, and a trace that comes back is read back from its usage rows, so
// max_cost_per_trace holds across its time out of memory.
import OpenAI, { type APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { MemoryCounters } from '../accounting/counters/memory.js';
import { adminClient } from '../test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

const IDLE_MS = 150;

let gw: TestGateway;
let upstream: FakeOpenAI;
let client: (trace: string) => OpenAI;
let counters: MemoryCounters;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ completionTokens: 10 });
  gw = await startTestGateway({
    env: { AGENTGW_TRACE_IDLE_SECONDS: String(IDLE_MS / 1000) },
    config: { providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } } },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  // gpt-4o-mini at $0.15 / $0.60 per M tokens: a request of ~10 prompt and 10 completion tokens costs about $0.0000075,
  // so a trace cap of $0.00005 admits a handful.
  await admin.policy('capped', { tenant_id: 'acme', rules: { max_cost_per_trace: 0.00005 } });
  const agent = await admin.agent('acme', 'bot', 'capped');
  client = (trace) => new OpenAI({ apiKey: agent.api_key, baseURL: gw.baseUrl, maxRetries: 0, defaultHeaders: { 'X-Agent-Trace-Id': trace } });
  counters = gw.runtime.dataPlane.counters as MemoryCounters;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** One step; 'refused' when the trace's cap stops it, and any other error thrown. */
async function step(trace: string): Promise<'ok' | 'refused'> {
  try {
    await client(trace).chat.completions.create({ model: 'openai/gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'next step' }] });
    return 'ok';
  } catch (e) {
    if ((e as APIError).code === 'trace_budget_exceeded') return 'refused';
    throw e;
  }
}

/** Steps until the cap refuses one (at most 100): how many were admitted. */
async function admittedUntilRefused(trace: string): Promise<number> {
  for (let n = 0; n < 100; n++) if ((await step(trace)) === 'refused') return n;
  throw new Error(`trace ${trace} was never refused`);
}

const idle = () => new Promise((r) => setTimeout(r, IDLE_MS * 2));

describe('max_cost_per_trace across a trace leaving memory', () => {
  test('a trace spent up to its cap, idle, then back: still refused, read back once, and new traces read nothing', async () => {
    const read = vi.spyOn(gw.runtime.store, 'traceSpend');
    // A control trace: how many steps the cap admits.
    const cap = await admittedUntilRefused('control');
    expect(cap).toBeGreaterThanOrEqual(3);
    expect(cap).toBeLessThan(20);

    // A trace spends half its cap, goes idle and leaves memory (any request runs the eviction).
    const half = Math.floor(cap / 2);
    for (let i = 0; i < half; i++) expect(await step('returning')).toBe('ok');
    await idle();
    expect(await step('someone-else')).toBe('ok');
    expect(counters.traceEntries()).toBe(1);
    expect(read).not.toHaveBeenCalled();

    // Back: it gets what was left of its cap, no more.
    expect(await admittedUntilRefused('returning')).toBe(cap - half);
    expect(read).toHaveBeenCalledTimes(1);
    expect(read).toHaveBeenLastCalledWith('acme', 'returning');

    // Spent out, idle again, back again: refused at once.
    await idle();
    expect(await step('returning')).toBe('refused');
    expect(read).toHaveBeenCalledTimes(2);

    // Fresh traces never read the database (no false positive is likely among 20 ids).
    read.mockClear();
    for (let i = 0; i < 20; i++) expect(await step(`fresh-${i}`)).toBe('ok');
    expect(read).not.toHaveBeenCalled();
    read.mockRestore();
  });

  test('concurrent requests of a returning trace share one read and never pass the cap together', async () => {
    const cap = await admittedUntilRefused('burst-control');
    expect(await step('burst')).toBe('ok');
    await idle();
    expect(await step('someone-else-2')).toBe('ok');
    const read = vi.spyOn(gw.runtime.store, 'traceSpend');
    const results = await Promise.all(Array.from({ length: cap + 5 }, () => step('burst')));
    // Holds are the worst case, so concurrent steps may get fewer than sequential ones: never more.
    const admitted = results.filter((r) => r === 'ok').length;
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThanOrEqual(cap - 1);
    expect(read).toHaveBeenCalledTimes(1);
    read.mockRestore();
  });
});
