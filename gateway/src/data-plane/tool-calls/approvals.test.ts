// Approvals on every dialect, Gemini's too (CONTRACT: "Tool rules and approvals"): a call an `approve` rule names is held until a
// person decides it through the admin API. Approved, it reaches the client intact; denied or timed out, it is refused
// naming the approval; approving a timed-out one lets the same call pass once in its trace; a client that leaves
// abandons it. The official SDKs read streams and answers held for longer than a keep-alive interval.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { eventually } from '../../test-support/admin-api.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic } from '../../test-support/scripted-anthropic.js';
import { type ScriptedOpenAI, startScriptedOpenAI } from '../../test-support/scripted-openai.js';
import { type ScriptedResponses, startScriptedResponses } from '../../test-support/scripted-responses.js';

const RM = { command: 'rm -rf build', cwd: '/work' };
const BASH_PARAMS = { type: 'object', properties: { command: { type: 'string' }, cwd: { type: 'string' } } };

let chatUp: ScriptedOpenAI;
let anthropicUp: ScriptedAnthropic;
let responsesUp: ScriptedResponses;
/** Waits up to 30 s (long holds); short keep-alives so the tests see them. */
let gw: TestGateway;
/** Times out after 1 s. */
let quick: TestGateway;
const keys = new Map<TestGateway, string>();

async function gateway(timeout_s: number): Promise<TestGateway> {
  const g = await startTestGateway({
    config: {
      providers: {
        openai: { type: 'openai', base_url: chatUp.url, api_key: 'sk-up' },
        anthropic: { type: 'anthropic', base_url: anthropicUp.url, api_key: 'sk-ant-up' },
        oairesp: { type: 'openai', base_url: responsesUp.url, api_key: 'sk-resp-up' },
        compat: { type: 'openai-compatible', base_url: chatUp.url, api_key: 'sk-compat-up' },
      },
      approvals: { timeout_s, keep_alive_s: 0.2 },
    },
  });
  const admin = adminClient(g.adminUrl, g.adminKey);
  await admin.tenant('acme');
  await admin.policy('ask', { tool_rules: [{ tools: ['Bash'], when: { command: 'rm *' }, action: 'approve', reason: 'deletions need a person' }] });
  keys.set(g, (await admin.agent('acme', 'coder', 'ask')).api_key);
  return g;
}

beforeAll(async () => {
  // Every upstream writes some text, then proposes `rm -rf build`.
  chatUp = await startScriptedOpenAI(() => ({ content: 'Cleaning up.', tool_calls: [{ id: 'call_rm', name: 'Bash', arguments: RM }] }));
  anthropicUp = await startScriptedAnthropic(() => ({
    content: [
      { type: 'text', text: 'Cleaning up.' },
      { type: 'tool_use', id: 'toolu_rm', name: 'Bash', input: RM },
    ],
    stop_reason: 'tool_use',
  }));
  responsesUp = await startScriptedResponses(() => ({
    output: [
      { type: 'message', text: 'Cleaning up.' },
      { type: 'function_call', name: 'Bash', arguments: RM, call_id: 'call_rm' },
    ],
  }));
  [gw, quick] = await Promise.all([gateway(30), gateway(1)]);
});
afterAll(async () => {
  await Promise.all([gw?.close(), quick?.close()]);
  await Promise.all([chatUp?.close(), anthropicUp?.close(), responsesUp?.close()]);
});

const openai = (g: TestGateway, trace: string) => new OpenAI({ apiKey: keys.get(g)!, baseURL: g.baseUrl, maxRetries: 0, defaultHeaders: { 'x-agent-trace-id': trace } });
const anthropic = (g: TestGateway, trace: string) => new Anthropic({ apiKey: keys.get(g)!, baseURL: g.url, maxRetries: 0, defaultHeaders: { 'x-agent-trace-id': trace } });

