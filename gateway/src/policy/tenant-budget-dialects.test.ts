// The tenant budget cases of the dialect policy suite (dialect-policies.test.ts), in a file of their own: every dialect,
// streamed or not, refuses a spent tenant pool with its own error shape and the headers of every budget 429.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../contract/index.js';
import { adminClient } from '../test-support/admin.js';
import { RFC3339, expectSentence } from '../test-support/admin-api.js';
import { type Answer, type Ask, type Dialect, dialects, expectedErrorType, send } from '../test-support/dialects.js';
import { ANTHROPIC_MODEL, CHAT_ONLY_MODEL, type DialectGateway, OPENAI_MODEL, RESPONSES_MODEL, startDialectGateway } from '../test-support/dialect-gateway.js';
import { type FakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway } from '../test-support/gateway.js';
import { type ScriptedAnthropic } from '../test-support/scripted-anthropic.js';
import { type ScriptedResponses } from '../test-support/scripted-responses.js';

/** USD per million tokens: output dominates, so 8,000 output tokens cost up to $0.08. */
const INPUT_PRICE = 0.1;
const OUTPUT_PRICE = 10;
const PROMPT_SLACK_TOKENS = Math.ceil((2_000 * INPUT_PRICE) / OUTPUT_PRICE);

let gw: TestGateway;
let openai: FakeOpenAI;
let anthropic: ScriptedAnthropic;
let responsesUpstream: ScriptedResponses;
let admin: ReturnType<typeof adminClient>;
let table: Dialect[] = [];
let n = 0;

let harness: DialectGateway | undefined;

beforeAll(async () => {
  harness = await startDialectGateway({ prices: { input: INPUT_PRICE, output: OUTPUT_PRICE } });
  ({ gw, openai, anthropic, responsesUpstream, admin, table } = harness);
});
afterAll(async () => {
  await harness?.close();
});

const DIALECTS = ['chat completions', 'messages native', 'messages translated', 'responses translated', 'responses translated to anthropic', 'responses native'] as const;
const STREAMS = [false, true] as const;

function dialect(name: string): Dialect {
  const d = table.find((x) => x.name === name);
  if (!d) throw new Error(`no dialect ${name}`);
  return d;
}

/** A fresh tenant with these budgets, and an agent of it with the given policy (none by default). */
async function tenantAgent(budgets: Record<string, unknown>, policy?: Record<string, unknown>): Promise<{ tenantId: string; key: string }> {
  const tenantId = `tb${++n}`;
  await admin.call('POST', '/tenants', { id: tenantId, name: tenantId, ...budgets });
  if (policy) await admin.policy(`${tenantId}-policy`, { tenant_id: tenantId, ...policy });
  const agent = await admin.agent(tenantId, 'bot', policy ? `${tenantId}-policy` : undefined);
  return { tenantId, key: agent.api_key as string };
}

function ask(d: Dialect, key: string, a: Ask = {}): Promise<Answer> {
  return send(gw.url, d, d.body(a), { key });
}

function expectServed(d: Dialect, res: Answer, stream: boolean): void {
  expect(res.status, `${d.name}: ${res.text}`).toBe(200);
  if (stream) expect(res.text).toContain(d.served.streamEnd);
  else expect(res.json).toMatchObject(d.served.json);
}

/** The refusal in the dialect's error shape, with CONTRACT's status, type, code and the headers of a budget 429. */
function expectRefused(d: Dialect, res: Answer, status: number, code: string): void {
  const where = `${d.name}: ${res.status} ${res.text}`;
  expect(res.status, where).toBe(status);
  const err = d.error(res.json);
  expect(err, where).not.toBeNull();
  expect(err!.code, where).toBe(code);
  // OpenAI shape: CONTRACT's type for the code (the shared table of test-support/dialects.ts predates the tenant codes).
  expect(err!.type, where).toBe(d.errorShape === 'anthropic' ? expectedErrorType(d, status, code) : ERROR_CODES[code as ErrorCode].type);
  expectSentence(err!.message);
  expect(res.headers.get('x-should-retry'), where).toBe('false');
  if (status === 429) {
    expect(Number(res.headers.get('retry-after')), where).toBeGreaterThan(0);
    expect(res.headers.get('x-agentgw-budget-reset'), where).toMatch(RFC3339);
  }
}

describe.each(DIALECTS)('%s: tenant budgets', (name) => {
  test.each(STREAMS)('429 tenant_daily_budget_exceeded with Retry-After and x-agentgw-budget-reset, for an agent without a policy (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await tenantAgent({ daily_budget: 0.001 });
    const before = d.upstream.count();
    const res = await ask(d, key, { stream, maxTokens: 8_000 });
    expectRefused(d, res, 429, 'tenant_daily_budget_exceeded');
    expect(res.headers.get('x-agentgw-budget-reset')!.slice(0, 10)).toBe(new Date(Date.now() + 86_400_000).toISOString().slice(0, 10));
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(86_400);
    expect(d.upstream.count()).toBe(before);
  });

  test.each(STREAMS)('429 tenant_monthly_budget_exceeded, reset at the first of next month (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await tenantAgent({ monthly_budget: 0.001, daily_budget: 100 });
    const res = await ask(d, key, { stream, maxTokens: 8_000 });
    expectRefused(d, res, 429, 'tenant_monthly_budget_exceeded');
    expect(res.headers.get('x-agentgw-budget-reset')).toMatch(/^\d{4}-\d{2}-01T00:00:00Z$/);
  });

  test.each(STREAMS)('403 price_unknown when only the tenant has a budget (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await tenantAgent({ monthly_budget: 5 });
    const provider = d.model.slice(0, d.model.indexOf('/'));
    const before = d.upstream.count();
    expectRefused(d, await ask(d, key, { stream, model: `${provider}/some-unpriced-model` }), 403, 'price_unknown');
    expect(d.upstream.count()).toBe(before);
  });

  test.each(STREAMS)('served within the pool, its cost in the tenant spend; clamp_output lowers a request to what is left of the pool (stream %s)', async (stream) => {
    const d = dialect(name);
    const daily = 0.01;
    const { tenantId, key } = await tenantAgent({ daily_budget: daily }, { rules: { clamp_output: true } });
    expectServed(d, await ask(d, key, { stream, maxTokens: 300 }), stream);
    await gw.runtime.dataPlane.usage.flush();
    const spent = (await admin.call('GET', `/tenants/${tenantId}`)).spend.day as number;
    expect(spent).toBeGreaterThan(0);
    const res = await ask(d, key, { stream, maxTokens: 8_000 });
    expectServed(d, res, stream);
    const clamped = Number(res.headers.get('x-agentgw-clamped-max-tokens'));
    const most = Math.floor(((daily - spent) / OUTPUT_PRICE) * 1e6);
    expect(clamped).toBeLessThanOrEqual(most);
    expect(clamped).toBeGreaterThanOrEqual(most - PROMPT_SLACK_TOKENS);
    expect(d.upstream.maxTokens(d.upstream.last())).toBe(clamped);
  });
});
