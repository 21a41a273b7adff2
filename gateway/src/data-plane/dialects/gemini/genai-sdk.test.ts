import { ApiError, FunctionCallingConfigMode, GoogleGenAI, type Content } from '@google/genai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply, toolUseReply } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedGemini, geminiCalls, startScriptedGemini } from '../../../test-support/scripted-gemini.js';
import thoughts from './__fixtures__/generate-content-thoughts.json' with { type: 'json' };

let gw: TestGateway;
let google: ScriptedGemini;
let anthropic: ScriptedAnthropic;
let key: string;
let admin: ReturnType<typeof adminClient>;

const WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city',
  parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

beforeAll(async () => {
  google = await startScriptedGemini((req) => {
    if (req.model === 'gemini-down') return { status: 503, body: { error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } } };
    const last = JSON.stringify(req.body.contents.at(-1));
    if (last.includes('weather') && !last.includes('functionResponse')) return geminiCalls([{ id: 'call-1', name: 'get_weather', args: { city: 'Paris' } }]);
    if (last.includes('functionResponse')) return { candidates: [{ content: { role: 'model', parts: [{ text: 'It is sunny in Paris.' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 6, totalTokenCount: 46 } };
    if (last.includes('fail')) return { status: 500, body: { error: { code: 500, message: 'internal', status: 'INTERNAL' } } };
    return thoughts;
  });
  anthropic = await startScriptedAnthropic((body) => {
    const last = body.messages.at(-1);
    const text = JSON.stringify(last.content);
    if (text.includes('weather')) return toolUseReply('get_weather', { city: 'Lyon' }, 'toolu_01abc');
    if (text.includes('tool_result')) return textReply('Lyon is cloudy.');
    return textReply('Hello from Claude', { input_tokens: 11, output_tokens: 4 });
  });
  gw = await startTestGateway({
    config: {
      providers: {
        google: { type: 'gemini', base_url: google.url, api_key: 'goog-upstream-secret' },
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-secret' },
      },
      models: { 'gemini-*': ['google/gemini-2.5-pro'], 'claude-*': ['anthropic/claude-sonnet-4-5'], 'fallback-model': ['google/gemini-down', 'anthropic/claude-sonnet-4-5'] },
      prices: {
        'google/gemini-2.5-pro': { input: 1.25, output: 10, cached_input: 0.31 },
        'anthropic/claude-sonnet-4-5': { input: 3, output: 15 },
      },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('no-gpt', { tenant_id: 'acme', allowed_models: ['gemini-*', 'claude-*', 'google/*', 'anthropic/*', 'fallback-model'] });
  key = (await admin.agent('acme', 'gem', 'no-gpt')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await google?.close();
  await anthropic?.close();
});

/** The SDK as users make it: it calls /v1/models/{model}:method (its default API version for the Gemini API). */
const client = (apiKey = key, headers: Record<string, string> = {}) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: gw.url, headers } });
/** With apiVersion v1beta, as Gemini CLI calls it (and as listing models needs: GET /v1/models stays OpenAI's). */
const beta = (apiKey = key) => new GoogleGenAI({ apiKey, apiVersion: 'v1beta', httpOptions: { baseUrl: gw.url } });

async function traceOf(id: string): Promise<any> {
  for (let i = 0; i < 50; i++) {
    const t = await admin.call('GET', `/traces/${encodeURIComponent(id)}`, undefined, undefined).catch(() => null);
    if (t && t.requests?.length > 0 && t.requests.every((r: any) => r.status !== 'running')) return t;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`trace ${id} not recorded`);
}

describe('the @google/genai SDK against /v1beta, native to a gemini provider', () => {
  test('generateContent: the body goes as sent with the target model in the path, the answer comes back as sent, billed from usageMetadata', async () => {
    const res = await client(key, { 'x-agent-trace-id': 'genai-native-1' }).models.generateContent({
      model: 'gemini-3-pro',
      contents: 'What is the capital of France?',
      config: { systemInstruction: 'Answer briefly.', temperature: 0.2, thinkingConfig: { includeThoughts: true, thinkingBudget: 512 } },
    });
    expect(res.text).toBe('The capital of France is Paris.');
    const parts = res.candidates![0]!.content!.parts!;
    expect(parts[0]).toMatchObject({ thought: true });
    expect(parts[1]!.thoughtSignature).toBe('EqQBCqEBAdHtim9Jt1uQ7Zc2cDkwMzI3ZjQ0YjZmMGE4');
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: 1210, cachedContentTokenCount: 1024, thoughtsTokenCount: 44 });
    const sent = google.requests.at(-1)!;
    expect(sent.model).toBe('gemini-2.5-pro');
    expect(sent.call).toBe('generateContent');
    expect(sent.headers['x-goog-api-key']).toBe('goog-upstream-secret');
    expect(sent.body.systemInstruction).toEqual({ parts: [{ text: 'Answer briefly.' }], role: 'user' });
    expect(sent.body.generationConfig).toMatchObject({ temperature: 0.2, thinkingConfig: { includeThoughts: true, thinkingBudget: 512 } });
    expect(sent.body.model).toBeUndefined();
    const trace = await traceOf('genai-native-1');
    expect(trace.requests[0]).toMatchObject({ endpoint: 'gemini', model: 'google/gemini-2.5-pro', prompt_tokens: 1210, completion_tokens: 52, cached_tokens: 1024, reasoning_tokens: 44, http_status: 200 });
    // 1210 - 1024 uncached at 1.25, 1024 cached at 0.31, 52 out at 10 (USD per million).
    expect(trace.requests[0].cost).toBeCloseTo((186 * 1.25 + 1024 * 0.31 + 52 * 10) / 1e6, 9);
  });

  test('generateContentStream: the upstream events come through as sent', async () => {
    const stream = await beta().models.generateContentStream({ model: 'gemini-3-pro', contents: 'Say hello' });
    let text = '';
    let thought = '';
    for await (const chunk of stream) {
      for (const p of chunk.candidates?.[0]?.content?.parts ?? []) {
        if (p.thought) thought += p.text ?? '';
        else text += p.text ?? '';
      }
    }
    expect(thought).toBe('The user wants the capital of France. Answer directly.');
    expect(text).toBe('The capital of France is Paris.');
    expect(google.requests.at(-1)!.path).toMatch(/:streamGenerateContent\?alt=sse$/);
  });

  test('countTokens: asked of the gemini upstream', async () => {
    const before = google.requests.length;
    const res = await client().models.countTokens({ model: 'gemini-3-pro', contents: 'count these words please' });
    expect(res.totalTokens).toBeGreaterThan(0);
    expect(google.requests.at(-1)!.call).toBe('countTokens');
    expect(google.requests.length).toBe(before + 1);
  });

  test('function calling: a call comes back, its response goes up, the final answer follows', async () => {
    const c = client();
    const tools = [{ functionDeclarations: [WEATHER] }];
    const first = await c.models.generateContent({ model: 'gemini-3-pro', contents: 'What is the weather in Paris?', config: { tools, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } } } });
    expect(first.functionCalls).toEqual([{ id: 'call-1', name: 'get_weather', args: { city: 'Paris' } }]);
    expect(google.requests.at(-1)!.body.tools).toEqual([{ functionDeclarations: [WEATHER] }]);
    const history: Content[] = [
      { role: 'user', parts: [{ text: 'What is the weather in Paris?' }] },
      first.candidates![0]!.content!,
      { role: 'user', parts: [{ functionResponse: { id: 'call-1', name: 'get_weather', response: { output: 'sunny, 24 C' } } }] },
    ];
    const second = await c.models.generateContent({ model: 'gemini-3-pro', contents: history, config: { tools } });
    expect(second.text).toBe('It is sunny in Paris.');
  });
});

