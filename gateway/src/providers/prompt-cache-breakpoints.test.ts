// End to end: prompt-cache breakpoints an OpenAI-format client marks with cache_control (LiteLLM's convention) pass the
// gateway's request validation and reach Anthropic as cache_control, Bedrock as cachePoint blocks, and an
// OpenAI-compatible upstream untouched; a request Anthropic would refuse is answered 400 by the gateway.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fastValidChat } from '../data-plane/fast-validate.js';
import { ChatCompletionRequest } from '../contract/data-plane-requests.js';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { FakeUpstream, fixtureReader } from './__fixtures__/fake-upstream.js';

const anthropicFixtures = fixtureReader(new URL('./anthropic/x', import.meta.url).href);
const bedrockFixtures = fixtureReader(new URL('./bedrock/x', import.meta.url).href);
const openaiFixtures = fixtureReader(new URL('./openai/x', import.meta.url).href);

const LONG_DOC = 'The contract, in full: '.padEnd(4000, 'clause ');
const EPHEMERAL = { type: 'ephemeral' };
const ONE_HOUR = { type: 'ephemeral', ttl: '1h' };

/** An agent's request with a breakpoint in each place a client can put one. */
const marked = {
  messages: [
    { role: 'system', content: [{ type: 'text', text: LONG_DOC, cache_control: ONE_HOUR }] },
    { role: 'user', content: 'When does the contract renew?', cache_control: EPHEMERAL },
    { role: 'assistant', content: 'On 1 March.' },
    { role: 'user', content: [{ type: 'text', text: 'And the notice period?', cache_control: EPHEMERAL }] },
  ],
  tools: [
    {
      type: 'function',
      function: { name: 'lookup_clause', description: 'Finds a clause', parameters: { type: 'object', properties: { n: { type: 'integer' } } } },
      cache_control: ONE_HOUR,
    },
  ],
};

let upstream: FakeUpstream;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  upstream = await FakeUpstream.start();
  upstream.respond((req, res) => {
    if (req.url === '/v1/messages') res.writeHead(200, { 'content-type': 'application/json' }).end(anthropicFixtures.text('message-cache-write-1h.json'));
    else if (req.url.endsWith('/converse')) res.writeHead(200, { 'content-type': 'application/json' }).end(bedrockFixtures.text('converse-cache-write.json'));
    else if (req.url === '/compat/v1/chat/completions') res.writeHead(200, { 'content-type': 'application/json' }).end(openaiFixtures.text('chat-completion.json'));
    else res.writeHead(404).end();
  });
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: { type: 'anthropic', base_url: `${upstream.url}/v1`, api_key: 'sk-ant-test' },
        bedrock: { type: 'bedrock', base_url: upstream.url, region: 'us-east-1', access_key_id: 'AKIDEXAMPLE0TEST', secret_access_key: 'secret-example' },
        compat: { type: 'openai-compatible', base_url: `${upstream.url}/compat/v1` },
      },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'caching-bot')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.stop();
});

