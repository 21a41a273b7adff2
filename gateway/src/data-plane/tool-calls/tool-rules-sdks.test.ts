// Tool rules through the official SDKs: a denied call taken out of the answer (streamed and not, native and translated),
// the calls allowed beside it kept, and the step's trace listing each decision.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic } from '../../test-support/scripted-anthropic.js';
import { type ScriptedOpenAI, startScriptedOpenAI } from '../../test-support/scripted-openai.js';
import { type ScriptedResponses, startScriptedResponses } from '../../test-support/scripted-responses.js';

const REFUSED = 'agentgw refused the call to Bash: no deletions (policy guard, rule 1)';
const RM = { command: 'rm -rf build' };
const LS = { command: 'ls' };
const BASH = { type: 'function' as const, function: { name: 'Bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } } };

let gw: TestGateway;
let chatUp: ScriptedOpenAI;
let anthropicUp: ScriptedAnthropic;
let responsesUp: ScriptedResponses;
let key: string;
let admin: ReturnType<typeof adminClient>;

beforeAll(async () => {
  // Every upstream proposes `rm -rf build` and `ls`, with text around them.
  chatUp = await startScriptedOpenAI(() => ({
    content: 'Cleaning up.',
    tool_calls: [
      { id: 'call_rm', name: 'Bash', arguments: RM },
      { id: 'call_ls', name: 'Bash', arguments: LS },
    ],
  }));
  anthropicUp = await startScriptedAnthropic(() => ({
    content: [
      { type: 'text', text: 'First I delete.' },
      { type: 'tool_use', id: 'toolu_rm', name: 'Bash', input: RM },
      { type: 'text', text: 'Then I stop.' },
    ],
    stop_reason: 'tool_use',
  }));
  responsesUp = await startScriptedResponses(() => ({
    output: [
      { type: 'message', text: 'Cleaning up.' },
      { type: 'function_call', name: 'Bash', arguments: RM, call_id: 'call_rm' },
      { type: 'function_call', name: 'Bash', arguments: LS, call_id: 'call_ls' },
    ],
  }));
  gw = await startTestGateway({
    config: {
      providers: {
        openai: { type: 'openai', base_url: chatUp.url, api_key: 'sk-up' },
        anthropic: { type: 'anthropic', base_url: anthropicUp.url, api_key: 'sk-ant-up' },
        oairesp: { type: 'openai', base_url: responsesUp.url, api_key: 'sk-resp-up' },
        compat: { type: 'openai-compatible', base_url: chatUp.url, api_key: 'sk-compat-up' },
      },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('guard', { tool_rules: [{ tools: ['Bash'], when: { command: 'rm *' }, action: 'deny', reason: 'no deletions' }] });
  // Denied outright (no `when`): never offered to the model.
  await admin.policy('no-bash', { tool_rules: [{ tools: ['Bash', 'web_search'], action: 'deny' }] });
  key = (await admin.agent('acme', 'coder', 'guard')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await chatUp?.close();
  await anthropicUp?.close();
  await responsesUp?.close();
});

const openai = (trace: string) => new OpenAI({ apiKey: key, baseURL: gw.baseUrl, maxRetries: 0, defaultHeaders: { 'x-agent-trace-id': trace } });
const anthropic = (trace: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0, defaultHeaders: { 'x-agent-trace-id': trace } });
const trace = async (id: string) => {
  await gw.runtime.dataPlane.usage.flush();
  return (await admin.call('GET', `/traces/${id}`)) as { requests: Array<{ tool_calls: unknown[] }> };
};

describe('chat completions through the OpenAI SDK, parallel calls with one denied', () => {
  test('not streamed: the denied call is out, its refusal in the content, the allowed call kept; the trace lists both', async () => {
    const c = await openai('t-chat').chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'clean' }], tools: [BASH] });
    const choice = c.choices[0]!;
    expect(choice.message.content).toBe(`Cleaning up.\n${REFUSED}`);
    expect(choice.message.tool_calls?.map((t) => (t.type === 'function' ? [t.id, t.function.arguments] : null))).toEqual([['call_ls', JSON.stringify(LS)]]);
    expect(choice.finish_reason).toBe('tool_calls');
    expect((await trace('t-chat')).requests[0]!.tool_calls).toEqual([
      { id: 'call_rm', name: 'Bash', decision: 'denied', rule: { policy_id: 'guard', index: 1 }, reason: 'no deletions', approval_id: null, wait_ms: expect.any(Number) },
      { id: 'call_ls', name: 'Bash', decision: 'allowed', rule: null, reason: null, approval_id: null, wait_ms: expect.any(Number) },
    ]);
  });

  test('streamed: the SDK accumulates one call at index 0 and the refusal as content', async () => {
    const stream = openai('t-chat-s').chat.completions.stream({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'clean' }], tools: [BASH], stream: true });
    const c = await stream.finalChatCompletion();
    const choice = c.choices[0]!;
    expect(choice.message.content).toBe(`Cleaning up.\n${REFUSED}`);
    expect(choice.message.tool_calls?.map((t) => (t.type === 'function' ? [t.id, t.function.name, t.function.arguments] : null))).toEqual([['call_ls', 'Bash', JSON.stringify(LS)]]);
    expect(choice.finish_reason).toBe('tool_calls');
    expect((await trace('t-chat-s')).requests[0]!.tool_calls).toHaveLength(2);
  });
});

