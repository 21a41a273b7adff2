// The OpenTelemetry span of a model step carries each call its answer proposed as an event, with the decision and rule.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { type ScriptedOpenAI, startScriptedOpenAI } from '../../test-support/scripted-openai.js';

const bodies: any[] = [];
const otlp = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    bodies.push(JSON.parse(Buffer.concat(chunks).toString()));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
let upstream: ScriptedOpenAI;
let gw: TestGateway;
let key: string;
let askKey: string;

beforeAll(async () => {
  await new Promise<void>((r) => otlp.listen(0, '127.0.0.1', r));
  upstream = await startScriptedOpenAI(() => ({
    tool_calls: [
      { id: 'call_rm', name: 'Bash', arguments: { command: 'rm -rf /' } },
      { id: 'call_ls', name: 'Bash', arguments: { command: 'ls' } },
    ],
  }));
  gw = await startTestGateway({
    config: { providers: { openai: { type: 'openai', base_url: upstream.url, api_key: 'sk-up' } } },
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(otlp.address() as AddressInfo).port}` },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('guard', { tool_rules: [{ tools: ['Bash'], when: { command: 'rm *' }, action: 'deny', reason: 'no deletions' }] });
  key = (await admin.agent('acme', 'coder', 'guard')).api_key;
  await admin.policy('ask', { tool_rules: [{ tools: ['Bash'], when: { command: 'rm *' }, action: 'approve' }] });
  askKey = (await admin.agent('acme', 'asker', 'ask')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  otlp.close();
});

test("a step's span lists its proposed calls as events, each with its decision and the rule that decided it", async () => {
  await new OpenAI({ apiKey: key, baseURL: gw.baseUrl, maxRetries: 0 }).chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'clean' }] });
  let events: any[] | undefined;
  for (let i = 0; i < 100 && !events; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const span = bodies.flatMap((b) => b.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans)))[0];
    events = span?.events;
  }
  const read = (e: any) => Object.fromEntries(e.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]));
  expect(events!.map((e) => e.name)).toEqual(['agentgw.tool_call', 'agentgw.tool_call']);
  expect(read(events![0])).toEqual({
    'gen_ai.tool.call.id': 'call_rm',
    'gen_ai.tool.name': 'Bash',
    'agentgw.tool.decision': 'denied',
    'agentgw.tool.rule.policy_id': 'guard',
    'agentgw.tool.rule.index': expect.anything(),
    'agentgw.tool.reason': 'no deletions',
    'agentgw.tool.wait_ms': expect.anything(),
  });
  expect(read(events![1])).toMatchObject({ 'gen_ai.tool.call.id': 'call_ls', 'agentgw.tool.decision': 'allowed' });
});

test('a call held for approval is an event with its decision, the approval id and how long it waited', async () => {
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  const answer = new OpenAI({ apiKey: askKey, baseURL: gw.baseUrl, maxRetries: 0, defaultHeaders: { 'x-agent-trace-id': 'otel-held' } }).chat.completions.create({
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: 'clean' }],
  });
  let held: { id: string } | undefined;
  for (let i = 0; i < 200 && !held; i++) {
    held = (await admin.call('GET', '/approvals?trace_id=otel-held&status=pending')).data[0];
    if (!held) await new Promise((r) => setTimeout(r, 25));
  }
  await new Promise((r) => setTimeout(r, 300));
  await admin.call('POST', `/approvals/${held!.id}/approve`, {});
  await answer;
  const read = (e: any) => Object.fromEntries(e.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]));
  let event: Record<string, unknown> | undefined;
  for (let i = 0; i < 100 && !event; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const events = bodies.flatMap((b) => b.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans.flatMap((sp: any) => sp.events ?? []))));
    event = events.map(read).find((e: any) => e['agentgw.tool.approval_id'] === held!.id);
  }
  expect(event).toMatchObject({ 'gen_ai.tool.call.id': 'call_rm', 'agentgw.tool.decision': 'approved', 'agentgw.tool.approval_id': held!.id });
  expect(Number(event!['agentgw.tool.wait_ms'])).toBeGreaterThanOrEqual(300);
});
