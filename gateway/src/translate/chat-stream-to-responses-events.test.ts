import fc from 'fast-check';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../contract/errors.js';
import type { OpenAIChatCompletionChunk, OpenAIFinishReason, OpenAIToolCallDelta, OpenAIUsage } from '../providers/openai-format.js';
import type { Usage } from '../providers/spec.js';
import { ResponsesStreamEncoder, type ResponsesStreamOptions } from './chat-stream-to-responses-events.js';
import { expectOpenResponsesStream } from '../data-plane/dialects/responses/__fixtures__/open-responses-schema.js';
import { type Event, parseEvents, wellFormedOutput, wire } from '../data-plane/dialects/responses/__fixtures__/responses-stream-checks.js';
import type { ResponsesEcho } from './responses-api.js';

const USAGE: Usage = { prompt_tokens: 120, completion_tokens: 30, cached_prompt_tokens: 100, reasoning_tokens: 5, estimated: false };
const TOOLS: ResponsesEcho['tools'] = [
  { type: 'function', name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } }, strict: false },
  { type: 'function', name: 'grep', parameters: { type: 'object', properties: {} }, strict: false },
  { type: 'custom', name: 'apply_patch', description: 'Edit files' },
];

function options(request: ResponsesEcho = { tools: TOOLS }): ResponsesStreamOptions {
  return { id: 'resp_1', model: 'gpt-5', createdAt: 1700000000, request, now: () => 1700000009 };
}

type Delta = OpenAIChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: string };

function chunk(delta: Delta, finish: OpenAIFinishReason | null = null): OpenAIChatCompletionChunk {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'claude-x', choices: [{ index: 0, delta, finish_reason: finish }] };
}

function usageChunk(usage: OpenAIUsage): OpenAIChatCompletionChunk {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'claude-x', choices: [], usage };
}

const frame = (c: OpenAIChatCompletionChunk) => `data: ${JSON.stringify(c)}\n\n`;
const text = (t: string) => chunk({ content: t });
const toolStart = (index: number, id: string, name: string, args = ''): OpenAIChatCompletionChunk =>
  chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] });
const toolArgs = (index: number, args: string) => chunk({ tool_calls: [{ index, function: { arguments: args } }] });

function run(chunks: OpenAIChatCompletionChunk[], opts = options(), usage: Usage = USAGE): { events: Event[]; sse: string; encoder: ResponsesStreamEncoder } {
  const encoder = new ResponsesStreamEncoder(opts);
  let sse = '';
  for (const c of chunks) sse += encoder.frames(frame(c));
  sse += encoder.frames('data: [DONE]\n\n');
  sse += encoder.finish(usage);
  const events = parseEvents(sse);
  // Every event the encoder writes, against the Open Responses schema.
  expectOpenResponsesStream(events.map((e) => e.data));
  return { events, sse, encoder };
}

