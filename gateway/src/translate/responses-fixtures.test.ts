// OpenAI's own Responses examples (data-plane/dialects/responses/__fixtures__): the SDK reads them, agentgw's encoder
// streams the same event sequences, and their output items feed back into a translated request.
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { parseEvents, wellFormedOutput, wire } from '../data-plane/dialects/responses/__fixtures__/responses-stream-checks.js';
import type { OpenAIChatCompletionChunk } from '../providers/openai-format.js';
import { ResponsesStreamEncoder } from './chat-stream-to-responses-events.js';
import type { ResponsesInputItem, ResponsesRequest } from './responses-api.js';
import { responsesToChatRequest } from './responses-to-chat-request.js';

const DIR = new URL('../data-plane/dialects/responses/__fixtures__/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, DIR), 'utf8');
const json = (name: string) => JSON.parse(read(name)) as Record<string, any>;

function client(body: string, contentType: string): OpenAI {
  return new OpenAI({
    apiKey: 'test',
    baseURL: 'http://gateway.invalid/v1',
    fetch: async () => new Response(body, { status: 200, headers: { 'content-type': contentType } }),
  });
}

const sdkFinal = (sse: string) => client(sse, 'text/event-stream').responses.stream({ model: 'gpt-5', input: 'hi' }).finalResponse();

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  const c = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'x', choices: [{ index: 0, delta, finish_reason: finish }] };
  return `data: ${JSON.stringify(c as OpenAIChatCompletionChunk)}\n\n`;
}

/** agentgw's encoder over chat chunks that carry the same pieces as an OpenAI stream. */
function encode(frames: string[]): ReturnType<typeof parseEvents> {
  const encoder = new ResponsesStreamEncoder({ id: 'resp_x', model: 'gpt-5', createdAt: 1, request: {}, now: () => 2 });
  const sse = encoder.frames(frames.join('')) + encoder.finish({ prompt_tokens: 1, completion_tokens: 1, estimated: false });
  return parseEvents(sse);
}

const keysOf = (o: object) => Object.keys(o).sort();