/** What the client got: the call's arguments when it came through, and the answer's text. */
interface Seen {
  call: unknown;
  text: string;
}

type Run = (g: TestGateway, trace: string) => Promise<Seen>;

const chatTools = [{ type: 'function' as const, function: { name: 'Bash', parameters: BASH_PARAMS } }];
const messagesTools = [{ name: 'Bash', input_schema: BASH_PARAMS as { type: 'object' } }];
const responsesTools = [{ type: 'function' as const, name: 'Bash', parameters: BASH_PARAMS, strict: false }];

function fromChat(c: OpenAI.Chat.ChatCompletion): Seen {
  const call = c.choices[0]!.message.tool_calls?.[0];
  return { call: call?.type === 'function' ? JSON.parse(call.function.arguments) : null, text: c.choices[0]!.message.content ?? '' };
}
function fromMessage(m: Anthropic.Message): Seen {
  const call = m.content.find((b) => b.type === 'tool_use');
  return { call: call?.type === 'tool_use' ? call.input : null, text: m.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n') };
}
function fromResponse(r: OpenAI.Responses.Response): Seen {
  const call = r.output.find((i) => i.type === 'function_call');
  const text = r.output.map((i) => (i.type === 'message' ? i.content.map((c) => (c.type === 'output_text' ? c.text : '')).join('') : '')).join('\n');
  return { call: call?.type === 'function_call' ? JSON.parse(call.arguments) : null, text };
}

const RUNS: Array<[string, Run]> = [
  ['chat', async (g, t) => fromChat(await openai(g, t).chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'clean' }], tools: chatTools }))],
  ['chat streamed', async (g, t) => fromChat(await openai(g, t).chat.completions.stream({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'clean' }], tools: chatTools, stream: true }).finalChatCompletion())],
  ...(['anthropic/claude-sonnet-4-5', 'compat/gpt-4o-mini'] as const).flatMap((model): Array<[string, Run]> => {
    const route = model.startsWith('anthropic') ? 'native' : 'translated';
    const body = { model, max_tokens: 1000, messages: [{ role: 'user' as const, content: 'clean' }], tools: messagesTools };
    return [
      [`messages ${route}`, async (g, t) => fromMessage(await anthropic(g, t).messages.create(body))],
      [`messages ${route} streamed`, async (g, t) => fromMessage(await anthropic(g, t).messages.stream(body).finalMessage())],
    ];
  }),
  ...(['oairesp/gpt-4.1', 'compat/gpt-4o-mini'] as const).flatMap((model): Array<[string, Run]> => {
    const route = model.startsWith('oairesp') ? 'native' : 'translated';
    return [
      [`responses ${route}`, async (g, t) => fromResponse(await openai(g, t).responses.create({ model, input: 'clean', tools: responsesTools }))],
      [`responses ${route} streamed`, async (g, t) => fromResponse(await openai(g, t).responses.stream({ model, input: 'clean', tools: responsesTools }).finalResponse())],
    ];
  }),
];

/** Gemini's generateContent (translated to the chat upstream): one answer, an SSE stream, or a streamed JSON array. */
function geminiRun(mode: 'json' | 'sse' | 'array'): Run {
  return async (g, trace) => {
    const method = mode === 'json' ? 'generateContent' : `streamGenerateContent${mode === 'sse' ? '?alt=sse' : ''}`;
    const res = await fetch(`${g.url}/v1beta/models/compat/gpt-4o-mini:${method}`, {
      method: 'POST',
      headers: { 'x-goog-api-key': keys.get(g)!, 'content-type': 'application/json', 'x-agent-trace-id': trace },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'clean' }] }], tools: [{ functionDeclarations: [{ name: 'Bash', parameters: BASH_PARAMS }] }] }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const chunks: any[] =
      mode === 'json' ? [JSON.parse(text)] : mode === 'array' ? JSON.parse(text) : text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    const call = parts.find((p: any) => p.functionCall);
    return { call: call ? call.functionCall.args : null, text: parts.map((p: any) => p.text ?? '').join('') };
  };
}
RUNS.push(['gemini', geminiRun('json')], ['gemini streamed (sse)', geminiRun('sse')], ['gemini streamed (array)', geminiRun('array')]);

