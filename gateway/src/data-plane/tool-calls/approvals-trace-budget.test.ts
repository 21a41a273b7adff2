// max_cost_per_trace while a call waits for approval, on the in-memory counters: the held answer's cost is settled before
// the wait and its usage row written after it. A wait longer than AGENTGW_TRACE_IDLE_SECONDS must not let the trace
// leave memory meanwhile: its next request would read its spend back from the usage rows without that step's cost and
// pass the cap. Here the held step alone spends more than the cap, so the trace's next step is refused, during the wait
// and after it. (A stream that holds a call keeps its reservation until it ends: it settles after the wait.)
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { MemoryCounters } from '../../accounting/counters/memory.js';
import { adminClient } from '../../test-support/admin.js';
import { eventually } from '../../test-support/admin-api.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { type ScriptedOpenAI, startScriptedOpenAI } from '../../test-support/scripted-openai.js';

const IDLE_MS = 150;
const RM = { command: 'rm -rf build' };
const TOOLS = [{ type: 'function', function: { name: 'Bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }];

let up: ScriptedOpenAI;
let gw: TestGateway;
let key = '';

beforeAll(async () => {
  // 'clean' proposes `rm -rf build` with 100,000 completion tokens: $0.06 at gpt-4o-mini's $0.60 per M, over the cap.
  // Anything else is a short answer.
  up = await startScriptedOpenAI((body) =>
    JSON.stringify(body.messages).includes('clean')
      ? { content: 'Cleaning up.', tool_calls: [{ id: 'call_rm', name: 'Bash', arguments: RM }], usage: { prompt_tokens: 10, completion_tokens: 100_000 } }
      : { content: 'Next.', usage: { prompt_tokens: 10, completion_tokens: 5 } },
  );
  gw = await startTestGateway({
    env: { AGENTGW_TRACE_IDLE_SECONDS: String(IDLE_MS / 1000) },
    config: { providers: { openai: { type: 'openai', base_url: up.url, api_key: 'sk-up' } }, approvals: { timeout_s: 30 } },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('ask', {
    tenant_id: 'acme',
    rules: { max_cost_per_trace: 0.05 },
    tool_rules: [{ tools: ['Bash'], when: { command: 'rm *' }, action: 'approve' }],
  });
  key = (await admin.agent('acme', 'coder', 'ask')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

function chat(trace: string, content: string, stream: boolean): Promise<Response> {
  return fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-agent-trace-id': trace },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content }], tools: TOOLS, stream }),
  });
}

async function pending(trace: string): Promise<{ id: string }> {
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  return eventually(async () => ((await admin.call('GET', `/approvals?trace_id=${trace}&status=pending`)) as { data: Array<{ id: string }> }).data[0], 10_000, 'the pending approval');
}

const idle = () => new Promise((r) => setTimeout(r, IDLE_MS * 3));

describe('a non-streamed answer held for approval (settled before the wait)', () => {
  test('a wait longer than the trace idle time: the trace stays in memory with the held step cost, its next step is refused', async () => {
    const trace = 'held-budget';
    const answer = chat(trace, 'clean', false).then((r) => r.text());
    const held = await pending(trace);
    // Idle for longer than AGENTGW_TRACE_IDLE_SECONDS since the held step settled.
    await idle();
    const next = await chat(trace, 'next step', false);
    expect(next.status).toBe(429);
    expect(((await next.json()) as { error: { code: string } }).error.code).toBe('trace_budget_exceeded');

    await adminClient(gw.adminUrl, gw.adminKey).call('POST', `/approvals/${held.id}/approve`, {});
    expect(await answer).toContain('call_rm');
    // Once recorded, the trace may leave memory: read back from its usage rows, it is still refused.
    await gw.runtime.dataPlane.usage.flush();
    await idle();
    const later = await chat(trace, 'next step', false);
    expect(later.status).toBe(429);
  });
});

test('the trace leaves memory once its held step is recorded (nothing is kept for ever)', async () => {
  const counters = gw.runtime.dataPlane.counters as MemoryCounters;
  const trace = 'held-then-idle';
  const answer = chat(trace, 'clean', false).then((r) => r.text());
  const held = await pending(trace);
  await adminClient(gw.adminUrl, gw.adminKey).call('POST', `/approvals/${held.id}/approve`, {});
  await answer;
  await gw.runtime.dataPlane.usage.flush();
  await idle();
  // Another trace's request runs the eviction: only that one is left in memory.
  expect((await chat('someone-else', 'next step', false)).status).toBe(200);
  expect(counters.traceEntries()).toBe(1);
});
