import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MAX_TOKEN_COUNT } from '../accounting/usage-counts.js';
import { adminClient } from '../test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

// What reaches the usage table must be something both databases store: one row they refuse must not hold back the rest.
describe.each(['sqlite', 'postgres'] as const)('usage records on %s', (storage) => {
  let gw: TestGateway;
  let upstream: FakeOpenAI;
  let key: string;
  let n = 0;
  const config = () => ({ providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk' } } });

  beforeAll(async () => {
    upstream = await startFakeOpenAI();
    gw = await startTestGateway({ storage, config: config() });
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    key = (await admin.agent('acme', 'bot')).api_key;
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  async function chat(body: Record<string, unknown>, trace: string) {
    const res = await request(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-trace-id': trace },
      body: JSON.stringify({ messages: [{ role: 'user', content: `step ${++n}` }], ...body }),
    });
    return { status: res.statusCode, text: await res.body.text() };
  }

  async function trace(id: string) {
    await gw.runtime.dataPlane.usage.flush();
    const res = await request(`${gw.adminUrl}/traces/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
    return { status: res.statusCode, body: (await res.body.json()) as any };
  }

  test('a model name with a NUL character is answered 400 and recorded; the requests after it are recorded too', async () => {
    const bad = await chat({ model: 'nope\u0000x' }, 'nul-model');
    expect(bad.status).toBe(400);
    // A control character in a model id is refused before any lookup (data-plane/model-id.ts).
    expect(JSON.parse(bad.text).error).toMatchObject({ code: 'validation_failed', param: 'model' });
    expect((await chat({ model: 'openai/gpt-4o-mini' }, 'after-nul')).status).toBe(200);
    const recorded = await trace('nul-model');
    expect(recorded.status).toBe(200);
    expect(recorded.body.requests[0]).toMatchObject({ model: 'nope\uFFFDx', http_status: 400, error_code: 'validation_failed' });
    expect((await trace('after-nul')).body.request_count).toBe(1);
  });

  test('an upstream reporting nonsense token counts is billed whole numbers, and reports and restarts still work', async () => {
    upstream.options.usage = { prompt_tokens: 1.5, completion_tokens: 1e308, total_tokens: 1e308 };
    try {
      expect((await chat({ model: 'openai/gpt-4o-mini' }, 'odd-usage')).status).toBe(200);
      expect((await chat({ model: 'openai/gpt-4o-mini', stream: true, stream_options: { include_usage: true } }, 'odd-usage')).status).toBe(200);
      upstream.options.usage = { prompt_tokens: -5, completion_tokens: 3 };
      expect((await chat({ model: 'openai/gpt-4o-mini' }, 'odd-usage')).status).toBe(200);
    } finally {
      upstream.options.usage = undefined;
    }
    const recorded = await trace('odd-usage');
    expect(recorded.status).toBe(200);
    expect(recorded.body.requests.map((r: any) => [r.prompt_tokens, r.completion_tokens])).toEqual([
      [2, MAX_TOKEN_COUNT],
      [2, MAX_TOKEN_COUNT],
      [0, 3],
    ]);
    for (const r of recorded.body.requests) expect(Number.isFinite(r.cost)).toBe(true);
    for (const path of ['/traces', '/usage?group_by=model']) {
      const res = await request(`${gw.adminUrl}${path}`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
    }
    // A second node on the same database seeds its budget counters from these rows.
    const again = await startTestGateway({
      storage,
      config: config(),
      adminKey: gw.adminKey,
      ...(gw.storage.kind === 'postgres' ? { pgSchema: gw.storage.schema } : { sqlitePath: gw.storage.path }),
    });
    await again.close();
  });
});
