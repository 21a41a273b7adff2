// A node that drains does not wait for calls held for approval (CONTRACT: "Tool rules and approvals"; the drain of
// `agentgw serve`): with approvals.timeout_s 300, closing a node that holds calls finishes at once. Each held call is
// abandoned (decided_by null, a comment saying the node stopped), refused to its client naming the approval as a deny
// is (the SDKs read the answer, streamed or not), and recorded on its trace step as `abandoned`. A decision a person
// wrote first stands. Node B shares A's SQLite file and reads what A left once A is closed.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { NODE_STOPPED } from '../../approvals/approvals.js';
import { adminClient } from '../../test-support/admin.js';
import { eventually } from '../../test-support/admin-api.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic } from '../../test-support/scripted-anthropic.js';
import { type ScriptedOpenAI, startScriptedOpenAI } from '../../test-support/scripted-openai.js';

const RM = { command: 'rm -rf build' };
const PARAMS = { type: 'object', properties: { command: { type: 'string' } } };
const ENV = { AGENTGW_SECRET_KEY: 'approvals-drain-secret' };

let chatUp: ScriptedOpenAI;
let anthropicUp: ScriptedAnthropic;
/** Stays up: reads the approvals and traces a closed node left in the shared file. */
let b: TestGateway;
/** The node each test closes (its close() runs once). */
let a: TestGateway;
let closeA: () => Promise<void>;
let key = '';

const config = () => ({
  providers: {
    openai: { type: 'openai', base_url: chatUp.url, api_key: 'sk-up' },
    anthropic: { type: 'anthropic', base_url: anthropicUp.url, api_key: 'sk-ant-up' },
  },
  approvals: { timeout_s: 300 },
});

beforeAll(async () => {
  chatUp = await startScriptedOpenAI(() => ({ content: 'Cleaning up.', tool_calls: [{ id: 'call_rm', name: 'Bash', arguments: RM }] }));
  anthropicUp = await startScriptedAnthropic(() => ({
    content: [
      { type: 'text', text: 'Cleaning up.' },
      { type: 'tool_use', id: 'toolu_rm', name: 'Bash', input: RM },
    ],
    stop_reason: 'tool_use',
  }));
  b = await startTestGateway({ config: config(), env: ENV });
  const admin = adminClient(b.adminUrl, b.adminKey);
  await admin.tenant('acme');
  await admin.policy('ask', { tool_rules: [{ tools: ['Bash'], when: { command: 'rm *' }, action: 'approve' }] });
  key = (await admin.agent('acme', 'coder', 'ask')).api_key;
});
beforeEach(async () => {
  a = await startTestGateway({ config: config(), env: ENV, adminKey: b.adminKey, sqlitePath: b.storage.kind === 'sqlite' ? b.storage.path : undefined });
  let closing: Promise<void> | undefined;
  const node = a;
  closeA = () => (closing ??= node.close());
});
afterEach(async () => closeA?.());
afterAll(async () => {
  await b?.close();
  await Promise.all([chatUp?.close(), anthropicUp?.close()]);
});

const openai = (trace: string) => new OpenAI({ apiKey: key, baseURL: a.baseUrl, maxRetries: 0, defaultHeaders: { 'x-agent-trace-id': trace } });
const anthropic = (trace: string) => new Anthropic({ apiKey: key, baseURL: a.url, maxRetries: 0, defaultHeaders: { 'x-agent-trace-id': trace } });
const chatBody = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'clean' }], tools: [{ type: 'function' as const, function: { name: 'Bash', parameters: PARAMS } }] };
const messagesBody = { model: 'anthropic/claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user' as const, content: 'clean' }], tools: [{ name: 'Bash', input_schema: PARAMS as { type: 'object' } }] };

interface Seen {
  call: unknown;
  text: string;
}
function fromChat(c: OpenAI.Chat.ChatCompletion): Seen {
  const call = c.choices[0]!.message.tool_calls?.[0];
  return { call: call?.type === 'function' ? JSON.parse(call.function.arguments) : null, text: c.choices[0]!.message.content ?? '' };
}
function fromMessage(m: Anthropic.Message): Seen {
  const call = m.content.find((x) => x.type === 'tool_use');
  return { call: call?.type === 'tool_use' ? call.input : null, text: m.content.map((x) => (x.type === 'text' ? x.text : '')).join('\n') };
}

const RUNS: Record<string, (trace: string) => Promise<Seen>> = {
  chat: async (t) => fromChat(await openai(t).chat.completions.create(chatBody)),
  'chat streamed': async (t) => fromChat(await openai(t).chat.completions.stream({ ...chatBody, stream: true }).finalChatCompletion()),
  messages: async (t) => fromMessage(await anthropic(t).messages.create(messagesBody)),
  'messages streamed': async (t) => fromMessage(await anthropic(t).messages.stream(messagesBody).finalMessage()),
};