function sdkClient(sse: string): OpenAI {
  return new OpenAI({
    apiKey: 'test',
    baseURL: 'http://gateway.invalid/v1',
    fetch: async () => new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
}

/** The final response the official openai SDK's stream helper assembles from the SSE text. */
async function sdkFinalResponse(sse: string) {
  return sdkClient(sse).responses.stream({ model: 'gpt-5', input: 'hi' }).finalResponse();
}

// What OpenAI's chat API streams for "text, then two tool calls", usage last.
const REALISTIC: OpenAIChatCompletionChunk[] = [
  chunk({ role: 'assistant', content: '', refusal: null }),
  text('Let me '),
  text('check both files.'),
  toolStart(0, 'call_a', 'read'),
  toolArgs(0, '{"pa'),
  toolArgs(0, 'th": "src/a.ts"}'),
  toolStart(1, 'call_b', 'grep'),
  toolArgs(1, '{"pattern": "TODO", '),
  toolArgs(1, '"glob": "*.ts"}'),
  chunk({}, 'tool_calls'),
  usageChunk({ prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, prompt_tokens_details: { cached_tokens: 100 } }),
];

describe('ResponsesStreamEncoder', () => {
  it('turns text then two tool calls into the exact Responses event sequence', () => {
    const { events } = run(REALISTIC);
    const response = (status: string, output: unknown[], usage: unknown, completedAt: number | null) => ({
      id: 'resp_1', object: 'response', created_at: 1700000000, status, completed_at: completedAt, error: null, incomplete_details: null,
      instructions: null, max_output_tokens: null, model: 'gpt-5', output, parallel_tool_calls: true, previous_response_id: null,
      reasoning: { effort: null, summary: null }, store: true, temperature: 1, text: { format: { type: 'text' } }, tool_choice: 'auto',
      // Function tools repeated with every field of the tool object; the defaults in effect for the sampling settings.
      tools: TOOLS!.map((t) => (t.type === 'function' ? { ...t, description: null } : t)), top_p: 1, presence_penalty: 0, frequency_penalty: 0,
      top_logprobs: 0, max_tool_calls: null, truncation: 'disabled', usage, user: null, metadata: {}, background: false, service_tier: 'default',
      prompt_cache_key: null, safety_identifier: null,
    });
    const message = { id: 'msg_1_0', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check both files.', annotations: [] }] };
    const read = { id: 'fc_1_1', type: 'function_call', status: 'completed', arguments: '{"path": "src/a.ts"}', call_id: 'call_a', name: 'read' };
    const grep = { id: 'fc_1_2', type: 'function_call', status: 'completed', arguments: '{"pattern": "TODO", "glob": "*.ts"}', call_id: 'call_b', name: 'grep' };
    const m = { item_id: 'msg_1_0', output_index: 0, content_index: 0 };
    expect(events.map((e) => e.data)).toEqual([
      { type: 'response.created', sequence_number: 0, response: response('in_progress', [], null, null) },
      { type: 'response.in_progress', sequence_number: 1, response: response('in_progress', [], null, null) },
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { id: 'msg_1_0', type: 'message', status: 'in_progress', role: 'assistant', content: [] } },
      { type: 'response.content_part.added', sequence_number: 3, ...m, part: { type: 'output_text', text: '', annotations: [] } },
      { type: 'response.output_text.delta', sequence_number: 4, ...m, delta: 'Let me ', logprobs: [] },
      { type: 'response.output_text.delta', sequence_number: 5, ...m, delta: 'check both files.', logprobs: [] },
      { type: 'response.output_text.done', sequence_number: 6, ...m, text: 'Let me check both files.', logprobs: [] },
      { type: 'response.content_part.done', sequence_number: 7, ...m, part: { type: 'output_text', text: 'Let me check both files.', annotations: [] } },
      { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: message },
      { type: 'response.output_item.added', sequence_number: 9, output_index: 1, item: { ...read, status: 'in_progress', arguments: '' } },
      { type: 'response.function_call_arguments.delta', sequence_number: 10, item_id: 'fc_1_1', output_index: 1, delta: '{"pa' },
      { type: 'response.function_call_arguments.delta', sequence_number: 11, item_id: 'fc_1_1', output_index: 1, delta: 'th": "src/a.ts"}' },
      { type: 'response.function_call_arguments.done', sequence_number: 12, item_id: 'fc_1_1', output_index: 1, name: 'read', arguments: '{"path": "src/a.ts"}' },
      { type: 'response.output_item.done', sequence_number: 13, output_index: 1, item: read },
      { type: 'response.output_item.added', sequence_number: 14, output_index: 2, item: { ...grep, status: 'in_progress', arguments: '' } },
      { type: 'response.function_call_arguments.delta', sequence_number: 15, item_id: 'fc_1_2', output_index: 2, delta: '{"pattern": "TODO", ' },
      { type: 'response.function_call_arguments.delta', sequence_number: 16, item_id: 'fc_1_2', output_index: 2, delta: '"glob": "*.ts"}' },
      { type: 'response.function_call_arguments.done', sequence_number: 17, item_id: 'fc_1_2', output_index: 2, name: 'grep', arguments: '{"pattern": "TODO", "glob": "*.ts"}' },
      { type: 'response.output_item.done', sequence_number: 18, output_index: 2, item: grep },
      {
        type: 'response.completed',
        sequence_number: 19,
        response: response('completed', [message, read, grep], {
          input_tokens: 120, input_tokens_details: { cached_tokens: 100, cache_write_tokens: 0 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 150,
        }, 1700000009),
      },
    ]);
    wellFormedOutput(events);
  });

  it('streams each item live: an item opens as soon as its first delta arrives', () => {
    const encoder = new ResponsesStreamEncoder(options());
    const types = (sse: string) => parseEvents(sse).map((e) => e.event);
    expect(types(encoder.frames(frame(REALISTIC[0])))).toEqual(['response.created', 'response.in_progress']);
    expect(types(encoder.frames(frame(REALISTIC[1])))).toEqual(['response.output_item.added', 'response.content_part.added', 'response.output_text.delta']);
    expect(types(encoder.frames(frame(REALISTIC[2])))).toEqual(['response.output_text.delta']);
    expect(types(encoder.frames(frame(REALISTIC[3])))).toEqual([
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.output_item.added',
    ]);
    expect(types(encoder.frames(frame(REALISTIC[4])))).toEqual(['response.function_call_arguments.delta']);
  });

  it('gives the same answer to the official openai SDK stream helper', async () => {
    const { sse, encoder } = run(REALISTIC);
    const deltas: string[] = [];
    const snapshots: string[] = [];
    const stream = sdkClient(sse).responses.stream({ model: 'gpt-5', input: 'hi' });
    stream.on('response.output_text.delta', (e) => {
      deltas.push(e.delta);
      snapshots.push(e.snapshot);
    });
    const argSnapshots: string[] = [];
    stream.on('response.function_call_arguments.delta', (e) => argSnapshots.push(e.snapshot));
    const final = await stream.finalResponse();
    expect(deltas).toEqual(['Let me ', 'check both files.']);
    expect(snapshots).toEqual(['Let me ', 'Let me check both files.']);
    expect(argSnapshots).toEqual(['{"pa', '{"path": "src/a.ts"}', '{"pattern": "TODO", ', '{"pattern": "TODO", "glob": "*.ts"}']);
    expect(final.output_text).toBe('Let me check both files.');
    expect(wire(final)).toEqual(encoder.response());
    expect(final.output.map((o) => o.type)).toEqual(['message', 'function_call', 'function_call']);
  });

  it('gives the raw SDK stream every event, in order', async () => {
    const { sse } = run(REALISTIC);
    const stream = await sdkClient(sse).responses.create({ model: 'gpt-5', input: 'hi', stream: true });
    const seen: number[] = [];
    for await (const e of stream) seen.push(e.sequence_number);
    expect(seen).toEqual([...Array(20).keys()]);
  });

  it('keeps items sequential when parallel tool calls interleave their argument deltas', () => {
    const { events } = run([
      toolStart(0, 'call_a', 'read'),
      toolStart(1, 'call_b', 'grep'),
      toolArgs(0, '{"path":'),
      toolArgs(1, '{"pattern":"x"}'),
      toolArgs(0, '"a"}'),
      chunk({}, 'tool_calls'),
    ]);
    const items = wellFormedOutput(events);
    expect(items.map((i) => [i.call_id, i.arguments])).toEqual([['call_a', '{"path":"a"}'], ['call_b', '{"pattern":"x"}']]);
  });

  it('holds text that arrives while a tool call is incomplete, and opens it after', () => {
    const { events } = run([toolStart(0, 'call_a', 'read', '{"path"'), text('Also '), text('this.'), toolArgs(0, ':"a"}'), chunk({}, 'stop')]);
    const items = wellFormedOutput(events);
    expect(items.map((i) => i.type)).toEqual(['function_call', 'message']);
    expect(items[1].content[0].text).toBe('Also this.');
  });

  it('says incomplete when the limit cut the answer short, and the SDK reads it', async () => {
    const { events, sse } = run([text('Once upon'), chunk({}, 'length')], options({ max_output_tokens: 3 }));
    const items = wellFormedOutput(events);
    const last = events.at(-1)!.data;
    expect(last.type).toBe('response.incomplete');
    expect(last.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, completed_at: null, max_output_tokens: 3 });
    expect(items[0].status).toBe('incomplete');
    const final = await sdkFinalResponse(sse);
    expect(final.status).toBe('incomplete');
    expect(final.output_text).toBe('Once upon');
  });

  it('streams a custom tool call as one input delta when the call is done', async () => {
    const patch = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch';
    const args = JSON.stringify({ input: patch });
    const { events, sse } = run([toolStart(0, 'call_p', 'apply_patch', args.slice(0, 10)), toolArgs(0, args.slice(10)), chunk({}, 'tool_calls')]);
    const items = wellFormedOutput(events);
    expect(items).toEqual([{ id: 'ctc_1_0', type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: patch }]);
    expect(events.map((e) => e.event)).toContain('response.custom_tool_call_input.done');
    expect(events.map((e) => e.event)).not.toContain('response.function_call_arguments.delta');
    const final = await sdkFinalResponse(sse);
    expect(final.output[0]).toMatchObject({ type: 'custom_tool_call', input: patch });
  });

  it('names namespaced calls by their tool and namespace', () => {
    const request: ResponsesEcho = { tools: [{ type: 'namespace', name: 'gh', description: 'GitHub', tools: [{ type: 'function', name: 'search' }] }] };
    const { events } = run([toolStart(0, 'call_s', 'gh__search', '{}'), chunk({}, 'tool_calls')], options(request));
    expect(wellFormedOutput(events)).toEqual([{ id: 'fc_1_0', type: 'function_call', status: 'completed', arguments: '{}', call_id: 'call_s', name: 'search', namespace: 'gh' }]);
  });

  it('shows streamed reasoning text as a reasoning summary, and the SDK reads it', async () => {
    const { events, sse } = run([chunk({ reasoning_content: 'Thinking ' }), chunk({ reasoning_content: 'hard.' }), text('42'), chunk({}, 'stop')]);
    const items = wellFormedOutput(events);
    expect(items[0]).toEqual({ id: 'rs_1_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking hard.' }] });
    expect(events.filter((e) => e.event === 'response.reasoning_summary_text.delta').map((e) => e.data.delta)).toEqual(['Thinking ', 'hard.']);
    const final = await sdkFinalResponse(sse);
    expect(final.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking hard.' }] });
    expect(final.output_text).toBe('42');
  });

  it('streams a refusal as a refusal part', async () => {
    const { events, sse } = run([chunk({ refusal: 'I cannot ' }), chunk({ refusal: 'help.' }), chunk({}, 'stop')]);
    const items = wellFormedOutput(events);
    expect(items[0].content).toEqual([{ type: 'refusal', refusal: 'I cannot help.' }]);
    const final = await sdkFinalResponse(sse);
    expect(final.output[0]).toMatchObject({ type: 'message', content: [{ type: 'refusal', refusal: 'I cannot help.' }] });
  });

  it('takes an id or name sent after the first delta, and makes a call id when none comes', () => {
    const { events } = run([
      chunk({ tool_calls: [{ index: 0, function: { arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_late', function: { name: 'read', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { name: 'grep', arguments: '{}' } }] }),
    ]);
    const items = wellFormedOutput(events);
    expect(items.map((i) => [i.call_id, i.name])).toEqual([['call_late', 'read'], ['call_1_1', 'grep']]);
  });

  it('emits a valid response when frames() was never called', async () => {
    const encoder = new ResponsesStreamEncoder(options());
    const sse = encoder.finish(USAGE);
    const events = parseEvents(sse);
    expect(wellFormedOutput(events)).toEqual([]);
    expect((await sdkFinalResponse(sse)).status).toBe('completed');
  });

  it('emits nothing after finish', () => {
    const encoder = new ResponsesStreamEncoder(options());
    encoder.finish(USAGE);
    expect(encoder.frames(frame(text('late')))).toBe('');
    expect(encoder.finish(USAGE)).toBe('');
    expect(encoder.error({ code: 'server_error', message: 'x' })).toBe('');
  });

  it('reads several frames in one call and a frame split across calls', () => {
    const encoder = new ResponsesStreamEncoder(options());
    const all = REALISTIC.map(frame).join('');
    const cut = all.indexOf('check');
    const sse = encoder.frames(all.slice(0, cut)) + encoder.frames(all.slice(cut)) + encoder.finish(USAGE);
    expect(wellFormedOutput(parseEvents(sse))).toHaveLength(3);
  });

  it('reads a last frame that lacks its blank line at finish', () => {
    const encoder = new ResponsesStreamEncoder(options());
    const sse = encoder.frames(`data: ${JSON.stringify(text('tail'))}`) + encoder.finish(USAGE);
    expect(wellFormedOutput(parseEvents(sse))[0].content[0].text).toBe('tail');
  });

  it('fails as a bad upstream answer on a frame that is not JSON', () => {
    const encoder = new ResponsesStreamEncoder(options());
    try {
      encoder.frames('data: {nope\n\n');
      throw new Error('expected a failure');
    } catch (e) {
      expect(e).toBeInstanceOf(AgentgwError);
      expect((e as AgentgwError).code).toBe('upstream_bad_response');
    }
  });

  it('ends a failed stream with error and response.failed; the SDK stream rejects', async () => {
    const encoder = new ResponsesStreamEncoder(options());
    let sse = encoder.frames(frame(text('Partial')) + frame(toolStart(0, 'call_a', 'read', '{"pa')));
    sse += encoder.error({ code: 'server_error', message: 'The upstream went away.' });
    const events = parseEvents(sse);
    const items = wellFormedOutput(events);
    const error = { code: 'server_error', message: 'The upstream went away.', param: null };
    // OpenAI's fields, and the same as an error object (the Open Responses ErrorStreamingEvent).
    expect(events.at(-2)!.data).toEqual({ type: 'error', sequence_number: events.length - 2, ...error, error: { type: 'server_error', ...error } });
    expect(events.at(-1)!.data.response).toMatchObject({ status: 'failed', error: { code: 'server_error', message: 'The upstream went away.' }, usage: null });
    // Only the items that were done.
    expect(events.at(-1)!.data.response.output).toEqual([items[0]]);
    expect(encoder.response()!.status).toBe('failed');
    await expect(sdkFinalResponse(sse)).rejects.toMatchObject({ code: 'server_error', message: 'The upstream went away.' });
  });
});

// Random answers: reasoning, text pieces and tool calls (function and custom), cut into random fragments, possibly interleaved.
const fragmentsOf = (s: string, cuts: number[]): string[] => {
  const points = [...new Set(cuts.map((c) => c % (s.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    if (p > from) out.push(s.slice(from, p));
    from = Math.max(from, p);
  }
  if (from < s.length) out.push(s.slice(from));
  return out;
};

const callArb = fc.record({
  custom: fc.boolean(),
  input: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  patch: fc.string({ maxLength: 30 }),
  cuts: fc.array(fc.nat(), { maxLength: 8 }),
  argsWithStart: fc.boolean(),
});

const answerArb = fc.record({
  reasoning: fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 3 }),
  texts: fc.array(fc.string({ maxLength: 12, unit: 'grapheme' }), { maxLength: 6 }),
  calls: fc.array(callArb, { maxLength: 4 }),
  textFirst: fc.boolean(),
  interleave: fc.boolean(),
  finish: fc.constantFrom<OpenAIFinishReason>('stop', 'tool_calls', 'length'),
  schedule: fc.array(fc.nat(), { minLength: 60, maxLength: 60 }),
  batches: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 40, maxLength: 40 }),
});

const PROPERTY_TOOLS: ResponsesEcho['tools'] = [
  { type: 'function', name: 'fn', parameters: { type: 'object' } },
  { type: 'custom', name: 'patch' },
];

type Answer = typeof answerArb extends fc.Arbitrary<infer T> ? T : never;

function streamOf(answer: Answer) {
  const { reasoning, texts, calls, textFirst, interleave, finish, schedule, batches } = answer;
  const lanes: OpenAIChatCompletionChunk[][] = calls.map((c, i) => {
    const args = fragmentsOf(c.custom ? JSON.stringify({ input: c.patch }) : JSON.stringify(c.input), c.cuts);
    const first: OpenAIToolCallDelta = { index: i, id: `call_${i}`, type: 'function', function: { name: c.custom ? 'patch' : 'fn', arguments: c.argsWithStart ? (args.shift() ?? '') : '' } };
    return [chunk({ tool_calls: [first] }), ...args.map((a) => toolArgs(i, a))];
  });
  const textChunks = texts.map(text);
  const ordered: OpenAIChatCompletionChunk[] = reasoning.map((r) => chunk({ reasoning_content: r }));
  if (textFirst) ordered.push(...textChunks);
  if (interleave) {
    const all = textFirst ? lanes : [...lanes, textChunks];
    let step = 0;
    while (all.some((l) => l.length > 0)) {
      const live = all.filter((l) => l.length > 0);
      ordered.push(live[schedule[step++ % schedule.length] % live.length].shift()!);
    }
  } else {
    for (const lane of lanes) ordered.push(...lane);
    if (!textFirst) ordered.push(...textChunks);
  }
  ordered.push(chunk({}, finish));
  ordered.push(usageChunk({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }));

  const encoder = new ResponsesStreamEncoder(options({ tools: PROPERTY_TOOLS }));
  let sse = '';
  let b = 0;
  for (let i = 0; i < ordered.length; ) {
    const n = batches[b++ % batches.length];
    sse += encoder.frames(ordered.slice(i, i + n).map(frame).join(''));
    i += n;
  }
  sse += encoder.finish({ prompt_tokens: 10, completion_tokens: 5, estimated: false });
  return { sse, ordered, encoder };
}

describe('ResponsesStreamEncoder properties', () => {
  it('always emits a well-formed event sequence whose final response holds what was streamed and what went in', () => {
    fc.assert(
      fc.property(answerArb, (answer) => {
        const { sse, ordered, encoder } = streamOf(answer);
        const events = parseEvents(sse);
        const items = wellFormedOutput(events);
        expect(encoder.response()!.output).toEqual(items);

        const reasoningIn = ordered.map((c) => (c.choices[0]?.delta as Delta | undefined)?.reasoning_content ?? '').join('');
        const reasoningOut = items.filter((i) => i.type === 'reasoning').map((i) => i.summary[0].text).join('');
        expect(reasoningOut).toBe(reasoningIn);
        const textIn = ordered.map((c) => c.choices[0]?.delta.content ?? '').join('');
        const textOut = items.filter((i) => i.type === 'message').map((i) => i.content.map((p: any) => p.text).join('')).join('');
        expect(textOut).toBe(textIn);
        expect(items.every((i) => i.type !== 'message' || i.content.every((p: any) => p.text !== ''))).toBe(true);

        // Tool items come in the order their calls started, carrying what went in.
        const calls = items.filter((i) => i.type === 'function_call' || i.type === 'custom_tool_call');
        const startOrder = ordered.flatMap((c) => c.choices[0]?.delta.tool_calls?.filter((t) => t.id).map((t) => t.index) ?? []);
        expect(calls.map((t) => t.call_id)).toEqual(startOrder.map((i) => `call_${i}`));
        for (const t of calls) {
          const want = answer.calls[Number(t.call_id.slice('call_'.length))];
          if (want.custom) expect(t).toMatchObject({ type: 'custom_tool_call', name: 'patch', input: want.patch });
          else expect(t.type === 'function_call' && JSON.parse(t.arguments)).toEqual(JSON.parse(JSON.stringify(want.input)));
        }
        expect(events.at(-1)!.event).toBe(answer.finish === 'length' ? 'response.incomplete' : 'response.completed');
      }),
      { numRuns: 400 },
    );
  });

  it('always gives the official openai SDK the final response the encoder sent', async () => {
    await fc.assert(
      fc.asyncProperty(answerArb, async (answer) => {
        const { sse, encoder } = streamOf(answer);
        const final = await sdkFinalResponse(sse);
        expect(wire(final)).toEqual(encoder.response());
      }),
      { numRuns: 60 },
    );
  });
});
