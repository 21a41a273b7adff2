import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';

// An Anthropic-format upstream that answers the first turn with signed thinking and then fails (500) on cue, and an
// OpenAI-format upstream behind it in the same alias: the request the fallback receives must hold nothing only
// Anthropic can take, and the step's trace record says what was taken out.
let anthropicFails = false;
const received: { anthropic: string[]; openai: string[] } = { anthropic: [], openai: [] };
const SIGNED_TURN = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'thinking', thinking: 'The user wants the weather; I should call the tool.', signature: 'EqQBCkgIARABGAIiQL0signatureBytes' },
    { type: 'redacted_thinking', data: 'EmwKAhgBEgy3redactedBytes' },
    { type: 'text', text: 'Let me look that up.' },
    { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 20, output_tokens: 30 },
};
const COMPLETION = { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'It is sunny in Paris.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 40, completion_tokens: 7, total_tokens: 47 } };
const CHUNKS = [
  { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { role: 'assistant', content: 'It is sunny' }, finish_reason: null }] },
  { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content: ' in Paris.' }, finish_reason: 'stop' }] },
  { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 40, completion_tokens: 7, total_tokens: 47 } },
];

let upstream: Server;
let gw: TestGateway;
let key: string;
let admin: ReturnType<typeof adminClient>;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url?.startsWith('/anthropic/')) {
        received.anthropic.push(body);
        if (anthropicFails) return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"type":"error","error":{"type":"api_error","message":"Internal server error"}}');
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SIGNED_TURN));
      }
      received.openai.push(body);
      if (JSON.parse(body).stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.end(`${CHUNKS.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(COMPLETION));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gw = await startTestGateway({
    config: {
      providers: {
        claude: { type: 'anthropic', base_url: `${base}/anthropic/v1`, api_key: 'sk-ant-test' },
        oai: { type: 'openai', base_url: `${base}/openai/v1`, api_key: 'sk-test' },
      },
      models: {
        'claude-sonnet-4-5': ['claude/claude-sonnet-4-5', 'oai/gpt-4o-mini'],
        'only-openai': ['oai/gpt-4o-mini'],
      },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'coder')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await new Promise((r) => upstream?.close(r));
});

const TOOLS = [
  { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } }, cache_control: { type: 'ephemeral' } },
  { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
];

function messagesCall(trace: string, body: Record<string, unknown>) {
  return fetch(`${gw.baseUrl}/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-agent-trace-id': trace },
    body: JSON.stringify({ max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 512 }, tools: TOOLS, ...body }),
  });
}

/** The second turn of a conversation whose first turn came back with signed and redacted thinking and a tool call. */
function secondTurn(trace: string, content: unknown[], stream: boolean) {
  return messagesCall(trace, {
    model: 'claude-sonnet-4-5',
    stream,
    system: [{ type: 'text', text: 'You are a helpful assistant.', cache_control: { type: 'ephemeral' } }],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny, 24 C', cache_control: { type: 'ephemeral' } }] },
    ],
  });
}

async function traceSteps(trace: string) {
  await gw.runtime.dataPlane.usage.flush();
  return (await admin.call('GET', `/traces/${encodeURIComponent(trace)}`)).requests as Array<{ provider: string; status: string; cleaned?: string[] }>;
}

function expectClean(sent: string) {
  expect(sent).not.toContain('signature');
  expect(sent).not.toContain('redacted');
  expect(sent).not.toContain('cache_control');
  expect(sent).not.toContain('web_search');
  const body = JSON.parse(sent);
  // What the conversation said stays: the visible text, the tool call and its result, the client tool.
  expect(body.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
  expect(body.messages[2]).toMatchObject({ content: 'Let me look that up.', tool_calls: [{ id: 'toolu_1', function: { name: 'get_weather' } }] });
  expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['get_weather']);
}

describe('fallback from an Anthropic-format target to an OpenAI-format one', () => {
  test('signed thinking, cache hints and server tools are taken out for the fallback, and the step says so', async () => {
    anthropicFails = false;
    received.openai.length = 0;
    const trace = 'fallback-clean';
    const first = await messagesCall(trace, { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    expect(first.status).toBe(200);
    const turn = (await first.json()) as typeof SIGNED_TURN;
    expect(turn.content[0]).toMatchObject({ type: 'thinking', signature: SIGNED_TURN.content[0]!.signature });
    anthropicFails = true;
    const anthropicBefore = received.anthropic.length;
    const res = await secondTurn(trace, turn.content, false);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { content: Array<{ type: string; text?: string }> };
    expect(answer.content).toEqual([{ type: 'text', text: 'It is sunny in Paris.' }]);
    expect(received.anthropic.length).toBeGreaterThan(anthropicBefore);
    expect(received.anthropic.at(-1)).toContain('signature');
    expect(received.openai).toHaveLength(1);
    expectClean(received.openai[0]!);
    const steps = await traceSteps(trace);
    expect(steps.map((s) => [s.provider, s.status])).toEqual([['claude', 'ok'], ['oai', 'ok']]);
    expect(steps[0]!.cleaned).toEqual([]);
    expect(steps[1]!.cleaned).toEqual(['thinking_signatures', 'redacted_thinking', 'cache_control', 'server_tools']);
  });

  test('a streamed turn served by the fallback gets the same cleaning', async () => {
    // The Anthropic target fails (or, after the test above, is still cooling down): the stream comes from the fallback.
    anthropicFails = true;
    received.openai.length = 0;
    const trace = 'fallback-clean-stream';
    const res = await secondTurn(trace, SIGNED_TURN.content, true);
    expect(res.status).toBe(200);
    const events = await res.text();
    expect(events).toContain('It is sunny');
    expect(events).toContain('message_stop');
    expect(received.openai).toHaveLength(1);
    const sent = received.openai[0]!;
    expectClean(sent);
    expect(JSON.parse(sent).stream).toBe(true);
    const steps = await traceSteps(trace);
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatchObject({ provider: 'oai', status: 'ok', cleaned: ['thinking_signatures', 'redacted_thinking', 'cache_control', 'server_tools'] });
  });

  test('an alias with no Anthropic-format target still refuses a server tool, naming it', async () => {
    const res = await messagesCall('no-anthropic', { model: 'only-openai', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('tools.1 is the server tool');
  });
});