interface ApprovalRow {
  id: string;
  status: string;
  tool: string;
  arguments: unknown;
  trace_id: string;
  decided_by: string | null;
  rule: unknown;
}

/** Waits for the trace's approval with this status to be listed (the call is held), and answers it. */
async function listed(g: TestGateway, trace: string, status = 'pending'): Promise<ApprovalRow> {
  const admin = adminClient(g.adminUrl, g.adminKey);
  for (let i = 0; i < 400; i++) {
    const page = (await admin.call('GET', `/approvals?trace_id=${encodeURIComponent(trace)}&status=${status}`)) as { data: ApprovalRow[] };
    if (page.data.length > 0) return page.data[0]!;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no ${status} approval in trace ${trace}`);
}

async function decide(g: TestGateway, id: string, verb: 'approve' | 'deny', comment?: string, expectStatus = 200): Promise<ApprovalRow> {
  return adminClient(g.adminUrl, g.adminKey).call('POST', `/approvals/${id}/${verb}`, comment === undefined ? {} : { comment }, expectStatus);
}

async function toolCalls(g: TestGateway, trace: string): Promise<Array<Record<string, unknown>>> {
  await g.runtime.dataPlane.usage.flush();
  const t = (await adminClient(g.adminUrl, g.adminKey).call('GET', `/traces/${encodeURIComponent(trace)}`)) as { requests: Array<{ tool_calls: Array<Record<string, unknown>> }> };
  return t.requests.flatMap((r) => r.tool_calls ?? []);
}

describe.each(RUNS)('%s', (name, run) => {
  const slug = name.replace(/ /g, '-');

  test('held, then approved through the API: the call reaches the client intact; the trace says approved', async () => {
    const trace = `ok-${slug}`;
    const answer = run(gw, trace);
    const held = await listed(gw, trace);
    expect(held).toMatchObject({ tool: 'Bash', arguments: RM, rule: { policy_id: 'ask', index: 1 }, status: 'pending' });
    expect(await decide(gw, held.id, 'approve', 'fine')).toMatchObject({ id: held.id, status: 'approved', decided_by: expect.any(String) });
    const seen = await answer;
    expect(seen.call).toEqual(RM);
    expect(seen.text).toContain('Cleaning up.');
    expect(seen.text).not.toContain('agentgw refused');
    expect(await toolCalls(gw, trace)).toEqual([
      { id: expect.any(String), name: 'Bash', decision: 'approved', rule: { policy_id: 'ask', index: 1 }, reason: 'deletions need a person', approval_id: held.id, wait_ms: expect.any(Number) },
    ]);
  });

  test('denied through the API: the call is refused naming the approval', async () => {
    const trace = `no-${slug}`;
    const answer = run(gw, trace);
    const held = await listed(gw, trace);
    await decide(gw, held.id, 'deny', 'not today');
    const seen = await answer;
    expect(seen.call).toBeNull();
    expect(seen.text).toContain(`agentgw refused the call to Bash: denied by `);
    expect(seen.text).toContain(`(approval ${held.id}): not today (policy ask, rule 1)`);
    expect((await toolCalls(gw, trace))[0]).toMatchObject({ decision: 'rejected', approval_id: held.id });
  });

  test('timed out: refused naming the approval; approving it afterwards lets the same call pass once in the trace', async () => {
    const trace = `late-${slug}`;
    const first = await run(quick, trace);
    const timedOut = await listed(quick, trace, 'timed_out');
    expect(first.call).toBeNull();
    expect(first.text).toContain(`not approved within 1 s (approval ${timedOut.id} timed out`);
    // Denying it now is too late; approving it is not.
    await decide(quick, timedOut.id, 'deny', undefined, 409);
    await decide(quick, timedOut.id, 'approve');
    const again = await run(quick, trace);
    expect(again.call).toEqual(RM);
    const calls = await toolCalls(quick, trace);
    expect(calls.map((c) => [c.decision, c.approval_id])).toEqual([
      ['timed_out', timedOut.id],
      ['approved', timedOut.id],
    ]);
  });
});

test('the pass an approval after the timeout leaves is used once, and only in its trace', async () => {
  const [, run] = RUNS[0]!;
  const trace = 'late-once';
  await run(quick, trace);
  const timedOut = await listed(quick, trace, 'timed_out');
  await decide(quick, timedOut.id, 'approve');
  // Another trace gets no pass: it is held (and times out).
  expect((await run(quick, 'late-elsewhere')).call).toBeNull();
  expect((await run(quick, trace)).call).toEqual(RM);
  // Used: the next identical call is held again.
  const third = await run(quick, trace);
  expect(third.call).toBeNull();
  expect(third.text).toMatch(/not approved within 1 s \(approval apr_\w+ timed out/);
});

describe('a client that leaves while its call is held abandons the approval', () => {
  for (const stream of [false, true]) {
    test(stream ? 'streamed' : 'not streamed', async () => {
      const trace = `gone-${stream}`;
      const ctl = new AbortController();
      const res = fetch(`${gw.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys.get(gw)}`, 'content-type': 'application/json', 'x-agent-trace-id': trace },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'clean' }], tools: chatTools, stream }),
        signal: ctl.signal,
      }).then((r) => r.text());
      const held = await listed(gw, trace);
      ctl.abort();
      await expect(res).rejects.toThrow();
      const abandoned = await listed(gw, trace, 'abandoned');
      expect(abandoned.id).toBe(held.id);
      // Nobody can decide it any more.
      await decide(gw, held.id, 'approve', undefined, 409);
      expect(gw.runtime.approvals.holding).toBe(0);
      // The step is recorded as a client that left (billed for the answer all the same), its call abandoned.
      const step = await eventually(async () => {
        await gw.runtime.dataPlane.usage.flush();
        const t = await adminClient(gw.adminUrl, gw.adminKey).call('GET', `/traces/${trace}`, undefined, undefined).catch(() => null);
        return t?.requests?.[0] as { http_status: number; error_code: string | null; tool_calls: Array<{ decision: string; approval_id: string }> } | undefined;
      });
      expect([step.http_status, step.error_code]).toEqual([499, 'client_closed']);
      expect(step.tool_calls.map((c) => [c.decision, c.approval_id])).toEqual([['abandoned', held.id]]);
    });
  }
});

describe('held for longer than a keep-alive interval, the wire keeps the client waiting and the SDKs still parse it', () => {
  const raw = (path: string, body: Record<string, unknown>, trace: string) =>
    fetch(`${gw.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.get(gw)}`, 'content-type': 'application/json', 'x-agent-trace-id': trace, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    });

  test('streams carry SSE comments (ping events on Messages) with the text before the call already sent; a JSON answer leading whitespace', async () => {
    const chat = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'clean' }], tools: chatTools };
    const messages = { model: 'anthropic/claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'clean' }], tools: messagesTools, stream: true };
    const cases = [
      { trace: 'wire-chat-s', res: raw('/chat/completions', { ...chat, stream: true }, 'wire-chat-s') },
      { trace: 'wire-msg-s', res: raw('/messages', messages, 'wire-msg-s') },
      { trace: 'wire-resp-s', res: raw('/responses', { model: 'oairesp/gpt-4.1', input: 'clean', tools: responsesTools, stream: true }, 'wire-resp-s') },
      { trace: 'wire-chat', res: raw('/chat/completions', chat, 'wire-chat') },
    ];
    // Read each answer as it comes: what arrived before the decision is kept apart.
    const before = cases.map(async ({ trace, res }) => {
      const r = await res;
      expect(r.status).toBe(200);
      const reader = r.body!.getReader();
      const decoder = new TextDecoder();
      let got = '';
      const rest = (async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return got;
          got += decoder.decode(value, { stream: true });
        }
      })();
      await listed(gw, trace);
      await new Promise((r) => setTimeout(r, 700));
      return { early: got, all: rest };
    });
    const early = await Promise.all(before);
    const [chatS, msgS, respS, chatJ] = early.map((e) => e.early);
    expect(chatS).toContain('Cleaning up.');
    expect(chatS).toContain(': keep-alive\n\n');
    expect(chatS).not.toContain('call_rm');
    expect(msgS).toContain('Cleaning up.');
    expect(msgS).toContain('event: ping\ndata: {"type": "ping"}\n\n');
    expect(msgS).not.toContain('toolu_rm');
    expect(respS).toContain('Cleaning up.');
    expect(respS).toContain(': keep-alive\n\n');
    expect(chatJ).toMatch(/^\s+$/);
    for (const { trace } of cases) await decide(gw, (await listed(gw, trace)).id, 'approve');
    const all = await Promise.all(early.map((e) => e.all));
    expect(all[0]).toContain('call_rm');
    expect(all[1]).toContain('toolu_rm');
    expect(all[2]).toContain('"function_call"');
    const body = JSON.parse(all[3]!) as OpenAI.Chat.ChatCompletion;
    expect(body.choices[0]!.message.tool_calls?.[0]?.id).toBe('call_rm');
  });

  // CONTRACT's acceptance: a stream held 60 s reaches both SDKs intact, and a non-streamed answer held 30 s is a normal completion.
  test('the OpenAI and Anthropic SDKs read streams held 60 s and JSON answers held 30 s', { timeout: 150_000 }, async () => {
    // A gateway of its own, whose approvals wait longer than the minute held here.
    const long = await gateway(150);
    try {
      const jsonTraces = ['sdk-30s-chat', 'sdk-30s-msg'];
      const streamTraces = ['sdk-60s-chat-s', 'sdk-60s-msg-s'];
      const answers = Promise.all([
        RUNS.find(([n]) => n === 'chat')![1](long, 'sdk-30s-chat'),
        RUNS.find(([n]) => n === 'messages native')![1](long, 'sdk-30s-msg'),
        RUNS.find(([n]) => n === 'chat streamed')![1](long, 'sdk-60s-chat-s'),
        RUNS.find(([n]) => n === 'messages native streamed')![1](long, 'sdk-60s-msg-s'),
      ]);
      const heldJson = await Promise.all(jsonTraces.map((t) => listed(long, t)));
      const heldStreams = await Promise.all(streamTraces.map((t) => listed(long, t)));
      await new Promise((r) => setTimeout(r, 30_000));
      for (const h of heldJson) await decide(long, h.id, 'approve');
      await new Promise((r) => setTimeout(r, 30_000));
      for (const h of heldStreams) await decide(long, h.id, 'approve');
      for (const seen of await answers) expect(seen.call).toEqual(RM);
      const waited = async (t: string) => (await toolCalls(long, t))[0]!.wait_ms as number;
      for (const t of jsonTraces) expect(await waited(t)).toBeGreaterThan(29_000);
      for (const t of streamTraces) expect(await waited(t)).toBeGreaterThan(59_000);
    } finally {
      await long.close();
    }
  });
});

test('agentgw_tool_calls_total counts approved, rejected, timed_out and abandoned calls', async () => {
  const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.adminKey}` } })).text();
  for (const decision of ['approved', 'rejected', 'timed_out', 'abandoned']) {
    expect(Number(new RegExp(`^agentgw_tool_calls_total\\{decision="${decision}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);
  }
});
