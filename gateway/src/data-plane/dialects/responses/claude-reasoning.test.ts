// Reasoning across families, with the official openai SDK against agentgw and a (scripted) Anthropic upstream replaying
// the recorded thinking payloads (providers/anthropic/__fixtures__): a Responses request with reasoning.effort reaches
// Claude with a thinking budget inside max_tokens, and Claude's thinking comes back as a reasoning item (summary and, for
// the next turn, its signed blocks in encrypted_content) that the SDK parses, plain and streamed; the next turn gives the
// signed thinking back to Claude before its tool call, and never to another family. Chat Completions clients get the
// thinking as reasoning_content, streamed too.
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type Script, type ScriptedAnthropic, startScriptedAnthropic, textReply } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedOpenAI, chatTextReply, startScriptedOpenAI } from '../../../test-support/scripted-openai.js';
import { type ScriptedResponses, startScriptedResponses, textResponse } from '../../../test-support/scripted-responses.js';
import { expectOpenResponsesObject, expectOpenResponsesStream } from './__fixtures__/open-responses-schema.js';

const ANTHROPIC_FIXTURES = new URL('../../../providers/anthropic/__fixtures__/', import.meta.url);
const THINKING_MESSAGE = JSON.parse(readFileSync(new URL('message-thinking-tool-use.json', ANTHROPIC_FIXTURES), 'utf8'));
const THINKING_SSE = readFileSync(new URL('message-stream-thinking.sse', ANTHROPIC_FIXTURES), 'utf8');
const THINKING = THINKING_MESSAGE.content[0] as { thinking: string; signature: string };
const STREAMED_THINKING = THINKING_SSE.split('\n')
  .filter((l) => l.includes('"thinking_delta"'))
  .map((l) => JSON.parse(l.slice('data: '.length)).delta.thinking)
  .join('');
const STREAMED_SIGNATURE = JSON.parse(THINKING_SSE.split('\n').find((l) => l.includes('"signature_delta"'))!.slice('data: '.length)).delta.signature;

const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Get the current weather for a location',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  strict: false,
};

const CLAUDE = 'anthropic/claude-sonnet-4-5';

let gw: TestGateway;
let anthropic: ScriptedAnthropic;
let native: ScriptedResponses;
let chat: ScriptedOpenAI;
let anScript: Script = () => textReply('no script set');
let client: OpenAI;

