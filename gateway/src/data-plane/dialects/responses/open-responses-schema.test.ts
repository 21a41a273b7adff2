// The Open Responses compliance checks (the specification's bin/compliance-test.ts: basic, streaming with its event
// order, system prompt, tool calling plain and streamed, image input, multi-turn, and the tool round trip through
// previous_response_id and PDF input of its later versions) run through agentgw's /v1/responses with raw fetch, in three
// set-ups: translated to a chat-completions upstream, translated to an Anthropic upstream, and native to an OpenAI
// Responses upstream. Every response object and every stream event agentgw writes (the JSON body, each SSE event with
// its response snapshots, GET /responses/{id}, the error and response.failed events of a broken stream) is validated
// against the published OpenAPI document (__fixtures__/open-responses-openapi.json).
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply, toolUseReply } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedOpenAI, chatTextReply, chatToolCallReply, lastChatTurnIsToolResult, startScriptedOpenAI } from '../../../test-support/scripted-openai.js';
import { type ScriptedResponses, functionCallResponse, lastInputIsToolOutput, startScriptedResponses, textResponse } from '../../../test-support/scripted-responses.js';
import { checkResponseObject, checkStreamEvents, expectOpenResponsesObject, expectOpenResponsesStream, sseEventData } from './__fixtures__/open-responses-schema.js';
import { wellFormedOutput } from './__fixtures__/responses-stream-checks.js';

// A red heart on white, the compliance runner's image; a one-page PDF.
const IMAGE =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAIAAAD8GO2jAAABmklEQVR42tyWAaTyUBzFew/eG4AHz+MBSAHKBiJRGFKwIgQQJKLUIioBIhCAiCAAEizAQIAECaASqFFJq84nudjnaqvuPnxzgP9xfrq5938csPn7PwHTKSoViCIEAYEAMhmoKsU2mUCWEQqB5xEMIp/HaGQG2G6RSuH9HQ7H34rFrtPbdz4jl6PbwmEsl3QA1mt4vcRKk8dz9eg6IpF7tt9fzGY0gCgafFRFo5Blc5vLhf3eCOj1yNhM5GRMVK0aATxPZoz09YXjkQDmczJgquGQAPp9WwCNBgG027YACgUC6HRsAZRKBDAY2AJoNv/ZnwzA6WScznG3p4UAymXGAEkyXrTFAh8fLAGqagQAyGaZpYsi7bHTNPz8MEj//LxuFPo+UBS8vb0KaLXubrRa7aX0RMLCykwmn0z3+XA4WACcTpCkh9MFAZpmuVXo+mO/w+/HZvNgbblcUCxaSo/Hyck80Yu6XXDcvfVZr79cvMZjuN2U9O9vKAqjZrfbIZ0mV4TUi9Xqz6jddNy//7+e3n8Fhf/Llo2kxi8AQyGRoDkmAhAAAAAASUVORK5CYII=';
const PDF = `data:application/pdf;base64,${Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n').toString('base64')}`;

