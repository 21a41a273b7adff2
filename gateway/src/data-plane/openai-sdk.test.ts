import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

let gw: TestGateway;
let upstream: FakeOpenAI;
let key: string;

beforeAll(async () => {
  upstream = await startFakeOpenAI();
  gw = await startTestGateway({
    config: {
      providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-upstream-secret' }, mock: { type: 'mock' } },
      models: { fast: ['openai/gpt-4o-mini'] },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'bot')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

describe('the official openai SDK against the gateway', () => {
  test('chat completion, with request and trace ids echoed', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl });
    const { data, response } = await client.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] }, { headers: { 'X-Agent-Trace-Id': 'trace-1' } })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]!.message.content).toBe('word0 word1 word2');
    expect(data.usage?.completion_tokens).toBe(7);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-agent-trace-id')).toBe('trace-1');
    const sent = upstream.requests.at(-1)!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.body.model).toBe('gpt-4o-mini');
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-secret');
  });

  test('streaming with for await, through an alias', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl });
    const stream = await client.chat.completions.create({
      model: 'fast',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream please' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('word0 word1 word2 ');
    expect(usage?.completion_tokens).toBe(7);
  });

  test('embeddings and the models list', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl });
    const emb = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: ['a', 'b'] });
    expect(emb.data).toHaveLength(2);
    expect(emb.data[0]!.embedding).toEqual([0.5, 0.25, 0.125]);
    const models = [];
    for await (const m of client.models.list()) models.push(m.id);
    expect(models).toContain('fast');
  });

  test('the mock provider answers offline, streamed and not', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl });
    const r = await client.chat.completions.create({ model: 'mock/mock-1', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toBeTruthy();
    const stream = await client.chat.completions.create({ model: 'mock/mock-1', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let n = 0;
    for await (const _ of stream) n++;
    expect(n).toBeGreaterThan(1);
  });

  test('a wrong key is an AuthenticationError', async () => {
    const client = new OpenAI({ apiKey: 'agk_wrongwrongwrongwrongwrongwrong12', baseURL: gw.baseUrl, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'mock/mock-1', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.status).toBe(401);
    expect(err.code).toBe('invalid_api_key');
  });

  test('an unknown model is a 400 unknown_model', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: gw.baseUrl, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'nope/x', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('unknown_model');
  });
});
