// Model ids that could name another model upstream than the one the allow-list matched (a `..` segment in Gemini's
// resource path, a percent-escape, a control character) are a 400 before any allow-list, on every endpoint.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { modelIdProblem } from './model-id.js';

describe('which model ids may be routed', () => {
  const accepted = [
    'openai/gpt-4.1',
    'openai/gpt-4o-2024-08-06',
    'anthropic/claude-3.5-sonnet',
    'anthropic/claude-sonnet-4-5',
    'claude-opus-4-8',
    'ollama/llama3.1:8b',
    'bedrock/anthropic.claude-3-5-sonnet-20241022-v2:0',
    'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    'bedrock/arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-7-sonnet-20250219-v1:0',
    'fireworks/accounts/fireworks/models/llama-v3p1-8b-instruct',
    'workers/@cf/meta/llama-3.1-8b-instruct',
    'openrouter/anthropic/claude-3.5-sonnet:beta',
    'hf/meta-llama/Llama-3.1-8B-Instruct',
    'gemini/gemini-2.5-flash',
    'gemini/tunedModels/my-model-abc.1',
    'lmstudio/qwen2.5-7b-instruct@q4_k_m',
    'vllm/...weird-but-not-a-segment',
    'x/a..b',
    'x/.hidden',
    'x/v1.',
  ];
  test.each(accepted)('accepts %s', (id) => {
    expect(modelIdProblem(id)).toBeNull();
  });

  const refused: Array<[string, string]> = [
    ['gemini/gemini-2.5-flash-x/../models/gemini-2.5-pro', '".." path segment'],
    ['gemini/gemini-2.5-flash/..', '".." path segment'],
    ['gemini/../gemini-2.5-pro', '".." path segment'],
    ['openai/./gpt-4o', '"." path segment'],
    ['openai/gpt-4o/.', '"." path segment'],
    ['..', '".." path segment'],
    ['openai//gpt-4o', 'empty path segment'],
    ['openai/gpt-4o/', 'empty path segment'],
    ['gemini/gemini-2.5-flash-x%2F..%2Fgemini-2.5-pro', 'percent-escape'],
    ['gemini/gemini-2.5-flash%00', 'percent-escape'],
    ['gemini/gemini-2.5-flash-x\\..\\gemini-2.5-pro', 'backslash'],
    ['openai/gpt-4o\n', 'U+000A'],
    ['openai/gpt-4o\r\nx-injected: 1', 'U+000D'],
    ['openai/gpt-4o\u0000', 'U+0000'],
    ['openai/gpt-4o\u007f', 'U+007F'],
    ['openai/gpt-4o\u0085', 'U+0085'],
    ['openai/gpt-4o ', 'U+0020'],
    ['openai/gpt 4o', 'U+0020'],
    ['openai/gpt-4o\t', 'U+0009'],
    ['openai/gpt-4o\u00a0', 'U+00A0'],
    ['openai/gpt-4o\u2028', 'U+2028'],
    ['openai/gpt-4o\u200b', 'U+200B'],
    ['openai/gpt-4o\u202e', 'U+202E'],
    ['openai/gpt-4o\ufeff', 'U+FEFF'],
  ];
  test.each(refused)('refuses %j (%s)', (id, problem) => {
    expect(modelIdProblem(id)).toContain(problem);
  });
});

describe('a model id with a ".." segment on every endpoint', () => {
  let gw: TestGateway;
  let gemini: Server;
  let geminiUrl: string;
  const received: string[] = [];
  let key: string;

  beforeAll(async () => {
    // A Gemini upstream that answers every model call, and records the path it was asked for.
    gemini = createServer((req, res) => {
      received.push(req.url ?? '');
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        if ((req.url ?? '').includes(':embedContent') || (req.url ?? '').includes(':batchEmbedContents')) {
          res.end(JSON.stringify({ embeddings: [{ values: [0.1, 0.2] }] }));
          return;
        }
        res.end(
          JSON.stringify({
            candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }],
            usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 },
            modelVersion: 'gemini-2.5-flash',
          }),
        );
      });
    });
    await new Promise<void>((resolve) => gemini.listen(0, '127.0.0.1', resolve));
    geminiUrl = `http://127.0.0.1:${(gemini.address() as AddressInfo).port}/v1beta`;
    gw = await startTestGateway({ config: { providers: { gemini: { type: 'gemini', base_url: geminiUrl, api_key: 'g-key' } } } });
    const admin = adminClient(gw.adminUrl, gw.adminKey);
    await admin.tenant('acme');
    await admin.policy('flash-only', { tenant_id: 'acme', allowed_models: ['gemini/gemini-2.5-flash*', 'gemini/gemini-embedding*'] });
    key = (await admin.agent('acme', 'bot', 'flash-only')).api_key;
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => gemini?.close(resolve));
  });

  const EVIL = 'gemini/gemini-2.5-flash-x/../models/gemini-2.5-pro';
  const EVIL_EMBEDDING = 'gemini/gemini-embedding-x/../../models/text-embedding-004';
  const user = [{ role: 'user', content: 'hi' }];
  const endpoints = [
    { name: 'chat completions', path: '/v1/chat/completions', body: (model: string) => ({ model, messages: user, max_tokens: 16 }), anthropic: false },
    { name: 'chat completions, streamed', path: '/v1/chat/completions', body: (model: string) => ({ model, messages: user, max_tokens: 16, stream: true }), anthropic: false },
    { name: 'messages', path: '/v1/messages', body: (model: string) => ({ model, messages: user, max_tokens: 16 }), anthropic: true },
    { name: 'messages count_tokens', path: '/v1/messages/count_tokens', body: (model: string) => ({ model, messages: user }), anthropic: true },
    { name: 'responses', path: '/v1/responses', body: (model: string) => ({ model, input: 'hi', max_output_tokens: 16 }), anthropic: false },
    { name: 'embeddings', path: '/v1/embeddings', body: (model: string) => ({ model: model === EVIL ? EVIL_EMBEDDING : 'gemini/gemini-embedding-001', input: 'hi' }), anthropic: false },
  ];

  async function post(path: string, body: unknown) {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
  }

  test.each(endpoints)('$name: a 400 validation_failed naming model, and the upstream is never called', async (e) => {
    const before = received.length;
    const r = await post(e.path, e.body(EVIL));
    expect(r.status, r.text).toBe(400);
    const error = r.json.error;
    expect(error.code).toBe('validation_failed');
    expect(error.message).toMatch(/"\.\." path segment: name the model as "provider\/model" or an alias/);
    if (e.anthropic) expect(error.type).toBe('invalid_request_error');
    else expect(error.param).toBe('model');
    expect(received.length).toBe(before);
  });

  test.each(endpoints)('$name: the allowed model itself is served', async (e) => {
    const r = await post(e.path, e.body('gemini/gemini-2.5-flash'));
    expect(r.status, r.text).toBe(200);
  });

  test('a percent-escaped or control-character id is refused the same way, before the allow-list would refuse it', async () => {
    for (const model of ['gemini/gemini-2.5-flash%2F..%2Fgemini-2.5-pro', 'gemini/gemini-2.5-pro\u0000', 'openai/gpt-4o\\..\\x']) {
      const r = await post('/v1/chat/completions', { model, messages: user });
      expect(r.status, r.text).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'validation_failed', param: 'model' });
      expect(r.json.error.message).not.toMatch(/[\u0000-\u001f]/);
    }
  });
});