const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather for a location',
  parameters: { type: 'object', properties: { location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' } }, required: ['location'] },
};
const SF = { location: 'San Francisco, CA' };

let gw: TestGateway;
let chat: ScriptedOpenAI;
let anthropic: ScriptedAnthropic;
let native: ScriptedResponses;
let key: string;

const SETUPS = [
  { name: 'translated to a chat-completions upstream', model: 'compat/gpt-4o-mini' },
  { name: 'translated to an Anthropic upstream', model: 'anthropic/claude-sonnet-4-5' },
  { name: 'native to an OpenAI Responses upstream', model: 'openai/gpt-4.1' },
] as const;

const offersTools = (body: any) => Array.isArray(body?.tools) && body.tools.length > 0;

beforeAll(async () => {
  chat = await startScriptedOpenAI((body) => (offersTools(body) && !lastChatTurnIsToolResult(body) ? chatToolCallReply('get_weather', SF) : chatTextReply('Hello there, friend.')), { chunkSize: 4 });
  anthropic = await startScriptedAnthropic(
    (body) => {
      const last = body.messages.at(-1);
      const toolResult = Array.isArray(last?.content) && last.content.some((b: any) => b.type === 'tool_result');
      return offersTools(body) && !toolResult ? toolUseReply('get_weather', SF) : textReply('Hello there, friend.');
    },
    { chunkSize: 4 },
  );
  native = await startScriptedResponses((body) => (offersTools(body) && !lastInputIsToolOutput(body) ? functionCallResponse('get_weather', SF) : textResponse('Hello there, friend.')), { chunkSize: 4 });
  gw = await startTestGateway({
    config: {
      providers: {
        compat: { type: 'openai-compatible', base_url: chat.url, api_key: 'sk-compat-upstream' },
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream' },
        openai: { type: 'openai', base_url: native.url, api_key: 'sk-openai-upstream' },
      },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('open-responses');
  key = (await admin.agent('open-responses', 'compliance')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await chat?.close();
  await anthropic?.close();
  await native?.close();
});

async function post(body: Record<string, unknown>): Promise<Response> {
  const r = await fetch(`${gw.baseUrl}/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  return r;
}

/** A non-streamed turn: the body, validated as a ResponseResource. */
async function create(body: Record<string, unknown>): Promise<any> {
  const response = await (await post({ ...body, stream: false })).json();
  expect(expectOpenResponsesObject(response)).toEqual({});
  return response;
}

/** A streamed turn: every event validated; the final response (of response.completed). */
async function stream(body: Record<string, unknown>): Promise<{ events: any[]; final: any }> {
  const events = sseEventData(await (await post({ ...body, stream: true })).text());
  expect(expectOpenResponsesStream(events)).toEqual({});
  // Event order: sequence numbers from 0, created and in_progress first, one item at a time, each done event repeating
  // what its deltas built, the terminal event last.
  wellFormedOutput(events.map((data) => ({ event: data.type, data })));
  const final = events.at(-1)?.response;
  expect(events.at(-1)?.type).toBe('response.completed');
  return { events, final };
}

const userMessage = (content: unknown) => ({ type: 'message', role: 'user', content });

describe.each(SETUPS)('Open Responses compliance, $name', ({ model }) => {
  test('basic-response: a user message answered with a completed response', async () => {
    const r = await create({ model, input: [userMessage('Say hello in exactly 3 words.')] });
    expect(r.status).toBe('completed');
    expect(r.output.length).toBeGreaterThan(0);
  });

  test('streaming-response: SSE events, then response.completed', async () => {
    const { events, final } = await stream({ model, input: [userMessage('Count from 1 to 5.')] });
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['response.created', 'response.in_progress', 'response.output_text.delta', 'response.completed']));
    expect(final.status).toBe('completed');
  });

  test('system-prompt: a system message in input', async () => {
    const r = await create({ model, input: [{ type: 'message', role: 'system', content: 'You are a pirate. Always respond in pirate speak.' }, userMessage('Say hello.')] });
    expect(r.status).toBe('completed');
  });

  test('tool-calling: a function tool, a function_call item, the tool repeated with strict', async () => {
    const r = await create({ model, input: [userMessage("What's the weather like in San Francisco?")], tools: [WEATHER_TOOL] });
    expect(r.output.some((i: any) => i.type === 'function_call')).toBe(true);
    expect(r.tools).toEqual([expect.objectContaining({ ...WEATHER_TOOL, strict: expect.any(Boolean) })]);
  });

  test('tool-calling-streaming: function_call added, arguments delta and done, item done', async () => {
    const { events } = await stream({ model, input: [userMessage("What's the weather like in San Francisco?")], tools: [WEATHER_TOOL] });
    const types = events.map((e) => e.type);
    expect(events.some((e) => e.type === 'response.output_item.added' && e.item?.type === 'function_call')).toBe(true);
    expect(types).toContain('response.function_call_arguments.delta');
    expect(types).toContain('response.function_call_arguments.done');
    expect(events.some((e) => e.type === 'response.output_item.done' && e.item?.type === 'function_call')).toBe(true);
  });

  test('image-input: an image data URL in user content', async () => {
    const r = await create({ model, input: [userMessage([{ type: 'input_text', text: 'What do you see in this image? Answer in one sentence.' }, { type: 'input_image', image_url: IMAGE }])] });
    expect(r.status).toBe('completed');
  });

  test('pdf-input: a PDF as an input_file', async () => {
    const r = await create({ model, input: [userMessage([{ type: 'input_text', text: 'What is in this document?' }, { type: 'input_file', filename: 'empty.pdf', file_data: PDF }])] });
    expect(r.status).toBe('completed');
  });

  test('multi-turn: assistant and user messages as history', async () => {
    const r = await create({
      model,
      input: [userMessage('My name is Alice.'), { type: 'message', role: 'assistant', content: 'Hello Alice! Nice to meet you. How can I help you today?' }, userMessage('What is my name?')],
    });
    expect(r.status).toBe('completed');
  });

  test('tool round trip through previous_response_id, plain and streamed; GET /responses/{id}', async () => {
    const first = await create({ model, input: [userMessage("What's the weather like in San Francisco?")], tools: [WEATHER_TOOL] });
    const call = first.output.find((i: any) => i.type === 'function_call');
    const output = { type: 'function_call_output', call_id: call.call_id, output: JSON.stringify({ celsius: 18 }) };
    const second = await create({ model, previous_response_id: first.id, input: [output], tools: [WEATHER_TOOL] });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output.some((i: any) => i.type === 'message')).toBe(true);
    const { final } = await stream({ model, previous_response_id: first.id, input: [output], tools: [WEATHER_TOOL] });
    expect(final.previous_response_id).toBe(first.id);
    const stored = (await (await fetch(`${gw.baseUrl}/responses/${second.id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    expect(expectOpenResponsesObject(stored)).toEqual({});
    expect(stored.id).toBe(second.id);
  });
});

test('a translated stream that breaks off ends with an error event and response.failed that the schema accepts', async () => {
  // A chat upstream whose stream is cut short: two chunks, then the connection drops.
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Par"},"finish_reason":null}]}\n\n');
    res.write('data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tial"},"finish_reason":null}]}\n\n');
    setTimeout(() => res.destroy(), 20);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const cut = await startTestGateway({ config: { providers: { cut: { type: 'openai-compatible', base_url: `http://127.0.0.1:${port}/v1`, api_key: 'sk-cut' } } } });
  try {
    const admin = adminClient(cut.adminUrl, cut.adminKey);
    await admin.tenant('open-responses-cut');
    const agent = await admin.agent('open-responses-cut', 'compliance');
    const r = await fetch(`${cut.baseUrl}/responses`, { method: 'POST', headers: { authorization: `Bearer ${agent.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'cut/m', input: 'hi', stream: true }) });
    const events = sseEventData(await r.text());
    expect(events.slice(-2).map((e) => e.type)).toEqual(['error', 'response.failed']);
    expect(expectOpenResponsesStream(events)).toEqual({});
    expect(events.at(-2)).toMatchObject({ error: { type: expect.any(String), code: expect.any(String), message: expect.any(String), param: null } });
  } finally {
    await cut.close();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('the validator refuses what the issue found: a response object without the sampling fields, a function tool without strict', async () => {
  const good = (await create({ model: 'compat/gpt-4o-mini', input: 'hi', tools: [WEATHER_TOOL] })) as Record<string, any>;
  for (const field of ['presence_penalty', 'frequency_penalty', 'top_logprobs', 'max_tool_calls']) {
    const { [field]: _, ...without } = good;
    expect(checkResponseObject(without).errors.join('\n')).toContain(field);
  }
  expect(checkResponseObject({ ...good, temperature: null }).errors.length).toBeGreaterThan(0);
  expect(checkResponseObject({ ...good, tools: [WEATHER_TOOL] }).errors.join('\n')).toContain('strict');
  expect(checkStreamEvents([{ type: 'response.created', sequence_number: 0, response: { ...good, top_p: null } }]).errors.length).toBeGreaterThan(0);
  expect(checkStreamEvents([{ type: 'error', sequence_number: 3, code: 'server_error', message: 'x', param: null }]).errors.join('\n')).toContain('error');
});
