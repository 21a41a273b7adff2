import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply, toolUseReply } from '../../../test-support/scripted-anthropic.js';

let gw: TestGateway;
let upstream: ScriptedAnthropic;
let key: string;

beforeAll(async () => {
  upstream = await startScriptedAnthropic((body) => {
    const last = body.messages.at(-1);
    if (typeof last.content === 'string' && last.content.includes('weather')) return toolUseReply('get_weather', { city: 'Paris' });
    return {
      content: [
        { type: 'thinking', thinking: 'The user greets me.', signature: 'sig-abc' },
        { type: 'text', text: 'Hello from upstream' },
      ],
      stop_reason: 'end_turn',
      usage: { input_tokens: 20, output_tokens: 9, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 },
    };
  });
  gw = await startTestGateway({
    config: {
      providers: { anthropic: { type: 'anthropic', base_url: upstream.url, api_key: 'sk-ant-upstream-secret' }, mock: { type: 'mock' } },
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5'], 'mocked-*': ['mock/echo'] },
      prices: { 'anthropic/claude-sonnet-4-5': { input: 3, output: 15, cached_input: 0.3 } },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'coder')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const client = () => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });

describe('the official Anthropic SDK against /v1/messages', () => {
  test('native: messages.create passes the body on and the answer back as sent, thinking and signature included', async () => {
    const { data, response } = await client()
      .messages.create(
        { model: 'claude-opus-4-8', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'hi there' }] },
        { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14', 'x-claude-code-session-id': 'sess-1' } },
      )
      .withResponse();
    expect(data.content[0]).toEqual({ type: 'thinking', thinking: 'The user greets me.', signature: 'sig-abc' });
    expect(data.content[1]).toMatchObject({ type: 'text', text: 'Hello from upstream' });
    expect(response.headers.get('x-agent-trace-id')).toBe('sess-1');
    const sent = upstream.messageRequests.at(-1)!;
    expect(sent.body.model).toBe('claude-sonnet-4-5');
    expect(sent.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(sent.headers['x-api-key']).toBe('sk-ant-upstream-secret');
    expect(sent.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
  });

  test('native: messages.stream yields the upstream events and the final message', async () => {
    const stream = client().messages.stream({ model: 'claude-haiku-4-5', max_tokens: 512, messages: [{ role: 'user', content: 'what is the weather' }], tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const tool = final.content.find((b) => b.type === 'tool_use');
    expect(tool).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
  });

  test('translated: a mock upstream answers in Anthropic format, streamed and not', async () => {
    const made = await client().messages.create({ model: 'mocked-model', max_tokens: 256, system: 'be brief', messages: [{ role: 'user', content: 'hello' }] });
    expect(made.type).toBe('message');
    expect(made.content[0]!.type).toBe('text');
    expect(made.usage.output_tokens).toBeGreaterThan(0);
    const streamed = await client().messages.stream({ model: 'mocked-model', max_tokens: 256, messages: [{ role: 'user', content: 'hello' }] }).finalMessage();
    expect(streamed.content[0]!.type).toBe('text');
    expect((streamed.content[0] as Anthropic.TextBlock).text).toBe((made.content[0] as Anthropic.TextBlock).text);
  });

  test('countTokens: asked of the Anthropic upstream', async () => {
    const counted = await client().messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'count me' }] });
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(upstream.requests.at(-1)!.path).toContain('/v1/messages/count_tokens');
  });

  test('errors come in Anthropic shape, as the SDK error classes', async () => {
    const bad = new Anthropic({ apiKey: 'agk_wrong', baseURL: gw.url, maxRetries: 0 });
    const e = await bad.messages.create({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((e as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'invalid_api_key' } });
  });

  test('a policy refusal is a PermissionDeniedError and a spent budget a RateLimitError, neither retried', async () => {
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.policy('sdk-tight', { tenant_id: 'acme', allowed_models: ['anthropic/claude-sonnet-4-5'], daily_budget: 0 });
    const tight = (await admin.agent('acme', 'sdk-tight-bot', 'sdk-tight')).api_key as string;
    // maxRetries 2: the SDK would retry a 429, but x-should-retry: false tells it not to.
    let sent = 0;
    const counting: typeof fetch = (input, init) => {
      sent++;
      return fetch(input, init);
    };
    const sdk = new Anthropic({ apiKey: tight, baseURL: gw.url, maxRetries: 2, fetch: counting });
    const before = upstream.messageRequests.length;
    const denied = await sdk.messages.create({ model: 'mocked-model', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((err: unknown) => err);
    expect(denied).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((denied as InstanceType<typeof Anthropic.PermissionDeniedError>).error).toMatchObject({ error: { type: 'permission_error', code: 'model_not_allowed' } });
    expect(sent).toBe(1);
    const limited = await sdk.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    const rl = limited as InstanceType<typeof Anthropic.RateLimitError>;
    expect(rl.error).toMatchObject({ error: { type: 'rate_limit_error', code: 'daily_budget_exceeded' } });
    expect(rl.headers.get('x-should-retry')).toBe('false');
    expect(sent).toBe(2);
    expect(upstream.messageRequests.length).toBe(before);
  });
});