beforeAll(async () => {
  anthropic = await startScriptedAnthropic((b, i, h) => anScript(b, i, h));
  native = await startScriptedResponses(() => textResponse('Answered by OpenAI.'));
  chat = await startScriptedOpenAI(() => chatTextReply('Answered by a chat model.'));
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream' },
        openai: { type: 'openai', base_url: native.url, api_key: 'sk-openai-upstream' },
        compat: { type: 'openai-compatible', base_url: chat.url, api_key: 'sk-compat-upstream' },
      },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('reasoning');
  const agent = await admin.agent('reasoning', 'thinker');
  client = new OpenAI({ apiKey: agent.api_key, baseURL: gw.baseUrl, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
  await native?.close();
  await chat?.close();
});
beforeEach(() => {
  anScript = () => textReply('no script set');
});

/** Claude's first answer is the recorded thinking + tool call; once the tool's result comes back, a text answer. */
const weatherScript: Script = (body) => {
  const last = body.messages.at(-1);
  const toolResult = Array.isArray(last?.content) && last.content.some((b: any) => b.type === 'tool_result');
  return toolResult ? textReply('It is 18°C and sunny in San Francisco.') : THINKING_MESSAGE;
};

const lastAnthropicBody = () => anthropic.messageRequests.at(-1)!.body;

describe('Responses: reasoning.effort to Claude', () => {
  test('reaches Claude with a thinking budget; the thinking comes back as a reasoning item the SDK parses', async () => {
    anScript = weatherScript;
    const r = await client.responses.create({ model: CLAUDE, input: "What's the weather in San Francisco?", tools: [WEATHER_TOOL], reasoning: { effort: 'high' }, max_output_tokens: 16000 });
    const sent = lastAnthropicBody();
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 12000 });
    expect(sent.max_tokens).toBe(16000);
    expect(sent.thinking.budget_tokens).toBeLessThan(sent.max_tokens);

    expect(r.reasoning).toEqual({ effort: 'high', summary: null });
    expect(r.output.map((i) => i.type)).toEqual(['reasoning', 'message', 'function_call']);
    const reasoning = r.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: THINKING.thinking }]);
    expect(typeof reasoning.encrypted_content).toBe('string');
    // The signature is opaque to the client: it is not written out in the clear.
    expect(JSON.stringify(r)).not.toContain(THINKING.signature);
    expect(r.output_text).toBe("I'll check the current weather in San Francisco.");
    expect(expectOpenResponsesObject(r)).toEqual({});
  });

  test('the next turn gives Claude its signed thinking back before the tool call, with thinking still on', async () => {
    anScript = weatherScript;
    const first = await client.responses.create({ model: CLAUDE, input: "What's the weather in San Francisco?", tools: [WEATHER_TOOL], reasoning: { effort: 'medium' } });
    const call = first.output.find((i): i is OpenAI.Responses.ResponseFunctionToolCall => i.type === 'function_call')!;
    const second = await client.responses.create({
      model: CLAUDE,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"celsius": 18}' }],
      tools: [WEATHER_TOOL],
      reasoning: { effort: 'medium' },
    });
    expect(second.output_text).toBe('It is 18°C and sunny in San Francisco.');
    const sent = lastAnthropicBody();
    // medium asks for 8192 tokens, within three quarters of max_tokens.
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: Math.min(8192, Math.floor((sent.max_tokens * 3) / 4)) });
    const assistant = sent.messages.find((m: any) => m.role === 'assistant');
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: THINKING.thinking, signature: THINKING.signature });
    expect(assistant.content.map((b: any) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(expectOpenResponsesObject(second)).toEqual({});
  });

  test('streamed: thinking deltas become reasoning summary events; the final response holds the reasoning item', async () => {
    anScript = () => ({ sse: THINKING_SSE });
    const stream = client.responses.stream({ model: CLAUDE, input: 'What is 27 * 453?', reasoning: { effort: 'low' } });
    const events: any[] = [];
    stream.on('event', (e) => events.push(e));
    const final = await stream.finalResponse();
    expect(lastAnthropicBody().thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const deltas = events.filter((e) => e.type === 'response.reasoning_summary_text.delta').map((e) => e.delta);
    expect(deltas.length).toBe(4);
    expect(deltas.join('')).toBe(STREAMED_THINKING);
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['response.reasoning_summary_part.added', 'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done']),
    );
    const reasoning = final.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.type).toBe('reasoning');
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: STREAMED_THINKING }]);
    expect(typeof reasoning.encrypted_content).toBe('string');
    expect(final.output_text).toBe('27 * 453 = 12,231.');
    expect(expectOpenResponsesStream(events)).toEqual({});

    // The streamed signature is the one given back on the next turn.
    anScript = () => textReply('Yes.');
    await client.responses.create({ model: CLAUDE, previous_response_id: final.id, input: 'Sure?', reasoning: { effort: 'low' } });
    const assistant = lastAnthropicBody().messages.find((m: any) => m.role === 'assistant');
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: STREAMED_THINKING, signature: STREAMED_SIGNATURE });
  });

  test('Claude’s thinking goes to no other family: an OpenAI or chat target continuing the conversation never receives it', async () => {
    anScript = weatherScript;
    const first = await client.responses.create({ model: CLAUDE, input: "What's the weather in San Francisco?", tools: [WEATHER_TOOL], reasoning: { effort: 'high' } });
    const call = first.output.find((i): i is OpenAI.Responses.ResponseFunctionToolCall => i.type === 'function_call')!;
    const next = { previous_response_id: first.id, input: [{ type: 'function_call_output' as const, call_id: call.call_id, output: '18C' }], tools: [WEATHER_TOOL] };

    const openai = await client.responses.create({ model: 'openai/gpt-4.1', ...next });
    expect(openai.output_text).toBe('Answered by OpenAI.');
    const toOpenAI = native.responseRequests.at(-1)!;
    expect(toOpenAI.body.input.some((i: any) => i.type === 'reasoning')).toBe(false);
    expect(toOpenAI.raw).not.toContain(THINKING.signature);
    expect(toOpenAI.body.input.map((i: any) => i.type)).toEqual(['message', 'message', 'function_call', 'function_call_output']);

    const compat = await client.responses.create({ model: 'compat/some-model', ...next });
    expect(compat.output_text).toBe('Answered by a chat model.');
    const toChat = chat.chatRequests.at(-1)!;
    expect(toChat.raw).not.toContain(THINKING.signature);
    expect(toChat.body.messages.some((m: any) => 'thinking_blocks' in m)).toBe(false);
  });
});