async function chat(body: Record<string, unknown>): Promise<{ status: number; json: any }> {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

describe('prompt-cache breakpoints through the gateway', () => {
  test('both request validators keep cache_control as the client sent it', () => {
    const body = { model: 'anthropic/claude-sonnet-4-5', ...marked };
    expect(fastValidChat(body)).toBe(true);
    expect(ChatCompletionRequest.parse(body)).toEqual(body);
  });

  test('Anthropic gets cache_control on the marked tool, system block and message blocks', async () => {
    const { status, json } = await chat({ model: 'anthropic/claude-sonnet-4-5', ...marked });
    expect(status, JSON.stringify(json)).toBe(200);
    const sent = upstream.last.json();
    expect(sent.tools).toEqual([{ name: 'lookup_clause', description: 'Finds a clause', input_schema: marked.tools[0].function.parameters, cache_control: ONE_HOUR }]);
    expect(sent.system).toEqual([{ type: 'text', text: LONG_DOC, cache_control: ONE_HOUR }]);
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'When does the contract renew?', cache_control: EPHEMERAL }] },
      { role: 'assistant', content: [{ type: 'text', text: 'On 1 March.' }] },
      { role: 'user', content: [{ type: 'text', text: 'And the notice period?', cache_control: EPHEMERAL }] },
    ]);
  });

  test('Bedrock gets a cachePoint after each marked block, with the ttl the client gave', async () => {
    const { status, json } = await chat({ model: 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0', ...marked });
    expect(status, JSON.stringify(json)).toBe(200);
    const point = { cachePoint: { type: 'default' } };
    const hourPoint = { cachePoint: { type: 'default', ttl: '1h' } };
    const sent = upstream.last.json();
    expect(sent.toolConfig.tools).toEqual([
      { toolSpec: { name: 'lookup_clause', description: 'Finds a clause', inputSchema: { json: marked.tools[0].function.parameters } } },
      hourPoint,
    ]);
    expect(sent.system).toEqual([{ text: LONG_DOC }, hourPoint]);
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ text: 'When does the contract renew?' }, point] },
      { role: 'assistant', content: [{ text: 'On 1 March.' }] },
      { role: 'user', content: [{ text: 'And the notice period?' }, point] },
    ]);
  });

  test('an OpenAI-compatible upstream gets the messages and tools as the client sent them', async () => {
    const { status, json } = await chat({ model: 'compat/some-model', ...marked });
    expect(status, JSON.stringify(json)).toBe(200);
    const sent = upstream.last.json();
    expect(sent.messages).toEqual(marked.messages);
    expect(sent.tools).toEqual(marked.tools);
  });

  test('more than 4 breakpoints for Anthropic: 400 with what to fix, and no upstream call', async () => {
    const before = upstream.requests.length;
    const messages = [...marked.messages, { role: 'assistant', content: 'Thirty days.' }, { role: 'user', content: 'Thanks.', cache_control: EPHEMERAL }];
    const { status, json } = await chat({ model: 'anthropic/claude-sonnet-4-5', ...marked, messages });
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ code: 'validation_failed', type: 'invalid_request_error', param: 'messages[5].cache_control' });
    expect(json.error.message).toContain('at most 4 cache_control breakpoints per request, and this request has 5');
    expect(upstream.requests.length).toBe(before);
  });

  test('a 1-hour breakpoint after a 5-minute one: 400 naming it, for Anthropic and Bedrock alike, and no upstream call', async () => {
    const before = upstream.requests.length;
    const messages = [{ role: 'system', content: LONG_DOC, cache_control: EPHEMERAL }, { role: 'user', content: 'When does the contract renew?', cache_control: ONE_HOUR }];
    for (const model of ['anthropic/claude-sonnet-4-5', 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0']) {
      const { status, json } = await chat({ model, messages });
      expect(status, model).toBe(400);
      expect(json.error).toMatchObject({ code: 'validation_failed', type: 'invalid_request_error', param: 'messages[1].cache_control' });
      expect(json.error.message).toContain('messages[1].cache_control asks for a 1-hour cache after messages[0].cache_control');
    }
    expect(upstream.requests.length).toBe(before);
  });

  test('an invalid cache_control: 400 naming it, for Anthropic and Bedrock alike', async () => {
    const before = upstream.requests.length;
    for (const model of ['anthropic/claude-sonnet-4-5', 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0']) {
      const { status, json } = await chat({ model, messages: [{ role: 'user', content: 'Hi', cache_control: { type: 'ephemeral', ttl: '24h' } }] });
      expect(status, model).toBe(400);
      expect(json.error).toMatchObject({ code: 'validation_failed', param: 'messages[0].cache_control' });
      expect(json.error.message).toContain('"ttl": "5m" or "1h"');
    }
    expect(upstream.requests.length).toBe(before);
  });
});
