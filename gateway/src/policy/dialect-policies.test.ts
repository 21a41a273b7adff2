// One policy suite, run against every dialect: Chat Completions, Anthropic Messages native (to an Anthropic upstream) and
// Anthropic Messages translated (to an OpenAI-format upstream), OpenAI Responses translated (to the OpenAI-format upstream
// through an openai-compatible provider, and to the Anthropic upstream) and native (to a Responses upstream as an `openai`
// provider). Each case gets its own agent, policy and trace.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { RFC3339, type TraceDetail, expectSentence } from '../test-support/admin-api.js';
import { type Answer, type Ask, type Dialect, dialects, expectedErrorType, send } from '../test-support/dialects.js';
import { ANTHROPIC_MODEL, CHAT_ONLY_MODEL, type DialectGateway, OPENAI_MODEL, RESPONSES_MODEL, startDialectGateway } from '../test-support/dialect-gateway.js';
import { type FakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway } from '../test-support/gateway.js';
import { type ScriptedAnthropic } from '../test-support/scripted-anthropic.js';
import { type ScriptedResponses, lastUserText, textResponse } from '../test-support/scripted-responses.js';

/** The native Responses upstream answers this with an email address (for PII in a stored assistant turn). */
const SAY_AN_EMAIL = 'say an email address';
/** USD per million tokens. Output dominates, so an output limit that fits `usd` is about usd / OUTPUT_PRICE * 1e6. */
const INPUT_PRICE = 0.1;
const OUTPUT_PRICE = 10;
/** The prompts here stay well under this many tokens, so their share of a worst case is a few output tokens. */
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
  harness = await startDialectGateway({
    prices: { input: INPUT_PRICE, output: OUTPUT_PRICE },
    responses: (body) => textResponse(lastUserText(body).includes(SAY_AN_EMAIL) ? 'write to jane.doe@example.com' : 'fine, thanks'),
  });
  ({ gw, openai, anthropic, responsesUpstream, admin, table } = harness);
  await admin.tenant('acme');
  await admin.tenant('other');
  await admin.policy('foreign-policy', { tenant_id: 'other' });
  await admin.policy('global-allows-nothing', { allowed_models: [] });
  await admin.policy('global-allows-all', { allowed_models: ['openai/*', 'anthropic/*', 'compat/*', 'oairesp/*'] });
});
afterAll(async () => {
  await harness?.close();
});

const DIALECTS = [
  'chat completions',
  'messages native',
  'messages translated',
  'responses translated',
  'responses translated to anthropic',
  'responses native',
] as const;
const RESPONSES_DIALECTS = ['responses translated', 'responses translated to anthropic', 'responses native'] as const;
const STREAMS = [false, true] as const;

function dialect(name: string): Dialect {
  const d = table.find((x) => x.name === name);
  if (!d) throw new Error(`no dialect ${name}`);
  return d;
}

/** A fresh agent of tenant acme with its own policy. */
async function agentWith(policy: Record<string, unknown>): Promise<{ policyId: string; key: string; agentId: string }> {
  const policyId = `dp${++n}`;
  await admin.policy(policyId, { tenant_id: 'acme', ...policy });
  const agent = await admin.agent('acme', `bot-${policyId}`, policyId);
  return { policyId, key: agent.api_key as string, agentId: agent.id as string };
}

const traceId = (label: string) => `dialect-${label}-${++n}`;

function ask(d: Dialect, key: string | null, a: Ask = {}, headers: Record<string, string> = {}): Promise<Answer> {
  return send(gw.url, d, d.body(a), { key, headers });
}

function expectServed(d: Dialect, res: Answer, stream: boolean): void {
  expect(res.status, res.text).toBe(200);
  if (stream) {
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.text).toContain(d.served.streamEnd);
    expect(res.text).not.toContain('event: error');
    expect(res.text).not.toContain('response.failed');
  } else {
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.json).toMatchObject(d.served.json);
  }
}

/** The refusal in the dialect's error shape, with CONTRACT's status, type, code and headers. */
function expectRefused(d: Dialect, res: Answer, status: number, code: string): void {
  const where = `${d.name}: ${res.status} ${res.text}`;
  expect(res.status, where).toBe(status);
  expect(res.headers.get('content-type') ?? '', where).toMatch(/^application\/json/);
  const err = d.error(res.json);
  expect(err, where).not.toBeNull();
  expect(err!.code, where).toBe(code);
  expect(err!.type, where).toBe(expectedErrorType(d, status, code));
  expectSentence(err!.message);
  const requestId = res.headers.get('x-request-id');
  expect(requestId, where).toBeTruthy();
  expect(res.headers.get('x-agent-trace-id'), where).toBeTruthy();
  if (d.errorShape === 'anthropic') expect(res.json.request_id, where).toBe(requestId);
  // Budget 429s and policy 403s must not be retried; rate limits and 503s may be.
  const final = status === 403 || (status === 429 && /budget_exceeded$/.test(code));
  if (final) expect(res.headers.get('x-should-retry'), where).toBe('false');
  else expect(res.headers.get('x-should-retry'), where).not.toBe('false');
  if (status === 429 || status === 503) expect(Number(res.headers.get('retry-after')), where).toBeGreaterThan(0);
}

