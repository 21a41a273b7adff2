// The official `openai` SDK's `client.responses` against agentgw's /v1/responses: native to a (scripted) OpenAI Responses
// upstream and translated to a (scripted) Anthropic Messages upstream; streams through the SDK's event helpers; the
// stored-response routes; previous_response_id across a fallback to another provider family; tool round trips; who may
// read a stored response; traces and spend.
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { toolResults } from '../../../test-support/claude-code.js';
import { type ScriptedAnthropic, type Script, startScriptedAnthropic, textReply, toolUseReply } from '../../../test-support/scripted-anthropic.js';
import {
  type ResponsesScript,
  type ScriptedResponses,
  errorResponse,
  functionCallResponse,
  inputItems,
  lastUserText,
  responseEvents as responseEventsFor,
  startScriptedResponses,
  textResponse,
} from '../../../test-support/scripted-responses.js';
import { schemaCheckingFetch } from './__fixtures__/open-responses-schema.js';

let gw: TestGateway;
let oa: ScriptedResponses;
let an: ScriptedAnthropic;
let admin: ReturnType<typeof adminClient>;
let agent: { id: string; api_key: string };
let other: { id: string; api_key: string };

// Each test sets the scripts it needs.
let oaScript: ResponsesScript = () => errorResponse(500, 'no script set');
let anScript: Script = () => textReply('no script set');

const AGENTGW_ID = /^resp_[0-9a-f]{48}$/;
const OPENAI_SECRET = 'sk-openai-upstream-secret';
const ANTHROPIC_SECRET = 'sk-ant-upstream-secret';

