// Chat Completions to a gemini provider: reasoning_effort -> thinkingConfig within the model's limits and inside the
// output limit, and Gemini's thought parts (recorded answers) -> reasoning_content, streamed and not. Spoken with the
// OpenAI SDK; the upstream replays the Gemini API's wire format.
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../test-support/gateway.js';
import { type ScriptedGemini, startScriptedGemini } from '../../test-support/scripted-gemini.js';
import { type ScriptedOpenAI, startScriptedOpenAI } from '../../test-support/scripted-openai.js';
import { SKIP_THOUGHT_SIGNATURE } from './convert-to-gemini-contents.js';

const fixture = (name: string) => readFileSync(new URL(`../../data-plane/dialects/gemini/__fixtures__/${name}`, import.meta.url), 'utf8');

let gw: TestGateway;
let google: ScriptedGemini;
let other: ScriptedOpenAI;
let openai: OpenAI;
let claudeClient: Anthropic;

beforeAll(async () => {
  google = await startScriptedGemini((req) => {
    if (req.call === 'streamGenerateContent') return { sse: fixture('stream-thoughts-function-call.sse') };
    return JSON.parse(fixture(req.model === 'gemini-calls' ? 'generate-content-function-call.json' : 'generate-content-thoughts.json'));
  });
  other = await startScriptedOpenAI(() => ({ content: 'Done.' }));
  gw = await startTestGateway({
    config: {
      providers: {
        google: { type: 'gemini', base_url: google.url, api_key: 'goog-upstream-secret' },
        other: { type: 'openai', base_url: other.url, api_key: 'sk-upstream-secret' },
      },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  const apiKey = (await admin.agent('acme', 'chat')).api_key;
  openai = new OpenAI({ apiKey, baseURL: `${gw.url}/v1` });
  claudeClient = new Anthropic({ apiKey, baseURL: gw.url });
});
afterAll(async () => {
  await gw?.close();
  await google?.close();
  await other?.close();
});

const ask = [{ role: 'user' as const, content: 'What is the capital of France?' }];

/** The thinkingConfig of the last request Gemini received, with the model of its path. */
function lastSent(): { model: string; thinking: unknown } {
  const req = google.requests.at(-1)!;
  return { model: req.model, thinking: req.body.generationConfig?.thinkingConfig };
}

async function thinkingFor(model: string, effort: string | undefined, max?: number): Promise<unknown> {
  await openai.chat.completions.create({ model: `google/${model}`, messages: ask, ...(effort ? { reasoning_effort: effort as never } : {}), ...(max ? { max_completion_tokens: max } : {}) });
  expect(lastSent().model).toBe(model);
  return lastSent().thinking;
}

describe('reasoning_effort -> thinkingConfig', () => {
  test("an effort level becomes its thinking budget, within each model's range, with the thoughts asked back", async () => {
    expect(await thinkingFor('gemini-2.5-pro', 'high')).toEqual({ thinkingBudget: 24576, includeThoughts: true });
    expect(await thinkingFor('gemini-2.5-pro', 'max')).toEqual({ thinkingBudget: 32768, includeThoughts: true });
    expect(await thinkingFor('gemini-2.5-flash', 'max')).toEqual({ thinkingBudget: 24576, includeThoughts: true });
    expect(await thinkingFor('gemini-2.5-flash-lite', 'low')).toEqual({ thinkingBudget: 2048, includeThoughts: true });
  });

  test('"none" turns thinking off where it can be, and is the smallest budget on 2.5 Pro, which always thinks', async () => {
    expect(await thinkingFor('gemini-2.5-flash', 'none')).toEqual({ thinkingBudget: 0 });
    expect(await thinkingFor('gemini-2.5-pro', 'none')).toEqual({ thinkingBudget: 128 });
  });

  test('the budget leaves a quarter of the output limit to the answer; below the model\'s minimum it is off (or the minimum)', async () => {
    expect(await thinkingFor('gemini-2.5-pro', 'high', 4000)).toEqual({ thinkingBudget: 3000, includeThoughts: true });
    expect(await thinkingFor('gemini-2.5-flash-lite', 'medium', 600)).toEqual({ thinkingBudget: 0 });
    expect(await thinkingFor('gemini-2.5-pro', 'medium', 100)).toEqual({ thinkingBudget: 128, includeThoughts: true });
  });

  test('Gemini 3 takes a thinking level; models without thinking and requests without an effort get no thinkingConfig', async () => {
    expect(await thinkingFor('gemini-3-pro-preview', 'low')).toEqual({ thinkingLevel: 'low', includeThoughts: true });
    expect(await thinkingFor('gemini-3-pro-preview', 'medium')).toEqual({ thinkingLevel: 'high', includeThoughts: true });
    expect(await thinkingFor('gemini-2.0-flash', 'high')).toBeUndefined();
    expect(await thinkingFor('gemini-2.5-pro', undefined)).toBeUndefined();
  });

  test('an effort that is no level is a 400 naming reasoning_effort, and Gemini is not called', async () => {
    const before = google.requests.length;
    const err = await openai.chat.completions.create({ model: 'google/gemini-2.5-pro', messages: ask, reasoning_effort: 'extreme' as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('reasoning_effort');
    expect(google.requests.length).toBe(before);
  });
});

describe("Gemini's thoughts -> reasoning_content", () => {
  test('a thought part is the reasoning, out of the content; its signature is not passed on', async () => {
    const res = await openai.chat.completions.create({ model: 'google/gemini-2.5-pro', messages: ask, reasoning_effort: 'low' });
    const message = res.choices[0]!.message as typeof res.choices[0]['message'] & { reasoning_content?: string };
    expect(message.reasoning_content).toBe('The user wants the capital of France. Answer directly.');
    expect(message.content).toBe('The capital of France is Paris.');
    expect(res.usage?.completion_tokens_details?.reasoning_tokens).toBe(44);
    expect(JSON.stringify(res)).not.toContain('EqQBCqEBAdHtim9Jt1uQ');
  });

  test('streamed: the thought streams as reasoning_content before the text and the calls', async () => {
    const stream = await openai.chat.completions.create({ model: 'google/gemini-2.5-pro', messages: ask, reasoning_effort: 'medium', stream: true, stream_options: { include_usage: true } });
    const order: string[] = [];
    let reasoning = '';
    let content = '';
    const calls: string[] = [];
    let raw = '';
    for await (const chunk of stream) {
      raw += JSON.stringify(chunk);
      const delta = chunk.choices[0]?.delta as { reasoning_content?: string; content?: string | null; tool_calls?: Array<{ function?: { name?: string } }> } | undefined;
      if (delta?.reasoning_content) (reasoning += delta.reasoning_content), order.push('reasoning');
      if (delta?.content) (content += delta.content), order.push('content');
      for (const c of delta?.tool_calls ?? []) if (c.function?.name) calls.push(c.function.name), order.push('call');
    }
    expect(reasoning).toBe('**Planning the write**\n\nI need to create the file, then read it.');
    expect(content).toBe('I will write it now.');
    expect(calls).toEqual(['write_file', 'run_shell_command']);
    expect(order[0]).toBe('reasoning');
    expect(order.lastIndexOf('reasoning')).toBeLessThan(order.indexOf('content'));
    // The signature of the first call comes as Google's OpenAI-compatible API gives it: extra_content of that call.
    expect(raw.match(/CiQB0e2Kb5sF7wq4/g)).toHaveLength(1);
    expect(raw).toContain('"extra_content":{"google":{"thought_signature":"CiQB0e2Kb5sF7wq4pZ0Yt0dD3nO2h0bB0r7lR3nYx1g7hM0a5wQ"}}');
  });
});

describe('from the other dialects, translated to a gemini provider', () => {
  test("a Responses client's reasoning.effort becomes thinkingConfig, and the thought its reasoning item", async () => {
    const res = await openai.responses.create({ model: 'google/gemini-2.5-pro', input: 'What is the capital of France?', reasoning: { effort: 'medium' } });
    expect(lastSent().thinking).toEqual({ thinkingBudget: 8192, includeThoughts: true });
    const reasoning = res.output.find((o) => o.type === 'reasoning');
    expect(reasoning?.type === 'reasoning' && reasoning.summary.map((s) => s.text).join('')).toBe('The user wants the capital of France. Answer directly.');
    expect(res.output_text).toBe('The capital of France is Paris.');
  });

  test("an Anthropic client's thinking budget becomes thinkingConfig", async () => {
    await claudeClient.messages.create({ model: 'google/gemini-2.5-flash', max_tokens: 16000, messages: ask, thinking: { type: 'enabled', budget_tokens: 12000 } });
    expect(lastSent()).toEqual({ model: 'gemini-2.5-flash', thinking: { thinkingBudget: 8192, includeThoughts: true } });
  });
});

describe('thoughtSignature: back to Gemini only', () => {
  test("a call's signature comes as extra_content, goes back to Gemini in the next turn, and is left out for another family", async () => {
    const first = await openai.chat.completions.create({ model: 'google/gemini-calls', messages: ask, reasoning_effort: 'low' });
    const calls = first.choices[0]!.message.tool_calls! as Array<{ id: string; function: { name: string }; extra_content?: unknown }>;
    expect(calls.map((c) => c.function.name)).toEqual(['write_file', 'run_shell_command']);
    expect(calls[0]!.extra_content).toEqual({ google: { thought_signature: 'CiQB0e2Kb5sF7wq4pZ0Yt0dD3nO2h0bB0r7lR3nYx1g7hM0a5wQKXgHR7Ypb' } });
    expect(calls[1]!.extra_content).toBeUndefined();
    // The client gives the assistant message back as it came, with the results of the calls.
    const next = [...ask, first.choices[0]!.message, ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'ok' }))];

    await openai.chat.completions.create({ model: 'google/gemini-2.5-pro', messages: next as never });
    const model = google.requests.at(-1)!.body.contents.find((c: { role: string }) => c.role === 'model');
    const signed = model.parts.filter((p: { functionCall?: unknown }) => p.functionCall).map((p: { thoughtSignature?: string }) => p.thoughtSignature);
    expect(signed).toEqual(['CiQB0e2Kb5sF7wq4pZ0Yt0dD3nO2h0bB0r7lR3nYx1g7hM0a5wQKXgHR7Ypb', SKIP_THOUGHT_SIGNATURE]);

    await openai.chat.completions.create({ model: 'other/gpt-4o-mini', messages: next as never });
    const sent = other.chatRequests.at(-1)!;
    expect(sent.raw).not.toContain('CiQB0e2Kb5sF7wq4');
    expect(sent.body.messages[1].tool_calls.map((c: { function: { name: string } }) => c.function.name)).toEqual(['write_file', 'run_shell_command']);
  });
});