describe('Responses fixtures', () => {
  it('openapi-text-stream.sse: the SDK assembles the answer', async () => {
    const sse = read('openapi-text-stream.sse');
    const final = await sdkFinal(sse);
    expect(final.output_text).toBe('Hi there! How can I assist you today?');
    expect(wire(final)).toEqual(parseEvents(sse).at(-1)!.data.response);
  });

  it('agentgw streams text with the events of the reference example, in its order', () => {
    const official = parseEvents(read('openapi-text-stream.sse'));
    const ours = encode([chunk({ content: 'Hi' }), chunk({ content: ' there! How can I assist you today?' }), chunk({}, 'stop')]);
    // The reference elides its middle deltas: compare with one delta.
    const dedupe = (types: string[]) => types.filter((t, i) => t !== types[i - 1]);
    expect(dedupe(ours.map((e) => e.event))).toEqual(dedupe(official.map((e) => e.event)));
    const item = (events: typeof ours) => events.find((e) => e.event === 'response.output_item.done')!.data.item;
    expect(keysOf(item(ours))).toEqual(keysOf(item(official)));
    expect(keysOf(ours.at(-1)!.data.response)).toEqual(expect.arrayContaining(keysOf(official.at(-1)!.data.response)));
  });

  it('function-call-stream.sse: well formed, the SDK reads it, and agentgw streams the same events', async () => {
    const sse = read('function-call-stream.sse');
    const official = parseEvents(sse);
    const items = wellFormedOutput(official);
    const final = await sdkFinal(sse);
    expect(wire(final)).toEqual(official.at(-1)!.data.response);
    expect(final.output[0]).toMatchObject({ type: 'function_call', name: 'get_current_weather', arguments: '{"location":"Boston, MA","unit":"celsius"}' });

    const deltas = official.filter((e) => e.event === 'response.function_call_arguments.delta').map((e) => e.data.delta as string);
    const ours = encode([
      chunk({ tool_calls: [{ index: 0, id: 'call_unLAR8MvFNptuiZK6K6HCy5k', type: 'function', function: { name: 'get_current_weather', arguments: '' } }] }),
      ...deltas.map((d) => chunk({ tool_calls: [{ index: 0, function: { arguments: d } }] })),
      chunk({}, 'tool_calls'),
    ]);
    expect(ours.map((e) => e.event)).toEqual(official.map((e) => e.event));
    const ourItems = wellFormedOutput(ours);
    expect(keysOf(ourItems[0])).toEqual(keysOf(items[0]));
    expect({ ...ourItems[0], id: items[0].id }).toEqual(items[0]);
  });

  it('reasoning-summary-stream.sse: well formed, the SDK reads it, and agentgw streams reasoning text the same way', async () => {
    const sse = read('reasoning-summary-stream.sse');
    const official = parseEvents(sse);
    const items = wellFormedOutput(official);
    const final = await sdkFinal(sse);
    expect(wire(final)).toEqual(official.at(-1)!.data.response);
    expect(final.output_text).toBe('Hello! How can I assist you today?');

    const summary = official.filter((e) => e.event === 'response.reasoning_summary_text.delta').map((e) => e.data.delta as string);
    const text = official.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta as string);
    const ours = encode([...summary.map((s) => chunk({ reasoning_content: s })), ...text.map((t) => chunk({ content: t })), chunk({}, 'stop')]);
    expect(ours.map((e) => e.event)).toEqual(official.map((e) => e.event));
    const ourItems = wellFormedOutput(ours);
    expect(ourItems.map((i) => ({ ...i, id: '' }))).toEqual(items.map((i) => ({ ...i, id: '' })));
  });

  it('the non-stream examples are read by the SDK', async () => {
    for (const name of ['openapi-function-call-response.json', 'openapi-reasoning-response.json', 'reasoning-encrypted-response.json']) {
      const body = read(name);
      const r = await client(body, 'application/json').responses.create({ model: 'gpt-5', input: 'hi' });
      expect(wire(r)).toEqual(JSON.parse(body));
    }
  });

  it('earlier output items continue on another provider: reasoning left out, calls and outputs paired', () => {
    const fn = json('openapi-function-call-response.json');
    const reasoning = json('reasoning-encrypted-response.json');
    const history: ResponsesInputItem[] = [
      { role: 'user', content: 'How much wood would a woodchuck chuck?' },
      ...(reasoning.output as ResponsesInputItem[]),
      { role: 'user', content: 'What is the weather like in Boston today?' },
      ...(fn.output as ResponsesInputItem[]),
    ];
    const body = {
      model: 'gpt-5.4',
      previous_response_id: fn.id,
      input: [{ type: 'function_call_output', call_id: 'call_unLAR8MvFNptuiZK6K6HCy5k', output: '{"temperature":"3C"}' }],
      tools: fn.tools,
      include: ['reasoning.encrypted_content'],
      store: false,
    } as ResponsesRequest;
    const { request } = responsesToChatRequest(body, { model: 'claude-sonnet-4', maxTokensField: 'max_tokens', reasons: true, history });
    expect(request.messages).toEqual([
      { role: 'user', content: 'How much wood would a woodchuck chuck?' },
      { role: 'assistant', content: 'The classic tongue twister...' },
      { role: 'user', content: 'What is the weather like in Boston today?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_unLAR8MvFNptuiZK6K6HCy5k', type: 'function', function: { name: 'get_current_weather', arguments: '{"location":"Boston, MA","unit":"celsius"}' } }] },
      { role: 'tool', tool_call_id: 'call_unLAR8MvFNptuiZK6K6HCy5k', content: '{"temperature":"3C"}' },
    ]);
    expect(request.tools![0].function).toMatchObject({ name: 'get_current_weather', strict: true });
  });
});