describe('the @google/genai SDK against /v1beta, translated for an anthropic provider', () => {
  test('generateContent and generateContentStream answer in Gemini format', async () => {
    const res = await client().models.generateContent({ model: 'claude-sonnet', contents: 'hi', config: { systemInstruction: 'be nice', maxOutputTokens: 300, topK: 40 } });
    expect(res.text).toBe('Hello from Claude');
    expect(res.candidates![0]!.finishReason).toBe('STOP');
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 4, totalTokenCount: 15 });
    const sent = anthropic.messageRequests.at(-1)!.body;
    expect(sent.system).toBe('be nice');
    expect(sent.max_tokens).toBe(300);
    expect(sent.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
    let text = '';
    for await (const chunk of await client().models.generateContentStream({ model: 'claude-sonnet', contents: 'hi' })) text += chunk.text ?? '';
    expect(text).toBe('Hello from Claude');
  });

  test('function calling, streamed and not: functionCall parts from tool_use, functionResponse parts as tool_result', async () => {
    const tools = [{ functionDeclarations: [WEATHER] }];
    const first = await client().models.generateContent({ model: 'claude-sonnet', contents: 'weather in Lyon?', config: { tools } });
    expect(first.functionCalls).toEqual([{ id: 'toolu_01abc', name: 'get_weather', args: { city: 'Lyon' } }]);
    const sentTools = anthropic.messageRequests.at(-1)!.body.tools;
    expect(sentTools[0]).toMatchObject({ name: 'get_weather', input_schema: WEATHER.parametersJsonSchema });
    const calls: unknown[] = [];
    for await (const chunk of await client().models.generateContentStream({ model: 'claude-sonnet', contents: 'weather in Lyon?', config: { tools } })) calls.push(...(chunk.functionCalls ?? []));
    expect(calls).toEqual([{ id: 'toolu_01abc', name: 'get_weather', args: { city: 'Lyon' } }]);
    const second = await client().models.generateContent({
      model: 'claude-sonnet',
      contents: [
        { role: 'user', parts: [{ text: 'weather in Lyon?' }] },
        { role: 'model', parts: [{ functionCall: { id: 'toolu_01abc', name: 'get_weather', args: { city: 'Lyon' } } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'toolu_01abc', name: 'get_weather', response: { output: 'cloudy' } } }] },
      ],
      config: { tools },
    });
    expect(second.text).toBe('Lyon is cloudy.');
    const msgs = anthropic.messageRequests.at(-1)!.body.messages;
    expect(msgs[1].content[0]).toMatchObject({ type: 'tool_use', id: 'toolu_01abc', name: 'get_weather', input: { city: 'Lyon' } });
    expect(msgs[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01abc' });
  });

  test('a gemini target that fails falls back to an Anthropic-format one: the answer is translated, the step names the target that served', async () => {
    const res = await client(key, { 'x-agent-trace-id': 'genai-fallback' }).models.generateContent({ model: 'fallback-model', contents: 'hi' });
    expect(res.text).toBe('Hello from Claude');
    const t = await traceOf('genai-fallback');
    expect(t.requests[0]).toMatchObject({ endpoint: 'gemini', provider: 'anthropic', model: 'anthropic/claude-sonnet-4-5', http_status: 200 });
    expect(google.requests.at(-1)!.model).toBe('gemini-down');
  });

  test('countTokens is counted locally', async () => {
    const res = await client().models.countTokens({ model: 'claude-sonnet', contents: 'count these words please' });
    expect(res.totalTokens).toBeGreaterThan(0);
  });

  test('a field that cannot be carried is a 400 naming it', async () => {
    const err = await client()
      .models.generateContent({ model: 'claude-sonnet', contents: 'hi', config: { tools: [{ codeExecution: {} }] } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toContain('tools.0.codeExecution');
  });
});

describe('errors in Google shape', () => {
  test('a wrong key is 401 UNAUTHENTICATED with agentgw code invalid_api_key', async () => {
    const res = await fetch(`${gw.url}/v1beta/models/gemini-3-pro:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'agk_wrong' }, body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }) });
    expect(res.status).toBe(401);
    const body = (await res.json()) as any;
    expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'invalid_api_key', domain: 'agentgw' }] });
    const err = await client('agk_wrong').models.generateContent({ model: 'gemini-3-pro', contents: 'hi' }).catch((e: unknown) => e);
    expect((err as ApiError).status).toBe(401);
  });

  test('the key may come as ?key=; a model the policy does not allow is 403 PERMISSION_DENIED', async () => {
    const ok = await fetch(`${gw.url}/v1beta/models/gemini-3-pro:generateContent?key=${key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }) });
    expect(ok.status).toBe(200);
    const unknown = await client().models.generateContent({ model: 'google-other/x', contents: 'hi' }).catch((e: unknown) => e);
    expect((unknown as ApiError).status).toBe(400);
    await admin.policy('gemini-only', { tenant_id: 'acme', allowed_models: ['google/*'] });
    const narrow = (await admin.agent('acme', 'gem-narrow', 'gemini-only')).api_key;
    const denied = await client(narrow).models.generateContent({ model: 'claude-sonnet', contents: 'hi' }).catch((e: unknown) => e);
    expect((denied as ApiError).status).toBe(403);
    expect(JSON.parse((denied as ApiError).message).error).toMatchObject({ status: 'PERMISSION_DENIED', details: [{ reason: 'model_not_allowed' }] });
  });

  test('an upstream failure is 502 in Google shape; the same routes answer under /v1/models', async () => {
    const err = await client().models.generateContent({ model: 'gemini-3-pro', contents: 'please fail' }).catch((e: unknown) => e);
    expect((err as ApiError).status).toBeGreaterThanOrEqual(502);
    const res = await fetch(`${gw.url}/v1/models/gemini-3-pro:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': key }, body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }) });
    expect(res.status).toBe(200);
    const list = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await list.json()) as any).object).toBe('list');
  });

  test('GET /v1beta/models lists the allowed models; models.get reads one', async () => {
    const v1 = await client().models.list().catch((e: unknown) => e);
    expect((v1 as ApiError).status).toBe(401);
    expect((v1 as ApiError).message).toContain('GET /v1beta/models');
    const pager = await beta().models.list();
    const names: string[] = [];
    for await (const m of pager) names.push(m.name!);
    expect(names).toContain('models/gemini-*');
    expect(names).toContain('models/claude-*');
    const one = await beta().models.get({ model: 'claude-*' });
    expect(one.name).toBe('models/claude-*');
    // A bare id a glob alias matches is one a request may use.
    expect((await beta().models.get({ model: 'gemini-2.5-flash' })).name).toBe('models/gemini-2.5-flash');
    const missing = await fetch(`${gw.url}/v1beta/models/nope`, { headers: { 'x-goog-api-key': key } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.status).toBe('NOT_FOUND');
  });
});
