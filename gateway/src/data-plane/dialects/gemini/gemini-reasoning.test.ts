// A Gemini client's thinkingConfig reaching Claude (translated through Chat Completions) as Anthropic's thinking budget,
// within the model's limits and inside maxOutputTokens, and Claude's thinking coming back as thought parts, streamed and
// not, only when the client asked for them (includeThoughts). Spoken with the @google/genai SDK.
import { GoogleGenAI, ThinkingLevel } from '@google/genai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { SKIP_THOUGHT_SIGNATURE } from '../../../providers/gemini/convert-to-gemini-contents.js';
import { type ScriptedAnthropic, startScriptedAnthropic } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedGemini, geminiText, startScriptedGemini } from '../../../test-support/scripted-gemini.js';

const THINKING = 'The user asks for the capital of France. It is Paris; answer in one sentence.';
const SIGNATURE = 'EqQBCkgIARABGAIiQFd2c2lnbmF0dXJlLW9mLWNsYXVkZS10aGlua2luZw';

let gw: TestGateway;
let anthropic: ScriptedAnthropic;
let google: ScriptedGemini;
let key: string;

beforeAll(async () => {
  anthropic = await startScriptedAnthropic((body) =>
    body.tools && !JSON.stringify(body.messages).includes('tool_result')
      ? {
          content: [
            { type: 'thinking', thinking: 'Look the weather up.', signature: SIGNATURE },
            { type: 'tool_use', id: 'toolu_w1', name: 'get_weather', input: { city: 'Paris' } },
          ],
          stop_reason: 'tool_use',
        }
      : body.thinking
      ? {
          content: [
            { type: 'thinking', thinking: THINKING, signature: SIGNATURE },
            { type: 'text', text: 'The capital of France is Paris.' },
          ],
          stop_reason: 'end_turn',
          usage: { input_tokens: 30, output_tokens: 60 },
        }
      : { content: [{ type: 'text', text: 'Paris.' }], stop_reason: 'end_turn', usage: { input_tokens: 30, output_tokens: 2 } },
  );
  google = await startScriptedGemini(() => geminiText('Sunny.'));
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-secret' },
        google: { type: 'gemini', base_url: google.url, api_key: 'goog-upstream-secret' },
      },
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5'] },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  key = (await admin.agent('acme', 'gem')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
  await google?.close();
});

const ai = () => new GoogleGenAI({ apiKey: key, apiVersion: 'v1beta', httpOptions: { baseUrl: gw.url } });
const ask = { role: 'user', parts: [{ text: 'What is the capital of France?' }] };

/** The thinking setting of the last request Claude received. */
const lastThinking = () => anthropic.messageRequests.at(-1)!.body.thinking;

describe('thinkingConfig -> Claude thinking', () => {
  test('a thinkingBudget becomes the budget of its effort level; includeThoughts gets the thinking back as a thought part', async () => {
    const res = await ai().models.generateContent({
      model: 'anthropic/claude-sonnet-4-5',
      contents: [ask],
      config: { maxOutputTokens: 32000, thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 } },
    });
    expect(lastThinking()).toEqual({ type: 'enabled', budget_tokens: 8192 });
    const parts = res.candidates![0]!.content!.parts!;
    expect(parts[0]).toEqual({ text: THINKING, thought: true });
    expect(parts.filter((p) => !p.thought).map((p) => p.text).join('')).toBe('The capital of France is Paris.');
    // The SDK's text leaves thoughts out: the answer alone.
    expect(res.text).toBe('The capital of France is Paris.');
    // Claude's signature is for Claude: no thoughtSignature reaches a Gemini client.
    expect(JSON.stringify(res.candidates)).not.toContain(SIGNATURE);
  });

  test('without includeThoughts Claude still thinks, and no thought part comes back', async () => {
    const res = await ai().models.generateContent({
      model: 'claude-sonnet-4-5',
      contents: [ask],
      config: { maxOutputTokens: 64000, thinkingConfig: { thinkingLevel: ThinkingLevel.HIGH } },
    });
    expect(lastThinking()).toEqual({ type: 'enabled', budget_tokens: 24576 });
    expect(res.candidates![0]!.content!.parts!.some((p) => p.thought)).toBe(false);
    expect(res.text).toBe('The capital of France is Paris.');
  });

  test('the budget stays inside maxOutputTokens; too small a limit, a budget of 0 or no thinkingConfig asks for no thinking', async () => {
    await ai().models.generateContent({ model: 'claude-sonnet-4-5', contents: [ask], config: { maxOutputTokens: 4000, thinkingConfig: { thinkingBudget: 24000 } } });
    expect(lastThinking()).toEqual({ type: 'enabled', budget_tokens: 3000 });
    await ai().models.generateContent({ model: 'claude-sonnet-4-5', contents: [ask], config: { maxOutputTokens: 1000, thinkingConfig: { thinkingBudget: 2048 } } });
    expect(lastThinking()).toBeUndefined();
    await ai().models.generateContent({ model: 'claude-sonnet-4-5', contents: [ask], config: { maxOutputTokens: 32000, thinkingConfig: { thinkingBudget: 0, includeThoughts: true } } });
    expect(lastThinking()).toBeUndefined();
    const plain = await ai().models.generateContent({ model: 'claude-sonnet-4-5', contents: [ask] });
    expect(lastThinking()).toBeUndefined();
    expect(plain.text).toBe('Paris.');
  });

  test('a Claude model without extended thinking gets none', async () => {
    await ai().models.generateContent({ model: 'anthropic/claude-3-5-haiku-20241022', contents: [ask], config: { thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 } } });
    expect(lastThinking()).toBeUndefined();
  });
});

