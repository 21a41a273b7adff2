import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { spawnGateway } from '../test-support/spawn-gateway.js';

let upstream: FakeOpenAI;
beforeAll(async () => {
  upstream = await startFakeOpenAI({ delayMs: 20 });
});
afterAll(async () => upstream?.close());

test('SIGTERM during load: every request that got a response is in the usage records after a restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-sigterm-'));
  const config = {
    storage: { kind: 'sqlite', path: join(dir, 'agentgw.db') },
    providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk' } },
  };
  const env = { AGENTGW_ADMIN_KEY: 'adk_sigterm_test_key_0123456789abcdef' };
  const first = await spawnGateway({ config, env });
  const admin = adminClient(first.adminUrl, env.AGENTGW_ADMIN_KEY);
  await admin.tenant('acme');
  const agent = await admin.agent('acme', 'bot');

  const answered: string[] = [];
  let sent = 0;
  const send = async (i: number) => {
    const stream = i % 3 === 0;
    const res = await fetch(`${first.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.api_key}`, 'content-type': 'application/json', 'x-agent-trace-id': 'load' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', stream, messages: [{ role: 'user', content: `request ${i}` }] }),
    }).catch(() => null);
    if (!res) return;
    const text = await res.text().catch(() => null);
    if (res.status === 200 && text !== null && (!stream || text.endsWith('data: [DONE]\n\n'))) answered.push(res.headers.get('x-request-id')!);
  };
  // Keep ~40 requests in flight, and stop the server while they are.
  const workers = Array.from({ length: 40 }, async () => {
    while (sent < 2000 && first.process.exitCode === null) await send(sent++);
  });
  while (answered.length < 150) await new Promise((r) => setTimeout(r, 10));
  const exit = first.stop('SIGTERM');
  await Promise.all(workers);
  expect(await exit).toBe(0);
  expect(answered.length).toBeGreaterThanOrEqual(150);

  const second = await spawnGateway({ config, env });
  try {
    const trace = await adminClient(second.adminUrl, env.AGENTGW_ADMIN_KEY).call('GET', '/traces/load');
    const recorded = new Set(trace.requests.map((r: { request_id: string }) => r.request_id));
    const lost = answered.filter((id) => !recorded.has(id));
    expect(lost).toEqual([]);
  } finally {
    await second.stop();
  }
});
