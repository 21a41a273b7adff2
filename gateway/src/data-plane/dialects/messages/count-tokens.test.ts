// POST /v1/messages/count_tokens is one request against the agent's rpm, as every /v1 request is: a client cannot count
// tokens without limit, and the counts share the minute with the model calls.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';

const MODEL = 'mock/mock-1';
const conversation = { model: MODEL, messages: [{ role: 'user', content: 'How many tokens is this?' }] };

describe('count_tokens and rules.rpm', () => {
  let gw: TestGateway;
  let admin: ReturnType<typeof adminClient>;

  beforeAll(async () => {
    gw = await startTestGateway({ config: { providers: { mock: { type: 'mock' } } } });
    admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    await admin.policy('two-a-minute', { tenant_id: 'acme', rules: { rpm: 2 } });
  });
  afterAll(async () => gw?.close());

  async function call(key: string, path: string, body: Record<string, unknown>) {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  }
  const countTokens = (key: string) => call(key, '/v1/messages/count_tokens', conversation);

  test('the request past rpm is 429 rpm_exceeded, in Anthropic error shape, with Retry-After', async () => {
    const key = (await admin.agent('acme', 'counter', 'two-a-minute')).api_key;
    for (let i = 0; i < 2; i++) {
      const ok = await countTokens(key);
      expect(ok.status).toBe(200);
      expect(ok.body.input_tokens).toBeGreaterThan(0);
    }
    const refused = await countTokens(key);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', code: 'rpm_exceeded' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test('counts and model calls share the minute', async () => {
    const key = (await admin.agent('acme', 'mixed', 'two-a-minute')).api_key;
    expect((await countTokens(key)).status).toBe(200);
    expect((await call(key, '/v1/messages', { ...conversation, max_tokens: 16 })).status).toBe(200);
    const refused = await call(key, '/v1/messages', { ...conversation, max_tokens: 16 });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rpm_exceeded');
    expect((await countTokens(key)).body.error.code).toBe('rpm_exceeded');
  });
});
