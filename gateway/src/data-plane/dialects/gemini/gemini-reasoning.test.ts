// A Gemini client's thinkingConfig reaching Claude (translated through Chat Completions) as Anthropic's thinking budget,
// within the model's limits and inside maxOutputTokens, and Claude's thinking coming back as thought parts, streamed and
// not, only when the client asked for them (includeThoughts). Spoken with the @google/genai SDK.
import { GoogleGenAI, ThinkingLevel } from '@google/genai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic } from '../../../test-support/scripted-anthropic.js';

const THINKING = 'The user asks for the capital of France. It is Paris; answer in one sentence.';
const SIGNATURE = 'EqQBCkgIARABGAIiQFd2c2lnbmF0dXJlLW9mLWNsYXVkZS10aGlua2luZw';

let gw: TestGateway;
let anthropic: ScriptedAnthropic;
let key: string;

beforeAll(async () => {
  anthropic = await startScriptedAnthropic((body) =>
    body.thinking
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
  gw = await startTestGateway({
    config: {
      providers: { anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-secret' } },
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