async function traceOf(res: Answer): Promise<TraceDetail> {
  await gw.runtime.dataPlane.usage.flush();
  return (await admin.call('GET', `/traces/${encodeURIComponent(res.headers.get('x-agent-trace-id')!)}`)) as TraceDetail;
}

/** Every step of the answer's trace records the dialect's endpoint. */
async function expectSteps(d: Dialect, res: Answer, steps: number): Promise<TraceDetail> {
  const trace = await traceOf(res);
  expect(trace.requests).toHaveLength(steps);
  for (const step of trace.requests) expect(step.endpoint, `${d.name} step ${step.request_id}`).toBe(d.endpoint);
  return trace;
}

/** The output limit that keeps the worst case within `usd`, give or take the prompt's share. */
function expectClampedTo(n: number, usd: number): void {
  const most = Math.floor((usd / OUTPUT_PRICE) * 1e6);
  expect(n).toBeLessThanOrEqual(most);
  expect(n).toBeGreaterThanOrEqual(most - PROMPT_SLACK_TOKENS);
}

describe.each(DIALECTS)('%s: every policy case', (name) => {
  test('401 invalid_api_key for a missing, unknown or malformed key, with nothing sent upstream', async () => {
    const d = dialect(name);
    const before = d.upstream.count();
    for (const key of [null, 'agk_unknownunknownunknownunknown12', 'not-a-key']) {
      const res = await ask(d, key);
      expectRefused(d, res, 401, 'invalid_api_key');
    }
    // Both auth headers work on /messages; chat and responses take Bearer.
    const { key } = await agentWith({});
    const viaBearer = await send(gw.url, d, d.body({}), { key, bearer: true });
    expectServed(d, viaBearer, false);
    expect(d.upstream.count()).toBe(before + 1);
  });

  test('503 maintenance with Retry-After, nothing sent upstream', async () => {
    const d = dialect(name);
    const { key } = await agentWith({});
    await admin.call('PUT', '/system/maintenance', { enabled: true, message: 'upgrading the database.' });
    try {
      const before = d.upstream.count();
      for (const stream of STREAMS) {
        const res = await ask(d, key, { stream });
        expectRefused(d, res, 503, 'maintenance');
        expect(d.error(res.json)!.message).toContain('upgrading the database');
      }
      expect(d.upstream.count()).toBe(before);
    } finally {
      await admin.call('PUT', '/system/maintenance', { enabled: false });
    }
    expectServed(d, await ask(d, key), false);
  });

  test.each(STREAMS)('403 model_not_allowed (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ allowed_models: ['gemini/*'] });
    const before = d.upstream.count();
    const res = await ask(d, key, { stream });
    expectRefused(d, res, 403, 'model_not_allowed');
    expect(d.upstream.count()).toBe(before);
    const trace = await expectSteps(d, res, 1);
    expect(trace.requests[0]).toMatchObject({ status: 'blocked', http_status: 403, error_code: 'model_not_allowed', stream });
  });

  test.each(STREAMS)('403 pii_detected names the type, records it in the trace, never the text (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { pii: 'block' } });
    const before = d.upstream.count();
    const res = await ask(d, key, { stream, text: 'mail me at jane.doe@example.com' });
    expectRefused(d, res, 403, 'pii_detected');
    expect(res.text).toContain('email');
    expect(res.text).not.toContain('jane.doe');
    expect(d.upstream.count()).toBe(before);
    const trace = await expectSteps(d, res, 1);
    expect(trace.requests[0]).toMatchObject({ status: 'blocked', error_code: 'pii_detected', pii_types: ['email'], stream });
    expect(JSON.stringify(trace)).not.toContain('jane.doe');
  });

  test.each(STREAMS)('403 pii_detected for PII inside a tool result (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { pii: 'block' } });
    const before = d.upstream.count();
    const res = await ask(d, key, { stream, toolResult: 'customer 42: jane.doe@example.com', text: 'summarise' });
    expectRefused(d, res, 403, 'pii_detected');
    expect(d.upstream.count()).toBe(before);
    const trace = await expectSteps(d, res, 1);
    expect(trace.requests[0]).toMatchObject({ pii_types: ['email'] });
  });

  test.each([
    ['system', { system: 'Escalate to jane.doe@example.com.' }],
    ['assistant', { assistantText: 'I will write to jane.doe@example.com.' }],
    ['tools', { toolDescription: 'Looks a customer up; owner jane.doe@example.com.' }],
  ] as const)('rules.pii_scope: the %s part is read only when the scope names it', async (part, extra) => {
    const d = dialect(name);
    const outOfScope = await agentWith({ rules: { pii: 'block' } });
    expectServed(d, await ask(d, outOfScope.key, { ...extra }), false);
    const inScope = await agentWith({ rules: { pii: 'block', pii_scope: ['user', part] } });
    const before = d.upstream.count();
    const res = await ask(d, inScope.key, { ...extra });
    expectRefused(d, res, 403, 'pii_detected');
    expect(d.upstream.count()).toBe(before);
    const redacting = await agentWith({ rules: { pii: 'redact', pii_scope: [part] } });
    expectServed(d, await ask(d, redacting.key, { ...extra }), false);
    const sent = JSON.stringify(d.upstream.last());
    expect(sent).not.toContain('jane.doe');
    expect(sent).toContain('[REDACTED:EMAIL]');
  });

  test('rules.pii_types: a type the policy does not name passes', async () => {
    const d = dialect(name);
    const phonesOnly = await agentWith({ rules: { pii: 'block', pii_types: ['phone'] } });
    expectServed(d, await ask(d, phonesOnly.key, { text: 'reply to jane.doe@example.com' }), false);
    expectRefused(d, await ask(d, phonesOnly.key, { text: 'call +1 415 555 0123 now' }), 403, 'pii_detected');
  });

  test('the end user id that travels upstream (chat `user`, messages `metadata.user_id`, responses `safety_identifier`) is read as user input', async () => {
    const d = dialect(name);
    const block = await agentWith({ rules: { pii: 'block' } });
    expectRefused(d, await ask(d, block.key, { endUser: 'jane.doe@example.com' }), 403, 'pii_detected');
    const redact = await agentWith({ rules: { pii: 'redact' } });
    expectServed(d, await ask(d, redact.key, { endUser: 'jane.doe@example.com' }), false);
    expect(JSON.stringify(d.upstream.last())).not.toContain('jane.doe');
  });

  test.each(STREAMS)('PII redact: the upstream receives [REDACTED:EMAIL], in the user text and in a tool result (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { pii: 'redact' } });
    const res = await ask(d, key, { stream, toolResult: 'customer 42: jane.doe@example.com', text: 'write to john.roe@example.org' });
    expectServed(d, res, stream);
    const sent = JSON.stringify(d.upstream.last());
    expect(sent).not.toContain('jane.doe');
    expect(sent).not.toContain('john.roe');
    expect(sent.match(/\[REDACTED:EMAIL\]/g)).toHaveLength(2);
    expect(sent).toContain('customer 42: [REDACTED:EMAIL]');
    const trace = await expectSteps(d, res, 1);
    expect(trace.requests[0]).toMatchObject({ status: 'ok', pii_types: ['email'], stream });
  });

  test.each(STREAMS)('403 retry_blocked on the N+1th identical request of one trace (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { retry_block: { max_repeats: 2, window_seconds: 60 } } });
    const headers = { 'X-Agent-Trace-Id': traceId('retry') };
    expectServed(d, await ask(d, key, { stream, text: 'same again' }, headers), stream);
    expectServed(d, await ask(d, key, { stream, text: 'same again' }, headers), stream);
    const before = d.upstream.count();
    const res = await ask(d, key, { stream, text: 'same again' }, headers);
    expectRefused(d, res, 403, 'retry_blocked');
    expect(d.upstream.count()).toBe(before);
    expectServed(d, await ask(d, key, { stream, text: 'something else' }, headers), stream);
    const trace = await expectSteps(d, res, 4);
    expect(trace.requests.map((r) => r.error_code)).toEqual([null, null, 'retry_blocked', null]);
  });

  test.each(STREAMS)('429 rpm_exceeded with Retry-After and no x-should-retry: false (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { rpm: 1 } });
    const headers = { 'X-Agent-Trace-Id': traceId('rpm') };
    expectServed(d, await ask(d, key, { stream }, headers), stream);
    const before = d.upstream.count();
    const res = await ask(d, key, { stream }, headers);
    expectRefused(d, res, 429, 'rpm_exceeded');
    expect(res.headers.get('x-should-retry')).toBeNull();
    expect(d.upstream.count()).toBe(before);
    await expectSteps(d, res, 2);
  });

  test.each(STREAMS)('429 tpm_exceeded with Retry-After (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { tpm: 1 } });
    const before = d.upstream.count();
    const res = await ask(d, key, { stream, text: 'a prompt that is clearly longer than one token' });
    expectRefused(d, res, 429, 'tpm_exceeded');
    expect(res.headers.get('x-should-retry')).toBeNull();
    expect(d.upstream.count()).toBe(before);
    await expectSteps(d, res, 1);
  });

  test.each(STREAMS)('403 price_unknown: a budgeted agent asks for a model without a price (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ monthly_budget: 5 });
    const provider = d.model.slice(0, d.model.indexOf('/'));
    const before = d.upstream.count();
    const res = await ask(d, key, { stream, model: `${provider}/some-unpriced-model` });
    expectRefused(d, res, 403, 'price_unknown');
    expect(d.upstream.count()).toBe(before);
    await expectSteps(d, res, 1);
  });

  test.each(STREAMS)('403 cost_cap_exceeded when the worst case passes max_cost_per_request (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { max_cost_per_request: 0.01 } });
    const before = d.upstream.count();
    // 8,000 output tokens at $10 per million: up to $0.08.
    const res = await ask(d, key, { stream, maxTokens: 8_000 });
    expectRefused(d, res, 403, 'cost_cap_exceeded');
    expect(res.headers.get('x-agentgw-clamped-max-tokens')).toBeNull();
    expect(d.upstream.count()).toBe(before);
    expectServed(d, await ask(d, key, { stream, maxTokens: 500 }), stream);
    await expectSteps(d, res, 1);
  });

  test.each(STREAMS)('429 daily_budget_exceeded with Retry-After and x-agentgw-budget-reset (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ daily_budget: 0.001 });
    const before = d.upstream.count();
    const res = await ask(d, key, { stream, maxTokens: 8_000 });
    expectRefused(d, res, 429, 'daily_budget_exceeded');
    const reset = res.headers.get('x-agentgw-budget-reset') ?? '';
    expect(reset).toMatch(RFC3339);
    expect(reset.slice(0, 10)).toBe(new Date(Date.now() + 86_400_000).toISOString().slice(0, 10));
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(86_400);
    expect(d.upstream.count()).toBe(before);
    await expectSteps(d, res, 1);
  });

  test.each(STREAMS)('429 monthly_budget_exceeded with x-agentgw-budget-reset at the first of next month (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ monthly_budget: 0.001, daily_budget: 100 });
    const before = d.upstream.count();
    const res = await ask(d, key, { stream, maxTokens: 8_000 });
    expectRefused(d, res, 429, 'monthly_budget_exceeded');
    expect(res.headers.get('x-agentgw-budget-reset')).toMatch(/^\d{4}-\d{2}-01T00:00:00Z$/);
    expect(d.upstream.count()).toBe(before);
  });

  test.each(STREAMS)('429 trace_budget_exceeded (stream %s)', async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { max_cost_per_trace: 0.001 } });
    const before = d.upstream.count();
    const res = await ask(d, key, { stream, maxTokens: 8_000 }, { 'X-Agent-Trace-Id': traceId('trace-budget') });
    expectRefused(d, res, 429, 'trace_budget_exceeded');
    expect(res.headers.get('x-agentgw-budget-reset')).toMatch(RFC3339);
    expect(d.upstream.count()).toBe(before);
    await expectSteps(d, res, 1);
  });

  test('X-Agent-Policy: a foreign or unknown policy is 403 policy_not_permitted', async () => {
    const d = dialect(name);
    const { key } = await agentWith({});
    const before = d.upstream.count();
    for (const stream of STREAMS) {
      for (const policy of ['foreign-policy', 'no-such-policy']) {
        const res = await ask(d, key, { stream }, { 'X-Agent-Policy': policy });
        expectRefused(d, res, 403, 'policy_not_permitted');
      }
    }
    expect(d.upstream.count()).toBe(before);
  });

  test.each(STREAMS)("X-Agent-Policy only tightens: the header policy's allow-list applies too (stream %s)", async (stream) => {
    const d = dialect(name);
    const { key } = await agentWith({ allowed_models: null });
    const headers = { 'X-Agent-Trace-Id': traceId('header-policy') };
    const res = await ask(d, key, { stream }, { ...headers, 'X-Agent-Policy': 'global-allows-nothing' });
    expectRefused(d, res, 403, 'model_not_allowed');
    expectServed(d, await ask(d, key, { stream }, { ...headers, 'X-Agent-Policy': 'global-allows-all' }), stream);
    // And it cannot loosen the agent's own.
    const strict = await agentWith({ allowed_models: [] });
    const loosened = await ask(d, strict.key, { stream }, { ...headers, 'X-Agent-Policy': 'global-allows-all' });
    expectRefused(d, loosened, 403, 'model_not_allowed');
  });

  test.each(STREAMS)('clamp_output under max_cost_per_request: served with a lowered output limit (stream %s)', async (stream) => {
    const d = dialect(name);
    const cap = 0.01;
    const { key } = await agentWith({ rules: { max_cost_per_request: cap, clamp_output: true } });
    const res = await ask(d, key, { stream, maxTokens: 8_000 });
    expectServed(d, res, stream);
    const header = res.headers.get('x-agentgw-clamped-max-tokens');
    expect(header, `${d.name}: x-agentgw-clamped-max-tokens`).toMatch(/^\d+$/);
    const clamped = Number(header);
    expectClampedTo(clamped, cap);
    expect(d.upstream.maxTokens(d.upstream.last())).toBe(clamped);
    // A request that fits is left alone.
    const fits = await ask(d, key, { stream, maxTokens: 300 });
    expectServed(d, fits, stream);
    expect(fits.headers.get('x-agentgw-clamped-max-tokens')).toBeNull();
    expect(d.upstream.maxTokens(d.upstream.last())).toBe(300);
    await expectSteps(d, res, 1);
  });

  test.each(STREAMS)('clamp_output never below 256 tokens: refused as before (stream %s)', async (stream) => {
    const d = dialect(name);
    // $0.002 buys 200 output tokens.
    const { key } = await agentWith({ rules: { max_cost_per_request: 0.002, clamp_output: true } });
    const before = d.upstream.count();
    const res = await ask(d, key, { stream, maxTokens: 8_000 });
    expectRefused(d, res, 403, 'cost_cap_exceeded');
    expect(res.headers.get('x-agentgw-clamped-max-tokens')).toBeNull();
    expect(d.upstream.count()).toBe(before);
  });

  test.each(STREAMS)('clamp_output under a daily budget: lowered to what is left of it (stream %s)', async (stream) => {
    const d = dialect(name);
    const daily = 0.01;
    const { key } = await agentWith({ daily_budget: daily, rules: { clamp_output: true } });
    const res = await ask(d, key, { stream, maxTokens: 8_000 });
    expectServed(d, res, stream);
    const header = res.headers.get('x-agentgw-clamped-max-tokens');
    expect(header, `${d.name}: x-agentgw-clamped-max-tokens`).toMatch(/^\d+$/);
    const clamped = Number(header);
    expectClampedTo(clamped, daily);
    expect(d.upstream.maxTokens(d.upstream.last())).toBe(clamped);

    const tiny = await agentWith({ daily_budget: 0.002, rules: { clamp_output: true } });
    const before = d.upstream.count();
    const refused = await ask(d, tiny.key, { stream, maxTokens: 8_000 });
    expectRefused(d, refused, 429, 'daily_budget_exceeded');
    expect(refused.headers.get('x-agentgw-budget-reset')).toMatch(RFC3339);
    expect(d.upstream.count()).toBe(before);
  });

  test.each(['x-claude-code-session-id', 'session-id', 'session_id', 'x-gateway-trace-id'])(
    'an agent client\'s %s is the trace: retry_block counts in it, and X-Agent-Trace-Id wins over it',
    async (header) => {
      const d = dialect(name);
      const { key } = await agentWith({ rules: { retry_block: { max_repeats: 1, window_seconds: 60 } } });
      const session = traceId('session');
      const first = await ask(d, key, { text: 'loop' }, { [header]: session });
      expectServed(d, first, false);
      expect(first.headers.get('x-agent-trace-id')).toBe(session);
      const second = await ask(d, key, { stream: true, text: 'loop' }, { [header]: session });
      expectRefused(d, second, 403, 'retry_blocked');
      expect(second.headers.get('x-agent-trace-id')).toBe(session);
      await expectSteps(d, second, 2);
      const named = traceId('named');
      const third = await ask(d, key, { text: 'loop' }, { [header]: session, 'X-Agent-Trace-Id': named });
      expectServed(d, third, false);
      expect(third.headers.get('x-agent-trace-id')).toBe(named);
    },
  );

  test.each(STREAMS)('clamp_output fits what is left of the daily budget after earlier spend, and of a trace budget (stream %s)', async (stream) => {
    const d = dialect(name);
    const daily = 0.01;
    const { key, agentId } = await agentWith({ daily_budget: daily, rules: { clamp_output: true } });
    expectServed(d, await ask(d, key, { stream, maxTokens: 300 }), stream);
    await gw.runtime.dataPlane.usage.flush();
    const spent = ((await admin.call('GET', `/agents/${agentId}`)) as { spend: { day: number } }).spend.day;
    expect(spent).toBeGreaterThan(0);
    const res = await ask(d, key, { stream, maxTokens: 8_000 });
    expectServed(d, res, stream);
    const clamped = Number(res.headers.get('x-agentgw-clamped-max-tokens'));
    expectClampedTo(clamped, daily - spent);
    expect(d.upstream.maxTokens(d.upstream.last())).toBe(clamped);

    const perTrace = 0.005;
    const t = await agentWith({ rules: { max_cost_per_trace: perTrace, clamp_output: true } });
    const inTrace = await ask(d, t.key, { stream, maxTokens: 8_000 }, { 'X-Agent-Trace-Id': traceId('trace-clamp') });
    expectServed(d, inTrace, stream);
    const traceClamped = Number(inTrace.headers.get('x-agentgw-clamped-max-tokens'));
    expectClampedTo(traceClamped, perTrace);
    expect(d.upstream.maxTokens(d.upstream.last())).toBe(traceClamped);
  });

  test("CONTRACT's order: PII before rpm, rpm before the cost cap, the cost cap before budgets", async () => {
    const d = dialect(name);
    const { key } = await agentWith({ daily_budget: 0.000001, rules: { pii: 'block', rpm: 1, max_cost_per_request: 0.000001 } });
    // Refused by PII, so it is not counted against rpm.
    expectRefused(d, await ask(d, key, { text: 'mail jane.doe@example.com' }), 403, 'pii_detected');
    // Passes rpm (and is counted), then the cost cap refuses it before the budget can.
    expectRefused(d, await ask(d, key), 403, 'cost_cap_exceeded');
    expectRefused(d, await ask(d, key), 429, 'rpm_exceeded');
  });

  test('400 invalid_header for a bad X-Agent-Trace-Id, in the dialect\'s shape', async () => {
    const d = dialect(name);
    const { key } = await agentWith({});
    const res = await ask(d, key, {}, { 'X-Agent-Trace-Id': 'x'.repeat(129) });
    expectRefused(d, res, 400, 'invalid_header');
  });

  test('every step of a mixed trace records the endpoint', async () => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { pii: 'block' } });
    const headers = { 'X-Agent-Trace-Id': traceId('endpoint') };
    expectServed(d, await ask(d, key, {}, headers), false);
    expectServed(d, await ask(d, key, { stream: true }, headers), true);
    expectRefused(d, await ask(d, key, { text: 'call 555-867-5309 or jane.doe@example.com' }, headers), 403, 'pii_detected');
    const last = await ask(d, key, { stream: true, text: 'reply to jane.roe@example.com' }, headers);
    expectRefused(d, last, 403, 'pii_detected');
    const trace = await expectSteps(d, last, 4);
    expect(trace.requests.map((r) => [r.stream, r.status])).toEqual([
      [false, 'ok'],
      [true, 'ok'],
      [false, 'blocked'],
      [true, 'blocked'],
    ]);
  });
});

describe('chat completions: the older max_tokens field', () => {
  test('a clamped request that wrote max_tokens reaches the upstream with max_tokens lowered', async () => {
    const d = dialect('chat completions');
    const { key } = await agentWith({ rules: { max_cost_per_request: 0.01, clamp_output: true } });
    const res = await ask(d, key, { maxTokens: 8_000, legacyMaxTokens: true });
    expectServed(d, res, false);
    const clamped = Number(res.headers.get('x-agentgw-clamped-max-tokens'));
    expectClampedTo(clamped, 0.01);
    const sent = d.upstream.last();
    expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(clamped);
    expect(sent.max_tokens !== undefined && sent.max_completion_tokens !== undefined).toBe(false);
  });
});

describe('chat completions: clamping what only chat has', () => {
  test('no output limit at all: the model maximum is clamped, and the upstream gets max_completion_tokens', async () => {
    const d = dialect('chat completions');
    const { key } = await agentWith({ rules: { max_cost_per_request: 0.01, clamp_output: true } });
    const body = d.body({});
    delete body.max_completion_tokens;
    const res = await send(gw.url, d, body, { key });
    expectServed(d, res, false);
    const clamped = Number(res.headers.get('x-agentgw-clamped-max-tokens'));
    expectClampedTo(clamped, 0.01);
    expect(d.upstream.last().max_completion_tokens).toBe(clamped);
  });

  test('n answers share the cap: each is clamped to a 1/n share', async () => {
    const d = dialect('chat completions');
    const { key } = await agentWith({ rules: { max_cost_per_request: 0.01, clamp_output: true } });
    const res = await send(gw.url, d, { ...d.body({ maxTokens: 8_000 }), n: 2 }, { key });
    expectServed(d, res, false);
    const clamped = Number(res.headers.get('x-agentgw-clamped-max-tokens'));
    expectClampedTo(clamped, 0.005);
    expect(d.upstream.last().max_completion_tokens).toBe(clamped);
  });
});

describe('messages: clamping and PII with what only Messages has', () => {
  test.each(STREAMS)('native: a thinking budget is lowered below the clamped max_tokens (stream %s)', async (stream) => {
    const d = dialect('messages native');
    const { key } = await agentWith({ rules: { max_cost_per_request: 0.03, clamp_output: true } });
    const res = await send(gw.url, d, { ...d.body({ stream, maxTokens: 16_000 }), thinking: { type: 'enabled', budget_tokens: 8_000 } }, { key });
    expectServed(d, res, stream);
    const clamped = Number(res.headers.get('x-agentgw-clamped-max-tokens'));
    expectClampedTo(clamped, 0.03);
    const sent = d.upstream.last();
    expect(sent.max_tokens).toBe(clamped);
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: clamped - 1 });
  });

  test('native: a thinking budget that cannot stay at 1,024 below the clamped limit is refused as before', async () => {
    const d = dialect('messages native');
    // $0.008 buys about 800 output tokens: no room for a 1,024-token thinking budget.
    const { key } = await agentWith({ rules: { max_cost_per_request: 0.008, clamp_output: true } });
    const before = d.upstream.count();
    const res = await send(gw.url, d, { ...d.body({ maxTokens: 16_000 }), thinking: { type: 'enabled', budget_tokens: 8_000 } }, { key });
    expectRefused(d, res, 403, 'cost_cap_exceeded');
    expect(d.upstream.count()).toBe(before);
  });

  test.each(['messages native', 'messages translated'])('%s: a tool_result whose content is a plain string is redacted too', async (name) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { pii: 'redact' } });
    const body = d.body({ toolResult: 'x', text: 'summarise' }) as { messages: Array<{ content: unknown }> };
    const turn = body.messages[2]!.content as Array<Record<string, unknown>>;
    turn[0]!.content = 'customer 42: jane.doe@example.com';
    const res = await send(gw.url, d, body, { key });
    expectServed(d, res, false);
    const sent = JSON.stringify(d.upstream.last());
    expect(sent).not.toContain('jane.doe');
    expect(sent).toContain('customer 42: [REDACTED:EMAIL]');
  });
});

describe('one agent across dialects: its counters are shared', () => {
  test('rpm, retry_block scope and the trace budget count requests of every dialect', async () => {
    const { key } = await agentWith({ rules: { rpm: DIALECTS.length } });
    const headers = { 'X-Agent-Trace-Id': traceId('cross') };
    for (const name of DIALECTS) expectServed(dialect(name), await ask(dialect(name), key, {}, headers), false);
    let last: Answer | undefined;
    for (const name of ['chat completions', 'responses native']) {
      last = await ask(dialect(name), key, {}, headers);
      expectRefused(dialect(name), last, 429, 'rpm_exceeded');
    }
    // One trace, three endpoints.
    const trace = await traceOf(last!);
    expect(trace.requests.map((r) => r.endpoint)).toEqual([...DIALECTS.map((name) => dialect(name).endpoint), 'chat.completions', 'responses']);
  });

  test('the daily budget spent on one dialect is what is left for another', async () => {
    const { key, agentId } = await agentWith({ daily_budget: 0.01, rules: { clamp_output: true } });
    expectServed(dialect('messages native'), await ask(dialect('messages native'), key, { maxTokens: 300 }), false);
    await gw.runtime.dataPlane.usage.flush();
    const spent = ((await admin.call('GET', `/agents/${agentId}`)) as { spend: { day: number } }).spend.day;
    expect(spent).toBeGreaterThan(0);
    const chat = dialect('chat completions');
    const res = await ask(chat, key, { maxTokens: 8_000 });
    expectServed(chat, res, false);
    expectClampedTo(Number(res.headers.get('x-agentgw-clamped-max-tokens')), 0.01 - spent);
  });
});

describe('messages: ?beta=true (Claude Code) gets the same policies', () => {
  test.each(['messages native', 'messages translated'])('%s: redact, clamp and refuse on /v1/messages?beta=true', async (name) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { pii: 'redact', max_cost_per_request: 0.01, clamp_output: true } });
    const res = await send(gw.url, d, d.body({ maxTokens: 8_000, toolResult: 'jane.doe@example.com' }), { key, query: '?beta=true' });
    expectServed(d, res, false);
    const sent = d.upstream.last();
    expect(JSON.stringify(sent)).not.toContain('jane.doe');
    expect(d.upstream.maxTokens(sent)).toBe(Number(res.headers.get('x-agentgw-clamped-max-tokens')));
    const refused = await send(gw.url, d, d.body({ maxTokens: 100_000 }), { key, query: '?beta=true', headers: { 'X-Agent-Policy': 'foreign-policy' } });
    expectRefused(d, refused, 403, 'policy_not_permitted');
  });
});

describe('responses: what only Responses has', () => {
  /** Asks, expects it served and stored, and returns the response id. */
  async function turn(d: Dialect, key: string, a: Ask, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<string> {
    const res = await send(gw.url, d, { ...d.body(a), ...extra }, { key, headers });
    expectServed(d, res, a.stream === true);
    const id = a.stream ? /"id":"(resp_[^"]+)"/.exec(res.text)?.[1] : res.json.id;
    expect(id).toMatch(/^resp_/);
    return id!;
  }

  test.each(RESPONSES_DIALECTS)('%s: a conversation stored redacted continues redacted, whoever reads it next', async (name) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { pii: 'redact' } });
    const first = await turn(d, key, { toolResult: 'customer 42: jane.doe@example.com', text: 'summarise' });
    for (const stream of STREAMS) {
      await turn(d, key, { stream, text: 'and now?' }, { previous_response_id: first });
      const sent = JSON.stringify(d.upstream.last());
      expect(sent).not.toContain('jane.doe');
      expect(sent).toContain('customer 42: [REDACTED:EMAIL]');
      expect(sent).toContain('and now?');
    }
  });

  test.each(STREAMS)('native: PII the model said is read in the next turn when the scope names assistant (stream %s)', async (stream) => {
    const d = dialect('responses native');
    const block = await agentWith({ rules: { pii: 'block', pii_scope: ['user', 'assistant'] } });
    const first = await turn(d, block.key, { stream, text: SAY_AN_EMAIL });
    const before = d.upstream.count();
    const res = await send(gw.url, d, { ...d.body({ stream, text: 'thanks' }), previous_response_id: first }, { key: block.key });
    expectRefused(d, res, 403, 'pii_detected');
    expect(res.text).not.toContain('jane.doe');
    expect(d.upstream.count()).toBe(before);

    const redact = await agentWith({ rules: { pii: 'redact', pii_scope: ['user', 'assistant'] } });
    const said = await turn(d, redact.key, { stream, text: SAY_AN_EMAIL });
    await turn(d, redact.key, { stream, text: 'thanks' }, { previous_response_id: said });
    const sent = JSON.stringify(d.upstream.last());
    expect(sent).not.toContain('jane.doe');
    expect(sent).toContain('write to [REDACTED:EMAIL]');

    // Out of scope, the stored answer goes on as said.
    const userOnly = await agentWith({ rules: { pii: 'block' } });
    const plain = await turn(d, userOnly.key, { stream, text: SAY_AN_EMAIL });
    await turn(d, userOnly.key, { stream, text: 'thanks' }, { previous_response_id: plain });
    expect(JSON.stringify(d.upstream.last())).toContain('jane.doe@example.com');
  });

  test.each(RESPONSES_DIALECTS)("%s: another agent's previous_response_id is 400 validation_failed naming it, nothing sent upstream", async (name) => {
    const d = dialect(name);
    const owner = await agentWith({});
    const id = await turn(d, owner.key, {});
    const other = await agentWith({});
    const before = d.upstream.count();
    for (const stream of STREAMS) {
      const res = await send(gw.url, d, { ...d.body({ stream }), previous_response_id: id }, { key: other.key });
      expect(res.status, res.text).toBe(400);
      expect(res.json.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_failed', param: 'previous_response_id' });
      expectSentence(res.json.error.message);
    }
    expect(d.upstream.count()).toBe(before);
  });

  test.each(RESPONSES_DIALECTS)('%s: the stored conversation counts in the worst case of the next turn', async (name) => {
    const d = dialect(name);
    const { key, policyId } = await agentWith({});
    // At least 27,000 prompt tokens: over $0.0027 at $0.10 per million, where a short turn costs under $0.0002.
    const long = 'lorem ipsum dolor sit amet '.repeat(4_000);
    const first = await turn(d, key, { text: long, maxTokens: 16 });
    await admin.policy(policyId, { tenant_id: 'acme', rules: { max_cost_per_request: 0.001 } });
    expectRefused(d, await ask(d, key, { text: long, maxTokens: 16 }), 403, 'cost_cap_exceeded');
    expectServed(d, await ask(d, key, { text: 'short', maxTokens: 16 }), false);
    const before = d.upstream.count();
    for (const stream of STREAMS) {
      // The long text comes back only through previous_response_id: the cap still sees it.
      const res = await send(gw.url, d, { ...d.body({ stream, text: 'short', maxTokens: 16 }), previous_response_id: first }, { key });
      expectRefused(d, res, 403, 'cost_cap_exceeded');
    }
    expect(d.upstream.count()).toBe(before);
  });

  test.each(RESPONSES_DIALECTS)('%s: no max_output_tokens: the model maximum is clamped, and the upstream gets the clamped limit', async (name) => {
    const d = dialect(name);
    const { key } = await agentWith({ rules: { max_cost_per_request: 0.01, clamp_output: true } });
    for (const stream of STREAMS) {
      const body = d.body({ stream });
      delete body.max_output_tokens;
      const res = await send(gw.url, d, body, { key });
      expectServed(d, res, stream);
      const clamped = Number(res.headers.get('x-agentgw-clamped-max-tokens'));
      expectClampedTo(clamped, 0.01);
      expect(d.upstream.maxTokens(d.upstream.last())).toBe(clamped);
    }
  });

  test.each(RESPONSES_DIALECTS)('%s: a function_call_output whose output is input_text parts is read and redacted too', async (name) => {
    const d = dialect(name);
    const body = d.body({ toolResult: 'x', text: 'summarise' }) as { input: Array<Record<string, unknown>> };
    body.input[2]!.output = [{ type: 'input_text', text: 'customer 42: jane.doe@example.com' }];
    const block = await agentWith({ rules: { pii: 'block' } });
    const before = d.upstream.count();
    expectRefused(d, await send(gw.url, d, body, { key: block.key }), 403, 'pii_detected');
    expect(d.upstream.count()).toBe(before);
    const redact = await agentWith({ rules: { pii: 'redact' } });
    expectServed(d, await send(gw.url, d, body, { key: redact.key }), false);
    const sent = JSON.stringify(d.upstream.last());
    expect(sent).not.toContain('jane.doe');
    expect(sent).toContain('customer 42: [REDACTED:EMAIL]');
  });

  test.each(RESPONSES_DIALECTS)('%s: instructions and a developer message are both the system part', async (name) => {
    const d = dialect(name);
    const body = d.body({ assistantText: 'ok' }) as { input: unknown[] };
    body.input.unshift({ role: 'developer', content: [{ type: 'input_text', text: 'Escalate to jane.doe@example.com.' }] });
    const outOfScope = await agentWith({ rules: { pii: 'block' } });
    expectServed(d, await send(gw.url, d, body, { key: outOfScope.key }), false);
    const inScope = await agentWith({ rules: { pii: 'block', pii_scope: ['system'] } });
    expectRefused(d, await send(gw.url, d, body, { key: inScope.key }), 403, 'pii_detected');
    const redact = await agentWith({ rules: { pii: 'redact', pii_scope: ['system'] } });
    expectServed(d, await send(gw.url, d, body, { key: redact.key }), false);
    expect(JSON.stringify(d.upstream.last())).not.toContain('jane.doe');
  });
});