describe('messages through the Anthropic SDK: a denied tool_use between two text blocks', () => {
  for (const [route, model] of [
    ['native', 'anthropic/claude-sonnet-4-5'],
    ['translated', 'compat/gpt-4o-mini'],
  ] as const) {
    test(`${route}: messages.stream's final message is well formed, the call replaced by its refusal, the turn ended`, async () => {
      const stream = anthropic(`t-msg-${route}`).messages.stream({
        model,
        max_tokens: 1000,
        messages: [{ role: 'user', content: 'clean' }],
        tools: [{ name: 'Bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
      });
      const m = await stream.finalMessage();
      if (route === 'native') {
        expect(m.content).toEqual([
          { type: 'text', text: 'First I delete.' },
          { type: 'text', text: REFUSED },
          { type: 'text', text: 'Then I stop.' },
        ]);
        expect(m.stop_reason).toBe('end_turn');
      } else {
        // The chat upstream also proposes `ls`, which stays.
        expect(m.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_use' ? [b.name, b.input] : b.type))).toEqual(['Cleaning up.', REFUSED, ['Bash', LS]]);
        expect(m.stop_reason).toBe('tool_use');
      }
    });
  }

  test('native, not streamed: the same answer in one message', async () => {
    const m = await anthropic('t-msg-create').messages.create({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user', content: 'clean' }] });
    expect(m.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['First I delete.', REFUSED, 'Then I stop.']);
    expect(m.stop_reason).toBe('end_turn');
    expect((await trace('t-msg-create')).requests[0]!.tool_calls).toMatchObject([{ id: 'toolu_rm', decision: 'denied' }]);
  });

  test('translated, not streamed: the chat answer re-encoded, the denied call a text block, the allowed one kept', async () => {
    const m = await anthropic('t-msg-create-tr').messages.create({ model: 'compat/gpt-4o-mini', max_tokens: 1000, messages: [{ role: 'user', content: 'clean' }] });
    expect(m.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_use' ? [b.id, b.input] : b.type))).toEqual(['Cleaning up.', REFUSED, ['call_ls', LS]]);
    expect(m.stop_reason).toBe('tool_use');
  });
});

describe('responses through the OpenAI SDK', () => {
  for (const [route, model] of [
    ['native', 'oairesp/gpt-4.1'],
    ['translated', 'compat/gpt-4o-mini'],
  ] as const) {
    test(`${route}: streamed and not, a message item stands in the denied call's place`, async () => {
      const client = openai(`t-resp-${route}`);
      const tools = [{ type: 'function' as const, name: 'Bash', parameters: BASH.function.parameters, strict: false }];
      const expectOutput = (output: OpenAI.Responses.ResponseOutputItem[]) => {
        const shape = output.map((i) => (i.type === 'message' ? ['message', i.content.map((c) => (c.type === 'output_text' ? c.text : c.type)).join('')] : i.type === 'function_call' ? [i.call_id, i.arguments] : [i.type]));
        expect(shape).toEqual([
          ['message', 'Cleaning up.'],
          ['message', REFUSED],
          ['call_ls', JSON.stringify(LS)],
        ]);
      };
      const r = await client.responses.create({ model, input: 'clean', tools });
      expectOutput(r.output);
      const final = await client.responses.stream({ model, input: 'clean', tools }).finalResponse();
      expectOutput(final.output);
      // The kept response (previous_response_id, GET) is the one the client saw.
      expectOutput((await client.responses.retrieve(final.id)).output);
      expect((await trace(`t-resp-${route}`)).requests.map((s) => s.tool_calls.length)).toEqual([2, 2]);
    });
  }
});

describe('a tool denied with no `when` is not offered to the model', () => {
  test('chat, messages and responses: left out of tools (web search too), a tool_choice naming it too; other tools stay', async () => {
    const headers = { 'x-agent-policy': 'no-bash' };
    const READ = { type: 'function' as const, function: { name: 'Read', parameters: { type: 'object' } } };
    await openai('t-out').chat.completions.create(
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], tools: [BASH, READ], tool_choice: { type: 'function', function: { name: 'Bash' } } },
      { headers },
    );
    const chat = chatUp.chatRequests.at(-1)!.body;
    expect(chat.tools.map((t: any) => t.function.name)).toEqual(['Read']);
    expect(chat.tool_choice).toBeUndefined();
    await anthropic('t-out').messages.create(
      { model: 'anthropic/claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'Bash', input_schema: { type: 'object' } }] },
      { headers },
    );
    expect(anthropicUp.requests.at(-1)!.body.tools).toBeUndefined();
    await openai('t-out').responses.create(
      { model: 'oairesp/gpt-4.1', input: 'x', tools: [{ type: 'web_search' }, { type: 'function', name: 'Read', parameters: {}, strict: false }] },
      { headers },
    );
    expect(responsesUp.requests.at(-1)!.body.tools.map((t: any) => t.name ?? t.type)).toEqual(['Read']);
  });
});

test('agentgw_tool_calls_total counts the decisions', async () => {
  const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.adminKey}` } })).text();
  // The `rm` call of each of the ten answers under `guard`, and the `ls` call of the eight that propose it; under
  // `no-bash` every Bash call the upstreams still propose (two, one and two) is denied.
  expect(/^agentgw_tool_calls_total\{decision="denied"\} (\d+)$/m.exec(metrics)?.[1]).toBe('15');
  expect(/^agentgw_tool_calls_total\{decision="allowed"\} (\d+)$/m.exec(metrics)?.[1]).toBe('8');
});