describe('Chat Completions: reasoning_effort to Claude', () => {
  test('reasoning_content in the message and in stream deltas', async () => {
    anScript = () => THINKING_MESSAGE;
    const c = await client.chat.completions.create({
      model: CLAUDE,
      messages: [{ role: 'user', content: "What's the weather in San Francisco?" }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER_TOOL.parameters } }],
      reasoning_effort: 'medium',
      max_completion_tokens: 20000,
    });
    expect(lastAnthropicBody().thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    const message = c.choices[0].message as typeof c.choices[0]['message'] & { reasoning_content?: string; thinking_blocks?: unknown };
    expect(message.reasoning_content).toBe(THINKING.thinking);
    expect(message.thinking_blocks).toEqual([{ type: 'thinking', thinking: THINKING.thinking, signature: THINKING.signature }]);

    anScript = () => ({ sse: THINKING_SSE });
    const stream = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'What is 27 * 453?' }], reasoning_effort: 'high', stream: true });
    let reasoning = '';
    let text = '';
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { reasoning_content?: string; content?: string | null } | undefined;
      reasoning += delta?.reasoning_content ?? '';
      text += delta?.content ?? '';
    }
    expect(reasoning).toBe(STREAMED_THINKING);
    expect(text).toBe('27 * 453 = 12,231.');
  });

  test('a chat client giving the message back (with thinking_blocks) gives Claude its thinking; another family never gets it', async () => {
    anScript = weatherScript;
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: WEATHER_TOOL.parameters } }];
    const question = { role: 'user' as const, content: "What's the weather in San Francisco?" };
    const first = await client.chat.completions.create({ model: CLAUDE, messages: [question], tools, reasoning_effort: 'low', max_completion_tokens: 16000 });
    const message = first.choices[0].message;
    const call = message.tool_calls![0];
    // As agents do: the assistant message as it came, then the tool's result.
    const conversation = [question, message, { role: 'tool' as const, tool_call_id: call.id, content: '18C' }] as OpenAI.Chat.ChatCompletionMessageParam[];
    const second = await client.chat.completions.create({ model: CLAUDE, messages: conversation, tools, reasoning_effort: 'low', max_completion_tokens: 16000 });
    expect(second.choices[0].message.content).toBe('It is 18°C and sunny in San Francisco.');
    const sent = lastAnthropicBody();
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(sent.messages[1].content[0]).toEqual({ type: 'thinking', thinking: THINKING.thinking, signature: THINKING.signature });

    await client.chat.completions.create({ model: 'compat/some-model', messages: conversation, tools });
    const toChat = chat.chatRequests.at(-1)!;
    expect(toChat.raw).not.toContain(THINKING.signature);
    expect(toChat.body.messages[1]).not.toHaveProperty('thinking_blocks');
    expect(toChat.body.messages[1].tool_calls[0].id).toBe(call.id);
  });
});
