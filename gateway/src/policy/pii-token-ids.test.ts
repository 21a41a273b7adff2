// Embeddings input given as token ids is text the upstream decodes with the model's tokenizer, which the gateway does
// not have: under a PII rule that reads the user's part it is refused, never forwarded unread.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminApi, expectError } from '../test-support/admin-api.js';
import { adminClient } from '../test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

let gw: TestGateway;
let upstream: FakeOpenAI;
const keys: Record<string, string> = {};

beforeAll(async () => {
  upstream = await startFakeOpenAI();
  gw = await startTestGateway({ config: { providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } } } });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  const policies: Record<string, Record<string, unknown>> = {
    none: { rules: {} },
    block: { rules: { pii: 'block' } },
    redact: { rules: { pii: 'redact' } },
    'system-only': { rules: { pii: 'block', pii_scope: ['system'] } },
  };
  for (const [id, fields] of Object.entries(policies)) {
    await admin.policy(`tok-${id}`, { tenant_id: 'acme', ...fields });
    keys[id] = (await admin.agent('acme', `tok-${id}`, `tok-${id}`)).api_key as string;
  }
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const embed = (key: string, input: unknown) =>
  adminApi(gw.baseUrl, key)('POST', '/embeddings', { body: { model: 'openai/text-embedding-3-small', input } });

describe('embeddings input as token ids', () => {
  test.each([
    ['one list of ids', [15339, 1917]],
    ['lists of ids', [[15339], [1917, 11, 1234]]],
  ])('%s: a 400 naming input under pii block and redact', async (_name, input) => {
    for (const policy of ['block', 'redact']) {
      const before = upstream.requests.length;
      const res = await embed(keys[policy]!, input);
      expect(upstream.requests.length, 'nothing reaches the upstream').toBe(before);
      expectError(res, 400, 'validation_failed', 'input');
      expect(res.body.error.message).toMatch(/token ids cannot be read by the PII rules of policy tok-/);
    }
  });

  test('passes where no PII rule reads the input, and text passes everywhere', async () => {
    const plain = await embed(keys.none!, [15339, 1917]);
    expect(plain.status, plain.text).toBe(200);
    expect((await embed(keys['system-only']!, [[15339, 1917]])).status).toBe(200);
    expect((await embed(keys.block!, ['plain text', 'more'])).status).toBe(200);
    expect((await embed(keys.block!, 'jane.doe@example.com')).status).toBe(403);
    expect(upstream.requests.at(-1)!.body.input).toEqual(['plain text', 'more']);
  });
});
