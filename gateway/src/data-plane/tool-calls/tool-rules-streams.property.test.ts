// Property: for each dialect, a generated upstream stream (text, reasoning and several tool calls, cut at random byte
// boundaries) relayed under one of several rule sets is the upstream's stream but for the denied calls: text and
// reasoning frames pass byte for byte and in order, and the official SDK's stream accumulator reads the answer the
// rules leave (each denied call replaced by its refusal, the turn ended when no call is left).
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import fc from 'fast-check';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { messageToSse } from '../../test-support/scripted-anthropic.js';
import { chatCompletionSse } from '../../test-support/scripted-openai.js';
import { responseSse } from '../../test-support/scripted-responses.js';

type Part = { kind: 'text'; text: string } | { kind: 'reasoning'; text: string } | { kind: 'call'; name: string; x: string };

/** The rule sets a run picks from (by X-Agent-Policy), and what each decides, written out independently of the module. */
const RULE_SETS: Array<{ rules: unknown[]; decide: (name: string, x: string) => { rule: number; reason: string } | null }> = [
  { rules: [{ tools: ['alpha'], action: 'deny', reason: 'no alpha' }], decide: (n) => (n === 'alpha' ? { rule: 1, reason: 'no alpha' } : null) },
  { rules: [{ tools: ['b*'], when: { x: 'rm *' }, action: 'deny' }], decide: (n, x) => (n.startsWith('b') && x.startsWith('rm ') ? { rule: 1, reason: 'denied by policy' } : null) },
  {
    rules: [
      { tools: ['gamma'], action: 'allow' },
      { tools: ['*'], action: 'deny', reason: 'only gamma' },
    ],
    decide: (n) => (n === 'gamma' ? null : { rule: 2, reason: 'only gamma' }),
  },
  { rules: [{ tools: ['*'], when: { x: ['re:^y', 'z*'] }, action: 'deny', reason: 'yz' }], decide: (_, x) => (/^[yz]/.test(x) ? { rule: 1, reason: 'yz' } : null) },
];
const refusal = (set: number, name: string, d: { rule: number; reason: string }) => `agentgw refused the call to ${name}: ${d.reason} (policy rs${set}, rule ${d.rule})`;

const text = fc.string({ minLength: 1, maxLength: 40 });
const part: fc.Arbitrary<Part> = fc.oneof(
  fc.record({ kind: fc.constant('text' as const), text }),
  fc.record({ kind: fc.constant('reasoning' as const), text }),
  fc.record({ kind: fc.constant('call' as const), name: fc.constantFrom('alpha', 'beta', 'gamma'), x: fc.constantFrom('rm -rf a', 'ls -l', 'yes', 'zap', 'ok "quoted"') }),
);
const run = fc.record({ parts: fc.array(part, { minLength: 1, maxLength: 6 }), set: fc.integer({ min: 0, max: RULE_SETS.length - 1 }), chunk: fc.integer({ min: 1, max: 16 }), cuts: fc.array(fc.nat(), { maxLength: 12 }) });