describe('streamed', () => {
  test('thinking streams as thought parts before the answer when asked for, and not otherwise', async () => {
    const chunks = [];
    for await (const c of await ai().models.generateContentStream({
      model: 'claude-sonnet-4-5',
      contents: [ask],
      config: { maxOutputTokens: 32000, thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 } },
    })) chunks.push(c);
    expect(lastThinking()).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    const thoughts = parts.filter((p) => p.thought);
    // Streamed in pieces as Claude streams them.
    expect(thoughts.length).toBeGreaterThan(1);
    expect(thoughts.map((p) => p.text).join('')).toBe(THINKING);
    const firstAnswer = parts.findIndex((p) => !p.thought && p.text);
    expect(parts.findLastIndex((p) => p.thought)).toBeLessThan(firstAnswer);
    expect(parts.filter((p) => !p.thought).map((p) => p.text ?? '').join('')).toBe('The capital of France is Paris.');
    expect(JSON.stringify(chunks)).not.toContain(SIGNATURE);

    const quiet = [];
    for await (const c of await ai().models.generateContentStream({ model: 'claude-sonnet-4-5', contents: [ask], config: { maxOutputTokens: 32000, thinkingConfig: { thinkingBudget: 2048 } } })) quiet.push(c);
    expect(lastThinking()).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const quietParts = quiet.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    expect(quietParts.some((p) => p.thought)).toBe(false);
    expect(quietParts.map((p) => p.text ?? '').join('')).toBe('The capital of France is Paris.');
  });
});

describe("Claude's signed thinking before a call, through a Gemini client", () => {
  const WEATHER = { functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] };
  const config = { maxOutputTokens: 32000, tools: [WEATHER], thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 } };

  test('rides on the call as its thoughtSignature and goes back to Claude first in that turn, streamed and not; a gemini target gets the skip sentinel', async () => {
    const first = await ai().models.generateContent({ model: 'claude-sonnet-4-5', contents: [ask], config });
    const streamed = [];
    for await (const c of await ai().models.generateContentStream({ model: 'claude-sonnet-4-5', contents: [ask], config })) streamed.push(c);
    for (const parts of [first.candidates![0]!.content!.parts!, streamed.flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])]) {
      expect(parts.filter((p) => p.thought).map((p) => p.text).join('')).toBe('Look the weather up.');
      const call = parts.find((p) => p.functionCall)!;
      expect(call.functionCall!.name).toBe('get_weather');
      expect(call.thoughtSignature).toMatch(/^agentgw\.anthropic\.thinking\.v1:/);
      // Not Claude's signature as such: a Gemini client cannot tell it from Gemini's own, and Gemini never receives it.
      expect(call.thoughtSignature).not.toContain(SIGNATURE);

      const next = [ask, first.candidates![0]!.content!, { role: 'user', parts: [{ functionResponse: { id: call.functionCall!.id, name: 'get_weather', response: { sky: 'sunny' } } }] }];
      next[1] = { role: 'model', parts };
      await ai().models.generateContent({ model: 'claude-sonnet-4-5', contents: next, config });
      const sent = anthropic.messageRequests.at(-1)!.body;
      const assistant = sent.messages.find((m: { role: string }) => m.role === 'assistant');
      expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: 'Look the weather up.', signature: SIGNATURE });
      expect(assistant.content.at(-1)).toMatchObject({ type: 'tool_use', name: 'get_weather' });
      // Claude keeps thinking: its thinking is given back before the call it led to.
      expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });

      await ai().models.generateContent({ model: 'google/gemini-2.5-pro', contents: next, config });
      const native = google.requests.at(-1)!.body;
      expect(JSON.stringify(native)).not.toContain('agentgw.anthropic');
      expect(native.contents[1].parts.find((p: { functionCall?: unknown }) => p.functionCall).thoughtSignature).toBe(SKIP_THOUGHT_SIGNATURE);
    }
  });
});
