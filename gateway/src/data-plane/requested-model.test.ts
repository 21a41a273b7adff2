// A trace step records what the client named (`requested_model`, an alias included) beside the target that answered
// (`model`), on SQLite and PostgreSQL, streamed and not, and on a refusal.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { traceWithSteps } from '../test-support/admin-api.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';

describe.each(['sqlite', 'postgres'] as const)('requested_model on %s', (storage) => {
  let gw: TestGateway;
  let key = '';
  beforeAll(async () => {
    gw = await startTestGateway({ storage, config: { providers: { a: { type: 'mock' } }, models: { 'team-default': ['a/mock-1'], 'glob-*': ['a/mock-2'] } } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'acme', name: 'Acme' });
    await call('PUT', '/policies/p', { tenant_id: 'acme', allowed_models: ['team-default', 'glob-*', 'a/mock-1'] });
    key = (await call('POST', '/agents', { name: 'a', tenant_id: 'acme', policy_id: 'p' })).api_key;
  });
  afterAll(async () => gw?.close());

  test('an alias, a glob alias and a provider/model id, and a refused model', async () => {
    const trace = `rm-${storage}-${Date.now()}`;
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, defaultHeaders: { 'x-agent-trace-id': trace }, maxRetries: 0 });
    await client.chat.completions.create({ model: 'team-default', messages: [{ role: 'user', content: 'hi' }] });
    const stream = await client.chat.completions.create({ model: 'glob-fast', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    for await (const _ of stream) void _;
    await client.chat.completions.create({ model: 'a/mock-1', messages: [{ role: 'user', content: 'hi' }] });
    await expect(client.chat.completions.create({ model: 'a/not-allowed', messages: [{ role: 'user', content: 'hi' }] })).rejects.toThrow();
    const detail = await traceWithSteps(gw, trace, 4, 10_000);
    expect(detail.requests.map((r) => [r.requested_model, r.model])).toEqual([
      ['team-default', 'a/mock-1'],
      ['glob-fast', 'a/mock-2'],
      ['a/mock-1', 'a/mock-1'],
      ['a/not-allowed', 'a/not-allowed'],
    ]);
  });
});