/** The upstream: whatever stream is set next, written in pieces cut at the given byte offsets. */
let next = { sse: '', cuts: [] as number[] };
let upstream: Server;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  upstream = createServer(async (req, res) => {
    for await (const _ of req);
    const bytes = Buffer.from(next.sse);
    const cuts = [...new Set(next.cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let from = 0;
    for (const at of [...cuts, bytes.length]) {
      if (at > from) res.write(bytes.subarray(from, at));
      from = at;
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gw = await startTestGateway({
    config: {
      providers: {
        openai: { type: 'openai', base_url: `${url}/v1`, api_key: 'sk-up' },
        anthropic: { type: 'anthropic', base_url: url, api_key: 'sk-ant-up' },
      },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  for (const [i, s] of RULE_SETS.entries()) await admin.policy(`rs${i}`, { tool_rules: s.rules });
  key = (await admin.agent('acme', 'prop')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await new Promise((r) => upstream?.close(r));
});

const headers = (set: number) => ({ 'x-agent-policy': `rs${set}` });

/** The data of each frame of an SSE text. */
const events = (sse: string) =>
  sse
    .split('\n\n')
    .filter((f) => f.includes('data: {'))
    .map((f) => ({ frame: f, data: JSON.parse(f.slice(f.indexOf('data: ') + 6).split('\n')[0]!) as Record<string, any> }));

async function raw(path: string, body: unknown, set: number, extra: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers(set), ...extra }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return res.text();
}

test('chat completions: calls decided, the rest of the stream as sent, the SDK reads the answer left', async () => {
  const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl, maxRetries: 0 });
  await fc.assert(
    fc.asyncProperty(run, async ({ parts, set, chunk, cuts }) => {
      const content = parts.flatMap((p) => (p.kind === 'call' ? [] : [p.text])).join('');
      const calls = parts.flatMap((p, i) => (p.kind === 'call' ? [{ id: `call_${i}`, name: p.name, x: p.x }] : []));
      next = { sse: chatCompletionSse({ content: content || null, tool_calls: calls.map((c) => ({ id: c.id, name: c.name, arguments: { x: c.x } })) }, {}, chunk), cuts };
      const body = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'go' }], stream: true };
      const sent = events(await raw('/v1/chat/completions', body, set));
      // Content passes as sent, frame for frame.
      const contentFrames = (sse: ReturnType<typeof events>) => sse.filter((e) => typeof e.data.choices?.[0]?.delta?.content === 'string' && !e.data.choices[0].delta.content.includes('agentgw refused')).map((e) => e.frame);
      expect(contentFrames(sent)).toEqual(contentFrames(events(next.sse)));
      const final = await client.chat.completions.stream(body as OpenAI.ChatCompletionCreateParamsStreaming, { headers: headers(set) }).finalChatCompletion();
      const decided = calls.map((c) => ({ c, d: RULE_SETS[set]!.decide(c.name, c.x) }));
      const kept = decided.filter((x) => x.d === null).map(({ c }) => [c.id, c.name, JSON.stringify({ x: c.x })]);
      const refusals = decided.flatMap(({ c, d }) => (d ? [refusal(set, c.name, d)] : []));
      const choice = final.choices[0]!;
      expect(choice.message.content ?? null).toEqual([content, ...refusals].filter((t) => t !== '').join('\n') || null);
      expect((choice.message.tool_calls ?? []).map((t) => (t.type === 'function' ? [t.id, t.function.name, t.function.arguments] : null))).toEqual(kept);
      expect(choice.finish_reason).toBe(kept.length > 0 ? 'tool_calls' : 'stop');
    }),
    { numRuns: 25 },
  );
});

test('messages: calls decided, text and thinking as sent, the SDK reads the answer left', async () => {
  const client = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  await fc.assert(
    fc.asyncProperty(run, async ({ parts, set, chunk, cuts }) => {
      const content = parts.map((p, i) =>
        p.kind === 'text' ? { type: 'text', text: p.text } : p.kind === 'reasoning' ? { type: 'thinking', thinking: p.text, signature: 'sig' } : { type: 'tool_use', id: `toolu_${i}`, name: p.name, input: { x: p.x } },
      );
      const hasCalls = parts.some((p) => p.kind === 'call');
      next = { sse: messageToSse({ content, stop_reason: hasCalls ? 'tool_use' : 'end_turn' }, { model: 'claude-sonnet-4-5' }, chunk), cuts };
      const body = { model: 'anthropic/claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user' as const, content: 'go' }], stream: true };
      const sent = events(await raw('/v1/messages', body, set, { 'anthropic-version': '2023-06-01' }));
      const deltas = (sse: ReturnType<typeof events>) => sse.filter((e) => e.data.type === 'content_block_delta' && (e.data.delta.type === 'thinking_delta' || (e.data.delta.type === 'text_delta' && !e.data.delta.text.startsWith('agentgw refused')))).map((e) => e.frame);
      expect(deltas(sent)).toEqual(deltas(events(next.sse)));
      // Block indices run 0, 1, 2, ... as the SDK requires.
      expect(sent.filter((e) => e.data.type === 'content_block_start').map((e) => e.data.index)).toEqual(content.map((_, i) => i));
      const { stream: _stream, ...noStream } = body;
      const final = await client.messages.stream(noStream, { headers: headers(set) }).finalMessage();
      let allowed = 0;
      const expected = parts.map((p) => {
        if (p.kind === 'text') return p.text;
        if (p.kind === 'reasoning') return ['thinking', p.text];
        const d = RULE_SETS[set]!.decide(p.name, p.x);
        if (d) return refusal(set, p.name, d);
        allowed++;
        return [p.name, { x: p.x }];
      });
      expect(final.content.map((b) => (b.type === 'text' ? b.text : b.type === 'thinking' ? ['thinking', b.thinking] : b.type === 'tool_use' ? [b.name, b.input] : b.type))).toEqual(expected);
      expect(final.stop_reason).toBe(allowed > 0 ? 'tool_use' : 'end_turn');
    }),
    { numRuns: 25 },
  );
});

test('responses: calls decided, sequence numbers and output indices kept whole, the SDK reads the answer left', async () => {
  const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl, maxRetries: 0 });
  await fc.assert(
    fc.asyncProperty(run, async ({ parts, set, chunk, cuts }) => {
      const output = parts.map((p, i) =>
        p.kind === 'text' ? { type: 'message' as const, text: p.text } : p.kind === 'reasoning' ? { type: 'reasoning' as const, summary: [p.text] } : { type: 'function_call' as const, name: p.name, arguments: { x: p.x }, call_id: `call_${i}` },
      );
      next = { sse: responseSse({ output }, { model: 'gpt-4.1', reasoning: { summary: 'auto' } }, chunk), cuts };
      const body = { model: 'openai/gpt-4.1', input: 'go', stream: true, store: false };
      const sent = events(await raw('/v1/responses', body, set));
      expect(sent.map((e) => e.data.sequence_number)).toEqual(sent.map((_, i) => i));
      expect(sent.filter((e) => e.data.type === 'response.output_item.added').map((e) => e.data.output_index)).toEqual(parts.map((_, i) => i));
      const deltas = (sse: ReturnType<typeof events>) =>
        sse.filter((e) => e.data.type === 'response.reasoning_summary_text.delta' || (e.data.type === 'response.output_text.delta' && !e.data.delta.startsWith('agentgw refused'))).map((e) => e.data.delta as string);
      expect(deltas(sent)).toEqual(deltas(events(next.sse)));
      const final = await client.responses.stream({ model: body.model, input: body.input, store: false }, { headers: headers(set) }).finalResponse();
      const expected = parts.map((p, i) => {
        if (p.kind === 'text') return ['message', p.text];
        if (p.kind === 'reasoning') return ['reasoning', p.text];
        const d = RULE_SETS[set]!.decide(p.name, p.x);
        return d ? ['message', refusal(set, p.name, d)] : [`call_${i}`, p.name, JSON.stringify({ x: p.x })];
      });
      expect(
        final.output.map((o) =>
          o.type === 'message' ? ['message', o.content.map((c) => (c.type === 'output_text' ? c.text : '')).join('')] : o.type === 'reasoning' ? ['reasoning', o.summary.map((s) => s.text).join('')] : o.type === 'function_call' ? [o.call_id, o.name, o.arguments] : [o.type],
        ),
      ).toEqual(expected);
    }),
    { numRuns: 25 },
  );
});