beforeAll(async () => {
  oa = await startScriptedResponses((b, i, h) => oaScript(b, i, h), { chunkSize: 5 });
  an = await startScriptedAnthropic((b, i, h) => anScript(b, i, h), { chunkSize: 5 });
  gw = await startTestGateway({
    config: {
      providers: {
        openai: { type: 'openai', base_url: oa.url, api_key: OPENAI_SECRET },
        anthropic: { type: 'anthropic', base_url: an.url, api_key: ANTHROPIC_SECRET },
        mock: { type: 'mock' },
      },
      models: { smart: ['openai/gpt-x', 'anthropic/claude-y'] },
      prices: {
        'openai/gpt-x': { input: 2, output: 8, cached_input: 0.5, max_output_tokens: 4096 },
        'anthropic/claude-y': { input: 3, output: 15, max_output_tokens: 4096 },
      },
    },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  agent = await admin.agent('acme', 'sdk-responses');
  other = await admin.agent('acme', 'sdk-responses-other');
});
afterAll(async () => {
  await gw?.close();
  await oa?.close();
  await an?.close();
});
beforeEach(() => {
  // Each test scripts its own upstream failures: none starts with a target cooling down after an earlier test's 503.
  gw.runtime.dataPlane.router.health.reset();
  oaScript = () => errorResponse(500, 'no script set');
  anScript = () => textReply('no script set');
});

// Every response object and stream event agentgw answers the SDK is validated against the Open Responses schema.
const schema = schemaCheckingFetch();
afterEach(async () => {
  expect(await schema.settled()).toEqual([]);
});
afterAll(() => {
  // The check ran: answers were read and validated.
  expect(schema.checked()).toBeGreaterThan(0);
});

const client = (key = agent.api_key, headers?: Record<string, string>) =>
  new OpenAI({ apiKey: key, baseURL: gw.baseUrl, maxRetries: 0, fetch: schema.fetch, ...(headers ? { defaultHeaders: headers } : {}) });

function uniqueTrace(name: string): string {
  return `${name}-${Math.random().toString(36).slice(2, 10)}`;
}

async function trace(traceId: string): Promise<any> {
  await gw.runtime.dataPlane.usage.flush();
  return admin.call('GET', `/traces/${encodeURIComponent(traceId)}`);
}

/** The text of an Anthropic request's messages (all blocks), for "did it see X" checks. */
function anthropicText(body: any): string {
  return JSON.stringify(body?.messages ?? []);
}

/** Every text an OpenAI Responses request's input carries. */
function responsesInputText(body: any): string {
  return JSON.stringify(inputItems(body));
}

describe('openai SDK responses.create', () => {
  test('native: output_text, usage with cached and reasoning tokens, agentgw\'s own id, upstream auth and model', async () => {
    oaScript = () => ({
      output: [
        { type: 'reasoning', summary: ['Thinking about greetings.'] },
        { type: 'message', text: 'Hello from the OpenAI upstream' },
      ],
      usage: { input_tokens: 1200, input_tokens_details: { cached_tokens: 1000 }, output_tokens: 300, output_tokens_details: { reasoning_tokens: 200 } },
    });
    const traceId = uniqueTrace('native-create');
    const { data, response } = await client(agent.api_key, { 'x-agent-trace-id': traceId })
      .responses.create({ model: 'openai/gpt-4.1', input: 'hi there', instructions: 'be brief' })
      .withResponse();
    expect(data.object).toBe('response');
    expect(data.output_text).toBe('Hello from the OpenAI upstream');
    expect(data.usage).toMatchObject({
      input_tokens: 1200,
      input_tokens_details: { cached_tokens: 1000 },
      output_tokens: 300,
      output_tokens_details: { reasoning_tokens: 200 },
    });
    expect(data.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    // agentgw's id, not the upstream's.
    expect(data.id).toMatch(AGENTGW_ID);
    const upstreamIds = [...oa.stored.keys()];
    expect(upstreamIds).not.toContain(data.id);
    expect(upstreamIds.at(-1)).toMatch(/^resp_scripted/);
    expect(response.headers.get('x-agent-trace-id')).toBe(traceId);
    expect(response.headers.get('x-request-id')).toBeTruthy();

    const sent = oa.responseRequests.at(-1)!;
    expect(sent.path).toBe('/v1/responses');
    expect(sent.headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
    expect(sent.body.model).toBe('gpt-4.1');
    expect(sent.body.instructions).toBe('be brief');
    expect(sent.body.previous_response_id).toBeUndefined();

    const t = await trace(traceId);
    expect(t.requests).toHaveLength(1);
    expect(t.requests[0]).toMatchObject({
      endpoint: 'responses',
      provider: 'openai',
      model: 'openai/gpt-4.1',
      http_status: 200,
      stream: false,
      prompt_tokens: 1200,
      completion_tokens: 300,
      cached_tokens: 1000,
      reasoning_tokens: 200,
      response_id: data.id,
    });
  });

  test('translated: Anthropic answers, the client gets a Responses object with agentgw\'s id and the usage', async () => {
    anScript = () => ({
      content: [{ type: 'text', text: 'Hello from the Anthropic upstream' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 20, output_tokens: 9, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 },
    });
    const before = an.messageRequests.length;
    const r = await client().responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'hi there', instructions: 'be brief', max_output_tokens: 500 });
    expect(r.object).toBe('response');
    expect(r.status).toBe('completed');
    expect(r.id).toMatch(AGENTGW_ID);
    expect(r.model).toBe('anthropic/claude-sonnet-4-5');
    expect(r.output_text).toBe('Hello from the Anthropic upstream');
    expect(r.usage).toMatchObject({ input_tokens: 120, input_tokens_details: { cached_tokens: 100 }, output_tokens: 9 });
    expect(an.messageRequests.length).toBe(before + 1);
    const sent = an.messageRequests.at(-1)!;
    expect(sent.headers['x-api-key']).toBe(ANTHROPIC_SECRET);
    expect(sent.body.model).toBe('claude-sonnet-4-5');
    expect(sent.body.max_tokens).toBe(500);
    expect(JSON.stringify(sent.body.system)).toContain('be brief');
    expect(sent.body.messages).toEqual([{ role: 'user', content: expect.anything() }]);
    expect(anthropicText(sent.body)).toContain('hi there');
  });
});

describe('openai SDK responses.stream', () => {
  test('native: output_text deltas through .on(), finalResponse() with agentgw\'s id, stored under it', async () => {
    oaScript = () => textResponse('Streaming natively, five characters a delta.', { input_tokens: 50, input_tokens_details: { cached_tokens: 10 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 4 } });
    const traceId = uniqueTrace('native-stream');
    const deltas: string[] = [];
    const types: string[] = [];
    const stream = client(agent.api_key, { 'x-agent-trace-id': traceId }).responses.stream({ model: 'openai/gpt-4.1', input: 'stream please' });
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    stream.on('event', (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe('Streaming natively, five characters a delta.');
    expect(final.output_text).toBe('Streaming natively, five characters a delta.');
    expect(final.id).toMatch(AGENTGW_ID);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(final.usage).toMatchObject({ input_tokens: 50, input_tokens_details: { cached_tokens: 10 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 4 } });
    expect(oa.responseRequests.at(-1)!.body.stream).toBe(true);

    const stored = await client().responses.retrieve(final.id);
    expect(stored.id).toBe(final.id);
    expect(stored.output_text).toBe(final.output_text);

    const t = await trace(traceId);
    expect(t.requests[0]).toMatchObject({ endpoint: 'responses', stream: true, http_status: 200, provider: 'openai', response_id: final.id, prompt_tokens: 50, completion_tokens: 12, cached_tokens: 10, reasoning_tokens: 4 });
  });

  test('translated: Anthropic\'s stream re-encoded as Responses events, deltas through .on(), finalResponse()', async () => {
    anScript = () => textReply('Streaming from Anthropic in small pieces.', { input_tokens: 30, output_tokens: 11 });
    const deltas: string[] = [];
    const types: string[] = [];
    const stream = client().responses.stream({ model: 'anthropic/claude-sonnet-4-5', input: 'stream please', max_output_tokens: 300 });
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    stream.on('event', (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe('Streaming from Anthropic in small pieces.');
    expect(final.output_text).toBe('Streaming from Anthropic in small pieces.');
    expect(final.id).toMatch(AGENTGW_ID);
    expect(final.status).toBe('completed');
    expect(final.usage).toMatchObject({ input_tokens: 30, output_tokens: 11 });
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_item.added');
    expect(types).toContain('response.output_text.done');
    expect(types.at(-1)).toBe('response.completed');
    expect(an.messageRequests.at(-1)!.body.stream).toBe(true);
    expect((await client().responses.retrieve(final.id)).output_text).toBe(final.output_text);
  });

  test('translated: a function call streamed as function_call_arguments deltas', async () => {
    anScript = () => toolUseReply('get_weather', { city: 'Paris', unit: 'celsius' }, 'toolu_01StreamedCall');
    const argDeltas: string[] = [];
    let done: { name: string; arguments: string } | undefined;
    const stream = client().responses.stream({
      model: 'anthropic/claude-sonnet-4-5',
      input: 'What is the weather in Paris?',
      tools: [{ type: 'function', name: 'get_weather', description: 'Weather for a city', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] } }],
    });
    stream.on('response.function_call_arguments.delta', (e) => argDeltas.push(e.delta));
    stream.on('response.function_call_arguments.done', (e) => {
      done = { name: (e as { name?: string }).name ?? '', arguments: e.arguments };
    });
    const final = await stream.finalResponse();
    expect(argDeltas.length).toBeGreaterThan(1);
    expect(JSON.parse(argDeltas.join(''))).toEqual({ city: 'Paris', unit: 'celsius' });
    expect(done && JSON.parse(done.arguments)).toEqual({ city: 'Paris', unit: 'celsius' });
    const call = final.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', call_id: 'toolu_01StreamedCall' });
    expect(JSON.parse((call as OpenAI.Responses.ResponseFunctionToolCall).arguments)).toEqual({ city: 'Paris', unit: 'celsius' });
    const sent = an.messageRequests.at(-1)!.body;
    expect(sent.tools).toEqual([expect.objectContaining({ name: 'get_weather', input_schema: expect.objectContaining({ type: 'object' }) })]);
  });
});

describe('stored responses: retrieve, inputItems.list, delete', () => {
  test('retrieve and inputItems.list serve the stored response; delete removes it (then 404 response_not_found)', async () => {
    oaScript = () => textResponse('First answer');
    const c = client();
    const made = await c.responses.create({ model: 'openai/gpt-4.1', input: [{ role: 'user', content: 'first question' }] });
    const got = await c.responses.retrieve(made.id);
    expect(got.id).toBe(made.id);
    expect(got.output_text).toBe('First answer');
    expect(got.object).toBe('response');

    const items = await c.responses.inputItems.list(made.id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({ type: 'message', role: 'user' });
    expect(JSON.stringify(items.data[0])).toContain('first question');
    expect(typeof items.data[0]!.id).toBe('string');

    await c.responses.delete(made.id);
    const e1 = await c.responses.retrieve(made.id).catch((err: unknown) => err);
    expect(e1).toBeInstanceOf(OpenAI.NotFoundError);
    expect((e1 as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('response_not_found');
    const e2 = await c.responses.inputItems.list(made.id).catch((err: unknown) => err);
    expect(e2).toBeInstanceOf(OpenAI.NotFoundError);
    const e3 = await c.responses.delete(made.id).catch((err: unknown) => err);
    expect(e3).toBeInstanceOf(OpenAI.NotFoundError);
    const e4 = await c.responses.create({ model: 'openai/gpt-4.1', input: 'go on', previous_response_id: made.id }).catch((err: unknown) => err);
    expect(e4).toBeInstanceOf(OpenAI.BadRequestError);
    expect((e4 as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('previous_response_id');
    // The upstream was never asked: agentgw serves its own stored responses.
    expect(oa.requests.filter((r) => r.method !== 'POST')).toEqual([]);
  });

  test('store: false is answered but not retrievable, and cannot be continued', async () => {
    oaScript = () => textResponse('Not kept');
    anScript = () => textReply('Not kept either');
    const c = client();
    for (const model of ['openai/gpt-4.1', 'anthropic/claude-sonnet-4-5']) {
      const made = await c.responses.create({ model, input: 'forget me', store: false, max_output_tokens: 200 });
      expect(made.output_text).toMatch(/^Not kept/);
      expect(made.id).toMatch(AGENTGW_ID);
      const e = await c.responses.retrieve(made.id).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(OpenAI.NotFoundError);
      expect((e as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('response_not_found');
      const cont = await c.responses.create({ model, input: 'and?', previous_response_id: made.id }).catch((err: unknown) => err);
      expect(cont).toBeInstanceOf(OpenAI.BadRequestError);
      expect((cont as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('validation_failed');
      expect((cont as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('previous_response_id');
    }
    // Native: the store flag goes to the upstream as the client sent it.
    expect(oa.responseRequests.at(-1)!.body.store).toBe(false);
  });

  test('another agent\'s key: 404 response_not_found on retrieve, input_items and delete; 400 validation_failed when continuing', async () => {
    oaScript = () => textResponse('Mine only');
    const made = await client().responses.create({ model: 'openai/gpt-4.1', input: 'private question' });
    const stranger = client(other.api_key);
    const before = oa.responseRequests.length;
    for (const attempt of [() => stranger.responses.retrieve(made.id), () => stranger.responses.inputItems.list(made.id), () => stranger.responses.delete(made.id)]) {
      const e = await attempt().catch((err: unknown) => err);
      expect(e).toBeInstanceOf(OpenAI.NotFoundError);
      expect((e as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('response_not_found');
      expect((e as InstanceType<typeof OpenAI.NotFoundError>).type).toBe('not_found');
    }
    const cont = await stranger.responses.create({ model: 'openai/gpt-4.1', input: 'go on', previous_response_id: made.id }).catch((err: unknown) => err);
    expect(cont).toBeInstanceOf(OpenAI.BadRequestError);
    expect((cont as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('validation_failed');
    expect((cont as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('previous_response_id');
    expect(oa.responseRequests.length).toBe(before);
    // The owner still has it (the stranger's delete did nothing).
    expect((await client().responses.retrieve(made.id)).output_text).toBe('Mine only');
  });
});

describe('previous_response_id across providers', () => {
  test('3 turns on an alias; turn 2 falls back from OpenAI (503) to Anthropic; each upstream gets the whole conversation', async () => {
    oaScript = (body) => {
      const asked = lastUserText(body);
      if (asked.includes('TURN-2')) return errorResponse(503, 'The engine is currently overloaded, please try again later.', null);
      if (asked.includes('TURN-1')) return textResponse('Answer one: the colour is teal.');
      return textResponse('Answer three: teal and mango.');
    };
    anScript = () => textReply('Answer two: the fruit is mango.');
    const traceId = uniqueTrace('conversation');
    const c = client(agent.api_key, { 'x-agent-trace-id': traceId });
    const oaBefore = oa.responseRequests.length;
    const anBefore = an.messageRequests.length;

    const r1 = await c.responses.create({ model: 'smart', input: 'TURN-1: name a colour', instructions: 'You are terse.', max_output_tokens: 400 });
    expect(r1.output_text).toBe('Answer one: the colour is teal.');
    const r2 = await c.responses.create({ model: 'smart', input: 'TURN-2: name a fruit', previous_response_id: r1.id, instructions: 'You are terse.', max_output_tokens: 400 });
    expect(r2.output_text).toBe('Answer two: the fruit is mango.');
    expect(r2.previous_response_id).toBe(r1.id);
    // OpenAI's 503 cooled it down for the alias; once the cooldown is over, turn 3 goes back to it.
    gw.runtime.dataPlane.router.health.reset();
    const r3 = await c.responses.create({ model: 'smart', input: 'TURN-3: both, please', previous_response_id: r2.id, instructions: 'You are terse.', max_output_tokens: 400 });
    expect(r3.output_text).toBe('Answer three: teal and mango.');
    expect(r3.previous_response_id).toBe(r2.id);
    for (const r of [r1, r2, r3]) expect(r.id).toMatch(AGENTGW_ID);
    expect(new Set([r1.id, r2.id, r3.id]).size).toBe(3);

    const oaSent = oa.responseRequests.slice(oaBefore);
    expect(oaSent).toHaveLength(3); // turn 1, turn 2 (503), turn 3
    for (const s of oaSent) {
      expect(s.body.previous_response_id).toBeUndefined();
      expect(s.body.model).toBe('gpt-x');
    }
    // Turn 3 (back on OpenAI) carries the whole conversation: both earlier questions and both earlier answers.
    const turn3 = responsesInputText(oaSent[2]!.body);
    for (const text of ['TURN-1: name a colour', 'Answer one: the colour is teal.', 'TURN-2: name a fruit', 'Answer two: the fruit is mango.', 'TURN-3: both, please']) {
      expect(turn3).toContain(text);
    }
    const order = ['TURN-1', 'Answer one', 'TURN-2', 'Answer two', 'TURN-3'].map((s) => turn3.indexOf(s));
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(oaSent[2]!.body.instructions).toBe('You are terse.');

    // Turn 2 (Anthropic) received turn 1, question and answer, as alternating user / assistant messages.
    const anSent = an.messageRequests.slice(anBefore);
    expect(anSent).toHaveLength(1);
    expect(anSent[0]!.body.model).toBe('claude-y');
    expect(anSent[0]!.body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
    const turn2 = anthropicText(anSent[0]!.body);
    for (const text of ['TURN-1: name a colour', 'Answer one: the colour is teal.', 'TURN-2: name a fruit']) expect(turn2).toContain(text);

    // input_items of turn 3: the whole conversation.
    const items = await c.responses.inputItems.list(r3.id, { order: 'asc' });
    const listed = JSON.stringify(items.data);
    for (const text of ['TURN-1', 'Answer one', 'TURN-2', 'Answer two', 'TURN-3']) expect(listed).toContain(text);

    // The admin finds every response id in the trace.
    const t = await trace(traceId);
    const ok = t.requests.filter((s: any) => s.http_status === 200);
    expect(ok.map((s: any) => [s.endpoint, s.provider, s.response_id])).toEqual([
      ['responses', 'openai', r1.id],
      ['responses', 'anthropic', r2.id],
      ['responses', 'openai', r3.id],
    ]);
  });
});

describe('fallback while streaming', () => {
  test('a stream on the alias falls back from OpenAI (503) to Anthropic and continues the stored conversation', async () => {
    oaScript = (body) => (lastUserText(body).includes('STREAM-2') ? errorResponse(503, 'overloaded') : textResponse('Streamed one.'));
    anScript = () => textReply('Streamed two, from Anthropic.');
    const c = client();
    const r1 = await c.responses.stream({ model: 'smart', input: 'STREAM-1', max_output_tokens: 300 }).finalResponse();
    expect(r1.output_text).toBe('Streamed one.');
    const deltas: string[] = [];
    const s2 = c.responses.stream({ model: 'smart', input: 'STREAM-2', previous_response_id: r1.id, max_output_tokens: 300 });
    s2.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const r2 = await s2.finalResponse();
    expect(r2.output_text).toBe('Streamed two, from Anthropic.');
    expect(deltas.join('')).toBe('Streamed two, from Anthropic.');
    expect(r2.id).toMatch(AGENTGW_ID);
    const sent = an.messageRequests.at(-1)!.body;
    expect(sent.stream).toBe(true);
    expect(anthropicText(sent)).toContain('STREAM-1');
    expect(anthropicText(sent)).toContain('Streamed one.');
  });
});

describe('tools', () => {
  test('translated: function tool -> function_call -> function_call_output with previous_response_id; Anthropic gets tool_use / tool_result pairs', async () => {
    anScript = (body) => {
      const results = toolResults(body);
      if (results.length > 0) return textReply(`It is ${String(typeof results[0]!.content === 'string' ? results[0]!.content : JSON.stringify(results[0]!.content))} in Paris.`);
      return toolUseReply('get_weather', { city: 'Paris' }, 'toolu_01RoundTrip');
    };
    const c = client();
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'get_weather', description: 'Weather for a city', strict: true, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
    ];
    const before = an.messageRequests.length;
    const r1 = await c.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Weather in Paris?', tools, max_output_tokens: 500 });
    const call = r1.output.find((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call');
    expect(call).toBeDefined();
    expect(call!.name).toBe('get_weather');
    expect(call!.call_id).toBe('toolu_01RoundTrip');
    expect(JSON.parse(call!.arguments)).toEqual({ city: 'Paris' });

    const r2 = await c.responses.create({
      model: 'anthropic/claude-sonnet-4-5',
      previous_response_id: r1.id,
      input: [{ type: 'function_call_output', call_id: call!.call_id, output: 'sunny, 21C' }],
      tools,
      max_output_tokens: 500,
    });
    expect(r2.output_text).toBe('It is sunny, 21C in Paris.');

    const sent = an.messageRequests.slice(before);
    expect(sent).toHaveLength(2);
    const msgs = sent[1]!.body.messages as any[];
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    const toolUse = (msgs[1].content as any[]).find((b) => b.type === 'tool_use');
    expect(toolUse).toMatchObject({ type: 'tool_use', id: 'toolu_01RoundTrip', name: 'get_weather', input: { city: 'Paris' } });
    const toolResult = (msgs[2].content as any[]).find((b) => b.type === 'tool_result');
    expect(toolResult).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01RoundTrip' });
    expect(JSON.stringify(toolResult.content)).toContain('sunny, 21C');
  });

  test('native: the function_call_output continues the stored conversation on the OpenAI upstream', async () => {
    oaScript = (body) => {
      const outputs = inputItems(body).filter((i: any) => i.type === 'function_call_output');
      return outputs.length > 0 ? textResponse(`Native tool said ${String(outputs[0].output)}`) : functionCallResponse('get_weather', { city: 'Oslo' }, 'call_native_1');
    };
    const c = client();
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
    const r1 = await c.responses.create({ model: 'openai/gpt-4.1', input: 'Weather in Oslo?', tools });
    const call = r1.output.find((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')!;
    expect(call.call_id).toBe('call_native_1');
    const r2 = await c.responses.create({ model: 'openai/gpt-4.1', previous_response_id: r1.id, input: [{ type: 'function_call_output', call_id: 'call_native_1', output: 'snow' }], tools });
    expect(r2.output_text).toBe('Native tool said snow');
    const sent = oa.responseRequests.at(-1)!.body;
    expect(sent.previous_response_id).toBeUndefined();
    expect(inputItems(sent).map((i: any) => i.type ?? 'message')).toEqual(['message', 'function_call', 'function_call_output']);
    expect(inputItems(sent)[1]).toMatchObject({ type: 'function_call', call_id: 'call_native_1', name: 'get_weather' });
  });

  test('translated: web_search offered to a target without web search is dropped and named in x-agentgw-dropped-tools', async () => {
    const c = client();
    const { data, response } = await c.responses
      .create({ model: 'mock/echo', input: 'search the web for cats', tools: [{ type: 'web_search' }] })
      .withResponse();
    expect(data.status).toBe('completed');
    expect(data.output_text.length).toBeGreaterThan(0);
    expect(response.headers.get('x-agentgw-dropped-tools')).toBe('web_search');

    const stream = c.responses.stream({ model: 'mock/echo', input: 'search again', tools: [{ type: 'web_search' }] });
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    // The stream's headers name it too.
    const streamed = await c.responses.create({ model: 'mock/echo', input: 'search again', tools: [{ type: 'web_search' }], stream: true }).withResponse();
    expect(streamed.response.headers.get('x-agentgw-dropped-tools')).toBe('web_search');
    for await (const _ of streamed.data) {
      // drain
    }
  });

  test('translated to Anthropic: web_search becomes Anthropic\'s own web search tool beside the function tool; file_search is dropped and named', async () => {
    anScript = () => textReply('Searched with Anthropic.');
    const before = an.messageRequests.length;
    const { data, response } = await client()
      .responses.create({
        model: 'anthropic/claude-sonnet-4-5',
        input: 'search the web for cats',
        max_output_tokens: 300,
        tools: [
          { type: 'web_search' },
          { type: 'file_search', vector_store_ids: ['vs_1'] },
          { type: 'function', name: 'lookup', strict: false, parameters: { type: 'object', properties: {} } },
        ],
      })
      .withResponse();
    // The call succeeds with what the target can run.
    expect(data.status).toBe('completed');
    expect(data.output_text).toBe('Searched with Anthropic.');
    expect(an.messageRequests.length).toBe(before + 1);
    const sentTools = (an.messageRequests.at(-1)!.body.tools ?? []) as any[];
    expect(sentTools.find((t) => t.name === 'lookup')).toMatchObject({ name: 'lookup', input_schema: { type: 'object' } });
    expect(sentTools.find((t) => t.name === 'web_search')).toMatchObject({ type: expect.stringMatching(/^web_search_\d{8}$/), name: 'web_search' });
    expect(sentTools).toHaveLength(2);
    expect(response.headers.get('x-agentgw-dropped-tools')).toBe('file_search');
  });
});

describe('built-in tools a translated target cannot run, required by tool_choice', () => {
  test('400 validation_failed naming the tool; the upstream is not called', async () => {
    const before = an.messageRequests.length;
    const e = await client()
      .responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'find it', max_output_tokens: 100, tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }], tool_choice: { type: 'file_search' } })
      .catch((err: unknown) => err);
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    const err = e as InstanceType<typeof OpenAI.BadRequestError>;
    expect(err.code).toBe('validation_failed');
    expect(err.param).toMatch(/^tool_choice/);
    expect(err.message).toContain('file_search');
    expect(an.messageRequests.length).toBe(before);
  });
});

describe('traces and spend', () => {
  test('an admin finds the response ids in GET /api/traces/{id}; the agent\'s spend moves by the step\'s cost', async () => {
    await admin.policy('responses-budget', { tenant_id: 'acme', daily_budget: 5 });
    const spender = await admin.agent('acme', 'sdk-responses-spender', 'responses-budget');
    oaScript = () => textResponse('Billed answer', { input_tokens: 10_000, input_tokens_details: { cached_tokens: 4_000 }, output_tokens: 2_000, output_tokens_details: { reasoning_tokens: 500 } });
    anScript = () => textReply('Billed Anthropic answer', { input_tokens: 1_000, output_tokens: 1_000 });
    const spendOf = async () => (await admin.call('GET', `/agents/${spender.id}`)).spend.day as number;
    const before = await spendOf();
    const traceId = uniqueTrace('spend');
    const c = client(spender.api_key, { 'x-agent-trace-id': traceId });
    const r1 = await c.responses.create({ model: 'smart', input: 'bill me', max_output_tokens: 2_000 });
    const s = c.responses.stream({ model: 'anthropic/claude-y', input: 'bill me again', previous_response_id: r1.id, max_output_tokens: 2_000 });
    const r2 = await s.finalResponse();

    // gpt-x: 6000 uncached x $2 + 4000 cached x $0.5 + 2000 out x $8 per million; claude-y: 1000 x $3 + 1000 x $15 per million.
    const expected1 = (6_000 * 2 + 4_000 * 0.5 + 2_000 * 8) / 1e6;
    const expected2 = (1_000 * 3 + 1_000 * 15) / 1e6;
    await expect.poll(spendOf, { timeout: 5_000 }).toBeCloseTo(before + expected1 + expected2, 9);

    const t = await trace(traceId);
    expect(t.request_count).toBe(2);
    expect(t.requests.map((q: any) => [q.endpoint, q.provider, q.model, q.stream, q.response_id])).toEqual([
      ['responses', 'openai', 'openai/gpt-x', false, r1.id],
      ['responses', 'anthropic', 'anthropic/claude-y', true, r2.id],
    ]);
    expect(t.requests[0].cost).toBeCloseTo(expected1, 9);
    expect(t.requests[1].cost).toBeCloseTo(expected2, 9);
    expect(t.cost).toBeCloseTo(expected1 + expected2, 9);
    // The trace leads to the stored answers.
    expect((await client(spender.api_key).responses.retrieve(t.requests[1].response_id)).output_text).toBe('Billed Anthropic answer');
  });

  test('a spent budget is a RateLimitError the SDK does not retry; the upstream is not called', async () => {
    await admin.policy('responses-broke', { tenant_id: 'acme', daily_budget: 0 });
    const broke = await admin.agent('acme', 'sdk-responses-broke', 'responses-broke');
    let sent = 0;
    const counting: typeof fetch = (input, init) => {
      sent++;
      return fetch(input, init);
    };
    const sdk = new OpenAI({ apiKey: broke.api_key, baseURL: gw.baseUrl, maxRetries: 2, fetch: counting });
    const before = oa.responseRequests.length;
    const e = await sdk.responses.create({ model: 'openai/gpt-x', input: 'x', max_output_tokens: 100 }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect((e as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('daily_budget_exceeded');
    expect((e as InstanceType<typeof OpenAI.RateLimitError>).type).toBe('budget_exceeded');
    const streamed = await sdk.responses.stream({ model: 'openai/gpt-x', input: 'x', max_output_tokens: 100 }).finalResponse().catch((err: unknown) => err);
    expect(streamed).toBeInstanceOf(OpenAI.RateLimitError);
    expect(sent).toBe(2);
    expect(oa.responseRequests.length).toBe(before);
  });
});

describe('more of the SDK surface', () => {
  test('native stream continuing a response: the events carry agentgw\'s id and the client\'s previous_response_id, never the upstream\'s id', async () => {
    oaScript = (body) => textResponse(lastUserText(body).includes('again') ? 'Second, streamed.' : 'First.');
    const c = client();
    const r1 = await c.responses.create({ model: 'openai/gpt-4.1', input: 'once' });
    const stream = c.responses.stream({ model: 'openai/gpt-4.1', input: 'again', previous_response_id: r1.id });
    const seen: Array<{ type: string; id?: string; previous?: string | null }> = [];
    stream.on('event', (e) => {
      if ('response' in e) seen.push({ type: e.type, id: e.response.id, previous: e.response.previous_response_id });
    });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Second, streamed.');
    expect(final.id).toMatch(AGENTGW_ID);
    expect(seen.map((e) => e.id)).toEqual(seen.map(() => final.id));
    expect(oa.responseRequests.at(-1)!.body.previous_response_id).toBeUndefined();
    // What the stream said is what the non-streamed answer and the stored one say.
    expect(seen.map((e) => [e.type, e.previous])).toEqual(seen.map((e) => [e.type, r1.id]));
    expect(final.previous_response_id).toBe(r1.id);
    expect((await c.responses.retrieve(final.id)).previous_response_id).toBe(r1.id);
  });

  test('translated stream continuing a response: the events carry the client\'s previous_response_id', async () => {
    anScript = (body) => textReply(anthropicText(body).includes('again') ? 'Second, streamed.' : 'First.');
    const c = client();
    const r1 = await c.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'once', max_output_tokens: 200 });
    const stream = c.responses.stream({ model: 'anthropic/claude-sonnet-4-5', input: 'again', previous_response_id: r1.id, max_output_tokens: 200 });
    const seen: Array<{ type: string; id?: string; previous?: string | null }> = [];
    stream.on('event', (e) => {
      if ('response' in e) seen.push({ type: e.type, id: e.response.id, previous: e.response.previous_response_id });
    });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Second, streamed.');
    expect(seen.map((e) => [e.type, e.id, e.previous])).toEqual(seen.map((e) => [e.type, final.id, r1.id]));
    expect((await c.responses.retrieve(final.id)).previous_response_id).toBe(r1.id);
  });

  test('native: built-in tools go to the OpenAI upstream as sent, nothing dropped', async () => {
    oaScript = () => textResponse('Searched natively.');
    const { data, response } = await client()
      .responses.create({ model: 'openai/gpt-4.1', input: 'search the web for cats', tools: [{ type: 'web_search' }] })
      .withResponse();
    expect(data.output_text).toBe('Searched natively.');
    expect(oa.responseRequests.at(-1)!.body.tools).toEqual([{ type: 'web_search' }]);
    expect(response.headers.get('x-agentgw-dropped-tools')).toBeNull();
  });

  test('a stored response stays readable by its agent after a key rotation, and can be continued', async () => {
    const rotating = await admin.agent('acme', 'sdk-responses-rotating');
    oaScript = (body) => textResponse(`You said: ${lastUserText(body)}`);
    const made = await client(rotating.api_key).responses.create({ model: 'openai/gpt-4.1', input: 'before rotation' });
    const rotated = await admin.call('POST', `/agents/${rotating.id}/rotate-key`);
    const c = client(rotated.api_key);
    expect((await c.responses.retrieve(made.id)).output_text).toBe('You said: before rotation');
    const next = await c.responses.create({ model: 'openai/gpt-4.1', input: 'after rotation', previous_response_id: made.id });
    expect(next.output_text).toBe('You said: after rotation');
    expect(responsesInputText(oa.responseRequests.at(-1)!.body)).toContain('before rotation');
  });

  test('inputItems.list pages through the conversation with the SDK\'s auto-pagination, both orders', async () => {
    oaScript = (body) => textResponse(`answer to ${lastUserText(body)}`);
    const c = client();
    let prev: string | undefined;
    for (const q of ['q1', 'q2', 'q3']) prev = (await c.responses.create({ model: 'openai/gpt-4.1', input: q, ...(prev ? { previous_response_id: prev } : {}) })).id;
    // q1, answer to q1, q2, answer to q2, q3
    const textOf = (item: any) => (Array.isArray(item.content) ? item.content.map((p: any) => p.text).join('') : '');
    const desc: string[] = [];
    for await (const item of c.responses.inputItems.list(prev!, { limit: 2 })) desc.push(textOf(item));
    expect(desc).toEqual(['q3', 'answer to q2', 'q2', 'answer to q1', 'q1']);
    const asc: string[] = [];
    for await (const item of c.responses.inputItems.list(prev!, { limit: 2, order: 'asc' })) asc.push(textOf(item));
    expect(asc).toEqual(['q1', 'answer to q1', 'q2', 'answer to q2', 'q3']);
    const first = await c.responses.inputItems.list(prev!, { limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
  });

  test('responses.parse with a zod text format: native and translated', async () => {
    const Weather = z.object({ city: z.string(), celsius: z.number() });
    oaScript = () => textResponse('{"city":"Paris","celsius":21}');
    anScript = () => textReply('{"city":"Rome","celsius":25}');
    const c = client();
    const native = await c.responses.parse({ model: 'openai/gpt-4.1', input: 'weather in Paris as JSON', text: { format: zodTextFormat(Weather, 'weather') } });
    expect(native.output_parsed).toEqual({ city: 'Paris', celsius: 21 });
    expect(oa.responseRequests.at(-1)!.body.text.format).toMatchObject({ type: 'json_schema', name: 'weather', strict: true });
    const translated = await c.responses.parse({ model: 'anthropic/claude-sonnet-4-5', input: 'weather in Rome as JSON', max_output_tokens: 300, text: { format: zodTextFormat(Weather, 'weather') } });
    expect(translated.output_parsed).toEqual({ city: 'Rome', celsius: 25 });
    expect(JSON.stringify(an.messageRequests.at(-1)!.body)).toContain('celsius');
  });

  test('native: an upstream stream that breaks off ends in an error event for the SDK; recorded as an error; nothing is stored', async () => {
    oaScript = (body) => {
      const full = textResponse('This stream will be cut in the middle of its text.');
      // Keep the events up to a few deltas, then stop (no response.completed).
      const events = responseEventsFor(full, body).slice(0, 6);
      return { sse: events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('') };
    };
    const traceId = uniqueTrace('broken-stream');
    const c = client(agent.api_key, { 'x-agent-trace-id': traceId });
    const stream = c.responses.stream({ model: 'openai/gpt-4.1', input: 'cut me off' });
    const types: string[] = [];
    stream.on('event', (e) => types.push(e.type));
    // The error event carries OpenAI's fields and the same as an error object (Open Responses): the SDK rejects with an
    // APIError made from that object.
    const err = await stream.finalResponse().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err).toMatchObject({ type: 'server_error', code: expect.any(String), message: expect.any(String) });
    expect(types).toContain('response.output_text.delta');
    const t = await trace(traceId);
    expect(t.requests).toHaveLength(1);
    expect(t.requests[0]).toMatchObject({ endpoint: 'responses', stream: true, status: 'error', http_status: 502, error_code: 'upstream_bad_response', response_id: expect.any(String) });
    const stored = await c.responses.retrieve(t.requests[0].response_id).catch((e: unknown) => e);
    expect(stored).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test('retrieve accepts the SDK\'s include query', async () => {
    oaScript = () => textResponse('Included.');
    const c = client();
    const made = await c.responses.create({ model: 'openai/gpt-4.1', input: 'include me' });
    const got = await c.responses.retrieve(made.id, { include: ['message.output_text.logprobs'] });
    expect(got.output_text).toBe('Included.');
    const items = await c.responses.inputItems.list(made.id, { include: ['message.input_image.image_url'] });
    expect(items.data).toHaveLength(1);
  });

  test('PII redaction applies to what is stored and to the conversation a later turn sends', async () => {
    await admin.policy('responses-redact', { tenant_id: 'acme', rules: { pii: 'redact', pii_types: ['email'] } });
    const redacted = await admin.agent('acme', 'sdk-responses-redacted', 'responses-redact');
    oaScript = (body) => textResponse(`noted: ${lastUserText(body)}`);
    const c = client(redacted.api_key);
    const r1 = await c.responses.create({ model: 'openai/gpt-4.1', input: 'write to jane.doe@example.org please' });
    expect(responsesInputText(oa.responseRequests.at(-1)!.body)).not.toContain('jane.doe@example.org');
    const listed = JSON.stringify((await c.responses.inputItems.list(r1.id)).data);
    expect(listed).not.toContain('jane.doe@example.org');
    expect(listed).toContain('[REDACTED:EMAIL]');
    await c.responses.create({ model: 'openai/gpt-4.1', input: 'thanks', previous_response_id: r1.id });
    expect(responsesInputText(oa.responseRequests.at(-1)!.body)).not.toContain('jane.doe@example.org');
  });
});
