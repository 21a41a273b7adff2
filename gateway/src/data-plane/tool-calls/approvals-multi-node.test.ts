// Approvals across nodes (CONTRACT: "Any node holding the call learns a decision within 1 s"): a call held on node A is
// approved or denied through node C, and A releases or refuses it within a second: through Redis pub/sub when counters
// are Redis, and through A's poll of the database when they are not (so a lost message still arrives).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { eventually } from '../../test-support/admin-api.js';
import { TEST_REDIS_URL, type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { type ScriptedOpenAI, startScriptedOpenAI } from '../../test-support/scripted-openai.js';

const RM = { command: 'rm -rf build' };
const TOOLS = [{ type: 'function', function: { name: 'Bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }];

let up: ScriptedOpenAI;
beforeAll(async () => {
  up = await startScriptedOpenAI(() => ({ content: 'Cleaning up.', tool_calls: [{ id: 'call_rm', name: 'Bash', arguments: RM }] }));
});
afterAll(async () => up?.close());

/** One chat request on `gw` (streamed or not): the whole answer's text. */
async function chat(gw: TestGateway, key: string, trace: string, stream: boolean): Promise<string> {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-trace-id': trace },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'clean' }], tools: TOOLS, stream }),
  });
  expect(res.status).toBe(200);
  return res.text();
}

describe.each([
  ['PostgreSQL and Redis', true],
  ['PostgreSQL without Redis (the database poll alone)', false],
] as const)('three nodes on %s', (_name, redis) => {
  const nodes: TestGateway[] = [];
  let key = '';

  beforeAll(async () => {
    const config = {
      providers: { openai: { type: 'openai', base_url: up.url, api_key: 'sk-up' } },
      approvals: { timeout_s: 30 },
      ...(redis ? { counters: { kind: 'redis', url: TEST_REDIS_URL } } : {}),
    };
    const first = await startTestGateway({ storage: 'postgres', config, env: { AGENTGW_SECRET_KEY: 'multi-node-approvals-secret' } });
    nodes.push(first);
    for (let i = 0; i < 2; i++) {
      const schema = first.storage.kind === 'postgres' ? first.storage.schema : undefined;
      nodes.push(await startTestGateway({ storage: 'postgres', config, adminKey: first.adminKey, pgSchema: schema, env: { AGENTGW_SECRET_KEY: 'multi-node-approvals-secret' } }));
    }
    const admin = adminClient(first.adminUrl, first.adminKey);
    await admin.tenant('acme');
    await admin.policy('ask', { tool_rules: [{ tools: ['Bash'], when: { command: 'rm *' }, action: 'approve' }] });
    key = (await admin.agent('acme', 'coder', 'ask')).api_key;
  });
  afterAll(async () => {
    for (const n of nodes.slice(1)) await n.close();
    await nodes[0]?.close();
  });

  for (const [verb, stream] of [
    ['approve', false],
    ['approve', true],
    ['deny', false],
    ['deny', true],
  ] as const) {
    test(`held on node A, ${verb === 'approve' ? 'approved' : 'denied'} through node C: A answers within 1 s (${stream ? 'streamed' : 'not streamed'})`, async () => {
      const [a, b, c] = nodes as [TestGateway, TestGateway, TestGateway];
      const trace = `multi-${redis}-${verb}-${stream}`;
      let answeredAt = 0;
      const answer = chat(a, key, trace, stream).then((text) => ((answeredAt = performance.now()), text));
      const viaB = adminClient(b.adminUrl, b.adminKey);
      const held = await eventually(async () => ((await viaB.call('GET', `/approvals?trace_id=${trace}&status=pending`)) as { data: Array<{ id: string }> }).data[0], 10_000, 'the pending approval');
      expect(a.runtime.approvals.holding).toBe(1);
      await adminClient(c.adminUrl, c.adminKey).call('POST', `/approvals/${held.id}/${verb}`, {});
      const decidedAt = performance.now();
      const text = await answer;
      const ms = answeredAt - decidedAt;
      console.log(`approvals multi-node (${redis ? 'redis' : 'poll'}, ${verb}, ${stream ? 'stream' : 'json'}): answered ${ms.toFixed(0)} ms after the decision`);
      expect(ms).toBeLessThan(1000);
      if (verb === 'approve') expect(text).toContain('call_rm');
      else {
        expect(text).not.toContain('call_rm');
        expect(text).toContain(`(approval ${held.id})`);
      }
      expect(a.runtime.approvals.holding).toBe(0);
    });
  }
});