interface ApprovalRow {
  id: string;
  status: string;
  decided_by: string | null;
  comment: string | null;
  decided_at: string | null;
}

/** The trace's approval, read through node B, once it is listed with this status. */
async function approvalOf(trace: string, status: string): Promise<ApprovalRow> {
  const admin = adminClient(b.adminUrl, b.adminKey);
  return eventually(async () => ((await admin.call('GET', `/approvals?trace_id=${encodeURIComponent(trace)}&status=${status}`)) as { data: ApprovalRow[] }).data[0], 10_000, `a ${status} approval in ${trace}`);
}

async function stepOf(trace: string): Promise<{ http_status: number; error_code: string | null; tool_calls: Array<{ decision: string; approval_id: string | null }> }> {
  const t = (await adminClient(b.adminUrl, b.adminKey).call('GET', `/traces/${encodeURIComponent(trace)}`)) as { requests: any[] };
  expect(t.requests).toHaveLength(1);
  return t.requests[0];
}

test('closing a node that holds calls (timeout_s 300) finishes at once: each call is refused naming its abandoned approval', { timeout: 30_000 }, async () => {
  const names = Object.keys(RUNS);
  const traces = names.map((n) => `drain-${n.replace(/ /g, '-')}`);
  const answers = names.map((n, i) => RUNS[n]!(traces[i]!));
  const held = await Promise.all(traces.map((t) => approvalOf(t, 'pending')));
  expect(a.runtime.approvals.holding).toBe(names.length);

  // Resolves well inside the test's 30 s although every call could wait 300 s for a person.
  await closeA();

  const seen = await Promise.all(answers);
  for (const [i, s] of seen.entries()) {
    const id = held[i]!.id;
    expect(s.call, names[i]).toBeNull();
    expect(s.text, names[i]).toContain('Cleaning up.');
    expect(s.text, names[i]).toContain(`agentgw refused the call to Bash: the gateway node stopped while approval ${id} was pending`);
    const row = await approvalOf(traces[i]!, 'abandoned');
    expect(row).toMatchObject({ id, status: 'abandoned', decided_by: null, comment: NODE_STOPPED, decided_at: expect.any(String) });
    // Recorded before the node went: the step answered 200 (the refusal), its call abandoned.
    const step = await stepOf(traces[i]!);
    expect([step.http_status, step.error_code], names[i]).toEqual([200, null]);
    expect(step.tool_calls.map((c) => [c.decision, c.approval_id])).toEqual([['abandoned', id]]);
  }
  // Nobody can decide them any more.
  for (const h of held) await adminClient(b.adminUrl, b.adminKey).call('POST', `/approvals/${h.id}/approve`, {}, 409);
});

test('a decision written as the node starts draining stands: the approved call reaches its client', { timeout: 30_000 }, async () => {
  const trace = 'drain-race-approved';
  const answer = RUNS['chat streamed']!(trace);
  const held = await approvalOf(trace, 'pending');
  // Approved through node B, then A closes at once, before its poll of the database could have brought the decision:
  // A's abandon finds the row decided and keeps that decision.
  await adminClient(b.adminUrl, b.adminKey).call('POST', `/approvals/${held.id}/approve`, { comment: 'fine' });
  await closeA();
  expect((await answer).call).toEqual(RM);
  expect(await approvalOf(trace, 'approved')).toMatchObject({ id: held.id, comment: 'fine', decided_by: expect.any(String) });
  expect((await stepOf(trace)).tool_calls.map((c) => c.decision)).toEqual(['approved']);
});

test('both at once: the approval ends one way only, and the client got what that way says', { timeout: 30_000 }, async () => {
  const trace = 'drain-race-same-instant';
  const answer = RUNS.chat!(trace);
  const held = await approvalOf(trace, 'pending');
  const [decided] = await Promise.all([
    adminClient(b.adminUrl, b.adminKey)
      .call('POST', `/approvals/${held.id}/approve`, {}, undefined)
      .then(() => true)
      .catch(() => false),
    closeA(),
  ]);
  const seen = await answer;
  const row = (await adminClient(b.adminUrl, b.adminKey).call('GET', `/approvals?trace_id=${trace}`)) as { data: ApprovalRow[] };
  expect(row.data).toHaveLength(1);
  const status = row.data[0]!.status;
  expect(['approved', 'abandoned']).toContain(status);
  // The person's POST succeeded exactly when their decision is the one that stands.
  expect(decided).toBe(status === 'approved');
  expect(seen.call).toEqual(status === 'approved' ? RM : null);
  expect((await stepOf(trace)).tool_calls.map((c) => c.decision)).toEqual([status]);
});
