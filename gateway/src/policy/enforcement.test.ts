import OpenAI, { type APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

let gw: TestGateway;
let upstream: FakeOpenAI;
let admin: ReturnType<typeof adminClient>;
let n = 0;

beforeAll(async () => {
  upstream = await startFakeOpenAI();
  gw = await startTestGateway({
    config: {
      providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
      models: { mixed: ['openai/gpt-4o', 'openai/gpt-4o-mini'] },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.tenant('other');
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** A fresh agent with its own policy, and an SDK client for it. */
async function agentWith(policy: Record<string, unknown>, headers: Record<string, string> = {}) {
  const id = `p${++n}`;
  await admin.policy(id, { tenant_id: 'acme', ...policy });
  const agent = await admin.agent('acme', `bot-${id}`, id);
  return { id, agent, client: new OpenAI({ apiKey: agent.api_key, baseURL: gw.baseUrl, maxRetries: 0, defaultHeaders: headers }) };
}

async function expectError(p: Promise<unknown>, status: number, type: string, code: string) {
  const err = (await p.then(
    () => null,
    (e) => e,
  )) as APIError<number, Headers> | null;
  expect(err, `expected ${status} ${code}`).toBeInstanceOf(OpenAI.APIError);
  expect(err!.status).toBe(status);
  expect((err!.error as { type?: string }).type).toBe(type);
  expect(err!.code).toBe(code);
  expect(err!.message.length).toBeGreaterThan(20);
  return err!;
}

const ask = (client: OpenAI, content = 'hello', extra: Record<string, unknown> = {}) =>
  client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

describe('every 401/403/429/503 code through the openai SDK, with nothing sent upstream', () => {
  test('401 invalid_api_key: missing, malformed, unknown and revoked keys', async () => {
    const before = upstream.requests.length;
    for (const apiKey of ['agk_unknownunknownunknownunknown12', 'not-a-key']) {
      const c = new OpenAI({ apiKey, baseURL: gw.baseUrl, maxRetries: 0 });
      await expectError(ask(c), 401, 'authentication_error', 'invalid_api_key');
    }
    const { agent, client } = await agentWith({});
    await ask(client);
    await admin.call('DELETE', `/agents/${agent.id}`, undefined, 204);
    await expectError(ask(client), 401, 'authentication_error', 'invalid_api_key');
    const res = await fetch(`${gw.baseUrl}/chat/completions`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
    expect(upstream.requests.length).toBe(before + 1);
  });

  test('403 model_not_allowed, also for /models and alias fallbacks', async () => {
    const { client } = await agentWith({ allowed_models: ['openai/gpt-4o-mini'] });
    const before = upstream.requests.length;
    await expectError(client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x' }] }), 403, 'policy_blocked', 'model_not_allowed');
    expect(upstream.requests.length).toBe(before);
    // The alias skips its disallowed first target and serves the allowed one.
    const r = await client.chat.completions.create({ model: 'mixed', messages: [{ role: 'user', content: 'x' }] });
    expect(upstream.requests.at(-1)!.body.model).toBe('gpt-4o-mini');
    expect(r.choices).toHaveLength(1);
    const ids = (await client.models.list()).data.map((m) => m.id);
    expect(ids).not.toContain('openai/gpt-4o');
  });

  test('403 pii_detected names the types, never the text; redact sends no matched text upstream', async () => {
    const { client } = await agentWith({ rules: { pii: 'block' } });
    const before = upstream.requests.length;
    const err = await expectError(ask(client, 'mail me at jane.doe@example.com'), 403, 'policy_blocked', 'pii_detected');
    expect(err.message).toContain('email');
    expect(err.message).not.toContain('jane.doe');
    expect(upstream.requests.length).toBe(before);
    // The blocked request is in its trace with the type found, never the text.
    await gw.runtime.dataPlane.usage.flush();
    const trace = await admin.call('GET', `/traces/${err.headers.get('x-agent-trace-id')}`);
    expect(trace.requests[0]).toMatchObject({ status: 'blocked', error_code: 'pii_detected', pii_types: ['email'] });
    expect(JSON.stringify(trace)).not.toContain('jane.doe');

    const red = await agentWith({ rules: { pii: 'redact' } });
    await ask(red.client, 'card 4111 1111 1111 1111, mail jane.doe@example.com');
    const sent = JSON.stringify(upstream.requests.at(-1)!.body);
    expect(sent).not.toContain('jane.doe');
    expect(sent).not.toContain('4111 1111');
    expect(sent).toContain('[REDACTED:EMAIL]');
    expect(sent).toContain('[REDACTED:CREDIT_CARD]');
  });

  test('403 retry_blocked past max_repeats in one trace', async () => {
    const { client } = await agentWith({ rules: { retry_block: { max_repeats: 2, window_seconds: 60 } } }, { 'X-Agent-Trace-Id': 'loop-1' });
    await ask(client, 'same');
    await ask(client, 'same');
    const before = upstream.requests.length;
    await expectError(ask(client, 'same'), 403, 'policy_blocked', 'retry_blocked');
    expect(upstream.requests.length).toBe(before);
    await ask(client, 'different');
  });

  test('403 cost_cap_exceeded and price_unknown', async () => {
    const { client } = await agentWith({ rules: { max_cost_per_request: 0.000001 } });
    const before = upstream.requests.length;
    await expectError(ask(client), 403, 'policy_blocked', 'cost_cap_exceeded');
    const priced = await agentWith({ monthly_budget: 5 });
    await expectError(
      priced.client.chat.completions.create({ model: 'openai/some-unpriced-model', messages: [{ role: 'user', content: 'x' }] }),
      403,
      'policy_blocked',
      'price_unknown',
    );
    expect(upstream.requests.length).toBe(before);
  });

  test('403 policy_not_permitted for a foreign or unknown X-Agent-Policy', async () => {
    await admin.call('PUT', '/policies/foreign', { tenant_id: 'other' });
    const { client } = await agentWith({});
    const before = upstream.requests.length;
    const withPolicy = (policy: string) =>
      client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, { headers: { 'X-Agent-Policy': policy } });
    await expectError(withPolicy('foreign'), 403, 'policy_blocked', 'policy_not_permitted');
    await expectError(withPolicy('does-not-exist'), 403, 'policy_blocked', 'policy_not_permitted');
    expect(upstream.requests.length).toBe(before);
  });

  test('X-Agent-Policy only tightens: both policies apply', async () => {
    await admin.call('PUT', '/policies/strict-global', { allowed_models: ['openai/gpt-4o'] });
    const { client } = await agentWith({ allowed_models: ['openai/*'] });
    await ask(client);
    await expectError(
      client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, { headers: { 'X-Agent-Policy': 'strict-global' } }),
      403,
      'policy_blocked',
      'model_not_allowed',
    );
  });

  test('429 daily, monthly and trace budgets, with Retry-After and x-agentgw-budget-reset', async () => {
    const before = upstream.requests.length;
    const daily = await agentWith({ daily_budget: 0.0000001 });
    const e1 = await expectError(ask(daily.client), 429, 'budget_exceeded', 'daily_budget_exceeded');
    expect(Number(e1.headers.get('retry-after'))).toBeGreaterThan(0);
    const reset = e1.headers.get('x-agentgw-budget-reset')!;
    expect(new Date(reset).toISOString().slice(0, 10)).toBe(new Date(Date.now() + 86_400_000).toISOString().slice(0, 10));
    const monthly = await agentWith({ monthly_budget: 0.0000001, daily_budget: 100 });
    const e2 = await expectError(ask(monthly.client), 429, 'budget_exceeded', 'monthly_budget_exceeded');
    expect(e2.headers.get('x-agentgw-budget-reset')).toMatch(/^\d{4}-\d{2}-01T00:00:00Z$/);
    const trace = await agentWith({ rules: { max_cost_per_trace: 0.0000001 } }, { 'X-Agent-Trace-Id': 'expensive' });
    const e3 = await expectError(ask(trace.client), 429, 'budget_exceeded', 'trace_budget_exceeded');
    expect(e3.headers.get('retry-after')).toBeTruthy();
    expect(upstream.requests.length).toBe(before);
  });

  test("each policy's own daily limit applies: a tiny monthly budget on X-Agent-Policy derives a tiny daily one", async () => {
    await admin.call('PUT', '/policies/tiny-monthly', { monthly_budget: 0.000003 });
    const { client } = await agentWith({ daily_budget: 100 });
    await ask(client);
    await expectError(
      client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, { headers: { 'X-Agent-Policy': 'tiny-monthly' } }),
      429,
      'budget_exceeded',
      'daily_budget_exceeded',
    );
  });

  test('429 rpm_exceeded and tpm_exceeded with Retry-After', async () => {
    const rpm = await agentWith({ rules: { rpm: 1 } });
    await ask(rpm.client);
    const before = upstream.requests.length;
    const e = await expectError(ask(rpm.client), 429, 'rate_limited', 'rpm_exceeded');
    expect(Number(e.headers.get('retry-after'))).toBeGreaterThan(0);
    const tpm = await agentWith({ rules: { tpm: 1 } });
    await expectError(ask(tpm.client, 'a prompt that is clearly longer than one token'), 429, 'rate_limited', 'tpm_exceeded');
    expect(upstream.requests.length).toBe(before);
  });

  test('503 maintenance on /v1 while the admin interface keeps working', async () => {
    const { client } = await agentWith({});
    await admin.call('PUT', '/system/maintenance', { enabled: true, message: 'upgrading' });
    try {
      const before = upstream.requests.length;
      const e = await expectError(ask(client), 503, 'service_unavailable', 'maintenance');
      expect(e.headers.get('retry-after')).toBeTruthy();
      expect(e.message).toContain('upgrading');
      expect(upstream.requests.length).toBe(before);
      const cfg = await admin.call('GET', '/system/config');
      expect(cfg.maintenance.enabled).toBe(true);
    } finally {
      await admin.call('PUT', '/system/maintenance', { enabled: false });
    }
    await ask(client);
  });

  test('a policy change applies to the very next request', async () => {
    const { id, client } = await agentWith({});
    await ask(client);
    await admin.policy(id, { allowed_models: [] });
    await expectError(ask(client), 403, 'policy_blocked', 'model_not_allowed');
    await admin.policy(id, { allowed_models: null });
    await ask(client);
  });
});
