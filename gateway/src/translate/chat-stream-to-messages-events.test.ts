import Anthropic from '@anthropic-ai/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AgentgwError } from '../contract/errors.js';
import type { OpenAIChatCompletionChunk, OpenAIFinishReason, OpenAIToolCallDelta, OpenAIUsage } from '../providers/openai-format.js';
import type { Usage } from '../providers/spec.js';
import { MessagesStreamEncoder } from './chat-stream-to-messages-events.js';

const OPTS = { model: 'claude-sonnet-4', messageId: 'msg_1', inputTokensEstimate: 50 };
const USAGE: Usage = { prompt_tokens: 120, completion_tokens: 30, cached_prompt_tokens: 100, estimated: false };

type Delta = OpenAIChatCompletionChunk['choices'][number]['delta'];

function chunk(delta: Delta, finish: OpenAIFinishReason | null = null): OpenAIChatCompletionChunk {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [{ index: 0, delta, finish_reason: finish }] };
}

function usageChunk(usage: OpenAIUsage): OpenAIChatCompletionChunk {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [], usage };
}

const frame = (c: OpenAIChatCompletionChunk) => `data: ${JSON.stringify(c)}\n\n`;
const text = (t: string) => chunk({ content: t });
const toolStart = (index: number, id: string, name: string, args = ''): OpenAIChatCompletionChunk =>
  chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] });
const toolArgs = (index: number, args: string) => chunk({ tool_calls: [{ index, function: { arguments: args } }] });

interface Event {
  event: string;
  data: Record<string, any>;
}

/** Anthropic SSE text -> its events; each event's name must be its data's type. */
function parseEvents(sse: string): Event[] {
  expect(sse.endsWith('\n\n') || sse === '').toBe(true);
  return sse.split('\n\n').filter(Boolean).map((block) => {
    const [eventLine, dataLine, ...rest] = block.split('\n');
    expect(rest).toEqual([]);
    expect(eventLine.startsWith('event: ')).toBe(true);
    expect(dataLine.startsWith('data: ')).toBe(true);
    const event = eventLine.slice('event: '.length);
    const data = JSON.parse(dataLine.slice('data: '.length)) as Record<string, any>;
    expect(data.type).toBe(event);
    return { event, data };
  });
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; json: string };

/** Checks the event order Anthropic guarantees and returns the blocks the events build. */
function wellFormedBlocks(events: Event[]): Block[] {
  expect(events[0].event).toBe('message_start');
  expect(events[0].data.message.content).toEqual([]);
  expect(events.at(-1)!.event).toBe('message_stop');
  expect(events.at(-2)!.event).toBe('message_delta');
  const blocks: Block[] = [];
  let open: Block | null = null;
  for (const { event, data } of events.slice(1, -2)) {
    switch (event) {
      case 'content_block_start': {
        expect(open).toBeNull();
        expect(data.index).toBe(blocks.length);
        const cb = data.content_block;
        open = cb.type === 'text' ? { type: 'text', text: cb.text } : { type: 'tool_use', id: cb.id, name: cb.name, json: '' };
        if (cb.type === 'tool_use') expect(cb.input).toEqual({});
        blocks.push(open);
        break;
      }
      case 'content_block_delta':
        expect(open).not.toBeNull();
        expect(data.index).toBe(blocks.length - 1);
        if (open!.type === 'text') {
          expect(data.delta.type).toBe('text_delta');
          open!.text += data.delta.text;
        } else {
          expect(data.delta.type).toBe('input_json_delta');
          open!.json += data.delta.partial_json;
        }
        break;
      case 'content_block_stop':
        expect(open).not.toBeNull();
        expect(data.index).toBe(blocks.length - 1);
        open = null;
        break;
      default:
        throw new Error(`unexpected ${event} between message_start and message_delta`);
    }
  }
  expect(open).toBeNull();
  return blocks;
}

function run(chunks: OpenAIChatCompletionChunk[], usage: Usage = USAGE): Event[] {
  const encoder = new MessagesStreamEncoder(OPTS);
  let out = '';
  for (const c of chunks) out += encoder.frames(frame(c));
  out += encoder.frames('data: [DONE]\n\n');
  out += encoder.finish(usage);
  return parseEvents(out);
}

/** The final message the official Anthropic SDK assembles from the SSE text. */
async function sdkFinalMessage(sse: string) {
  const client = new Anthropic({
    apiKey: 'test',
    baseURL: 'http://gateway.invalid',
    fetch: async () => new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  return client.messages.stream({ model: 'claude-sonnet-4', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
}

// What OpenAI streams for "text, then two tool calls", usage last.
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

describe('MessagesStreamEncoder', () => {
  it('turns text then two tool calls into the exact Anthropic event sequence', () => {
    const events = run(REALISTIC);
    expect(events.map((e) => e.data)).toEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4', content: [], stop_reason: null, stop_sequence: null,
          usage: { input_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'check both files.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_a', name: 'read', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"pa' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: 'th": "src/a.ts"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_b', name: 'grep', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"pattern": "TODO", ' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"glob": "*.ts"}' } },
      { type: 'content_block_stop', index: 2 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { input_tokens: 20, output_tokens: 30, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 },
      },
      { type: 'message_stop' },
    ]);
    const blocks = wellFormedBlocks(events);
    expect(blocks.filter((b) => b.type === 'tool_use').map((b) => JSON.parse(b.json))).toEqual([
      { path: 'src/a.ts' },
      { pattern: 'TODO', glob: '*.ts' },
    ]);
  });

  it('streams each block live: a block opens as soon as its first delta arrives', () => {
    const encoder = new MessagesStreamEncoder(OPTS);
    const types = (sse: string) => parseEvents(sse).map((e) => e.event);
    expect(types(encoder.frames(frame(REALISTIC[0])))).toEqual(['message_start']);
    expect(types(encoder.frames(frame(REALISTIC[1])))).toEqual(['content_block_start', 'content_block_delta']);
    expect(types(encoder.frames(frame(REALISTIC[2])))).toEqual(['content_block_delta']);
    expect(types(encoder.frames(frame(REALISTIC[3])))).toEqual(['content_block_stop', 'content_block_start']);
    expect(types(encoder.frames(frame(REALISTIC[4])))).toEqual(['content_block_delta']);
    expect(types(encoder.frames(frame(REALISTIC[5])))).toEqual(['content_block_delta']);
    expect(types(encoder.frames(frame(REALISTIC[6])))).toEqual(['content_block_stop', 'content_block_start']);
  });

  it('gives the same answer to the official Anthropic SDK', async () => {
    const encoder = new MessagesStreamEncoder(OPTS);
    const sse = encoder.frames(REALISTIC.map(frame).join('') + 'data: [DONE]\n\n') + encoder.finish(USAGE);
    const message = await sdkFinalMessage(sse);
    expect(message.content).toMatchObject([
      { type: 'text', text: 'Let me check both files.' },
      { type: 'tool_use', id: 'call_a', name: 'read', input: { path: 'src/a.ts' } },
      { type: 'tool_use', id: 'call_b', name: 'grep', input: { pattern: 'TODO', glob: '*.ts' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 20, output_tokens: 30, cache_read_input_tokens: 100 });
  });

  it('keeps blocks sequential when parallel tool calls interleave their argument deltas', () => {
    const events = run([
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read', arguments: '' } }] }),
      toolStart(1, 'call_b', 'write'),
      toolArgs(0, '{"path":'),
      toolArgs(1, '{"path": "b", '),
      toolArgs(0, ' "a"}'),
      toolArgs(1, '"text": "}"}'),
      chunk({}, 'tool_calls'),
    ]);
    const blocks = wellFormedBlocks(events);
    expect(blocks).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'read', json: '{"path": "a"}' },
      { type: 'tool_use', id: 'call_b', name: 'write', json: '{"path": "b", "text": "}"}' },
    ]);
    // call_b waits until call_a's arguments are complete, then streams.
    const order = events.map((e) => `${e.event}:${e.data.index ?? ''}`);
    expect(order.indexOf('content_block_start:1')).toBeGreaterThan(order.indexOf('content_block_stop:0'));
  });

  it('holds text that arrives while a tool call is incomplete, and opens it after', () => {
    const blocks = wellFormedBlocks(run([
      toolStart(0, 'call_a', 'f', '{"x":'),
      text('meanwhile '),
      text('text'),
      toolArgs(0, '1}'),
      text(' and more'),
      chunk({}, 'stop'),
    ]));
    expect(blocks).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'f', json: '{"x":1}' },
      { type: 'text', text: 'meanwhile text and more' },
    ]);
  });

  it('sends a tool call whose arguments never complete at finish, then those waiting', () => {
    const blocks = wellFormedBlocks(run([toolStart(0, 'a', 'f'), toolStart(1, 'b', 'g', '{}'), chunk({}, 'tool_calls')]));
    expect(blocks).toEqual([
      { type: 'tool_use', id: 'a', name: 'f', json: '' },
      { type: 'tool_use', id: 'b', name: 'g', json: '{}' },
    ]);
  });

  it('takes an id or name sent after the first delta, and makes an id when none comes', () => {
    const blocks = wellFormedBlocks(run([
      toolStart(0, 'a', 'f', '{'),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{"k"' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: ':1}' } }] }),
      chunk({ tool_calls: [{ index: 2, function: { name: 'h', arguments: '{}' } }] }),
      toolArgs(0, '}'),
    ]));
    expect(blocks).toEqual([
      { type: 'tool_use', id: 'a', name: 'f', json: '{}' },
      { type: 'tool_use', id: 'b', name: 'g', json: '{"k":1}' },
      { type: 'tool_use', id: 'toolu_msg_1_2', name: 'h', json: '{}' },
    ]);
  });

  it('ignores fragments for a call already closed with complete arguments', () => {
    const blocks = wellFormedBlocks(run([toolStart(0, 'a', 'f', '{}'), toolStart(1, 'b', 'g', '{}'), toolArgs(0, '\n')]));
    expect(blocks.map((b) => b.type === 'tool_use' && b.json)).toEqual(['{}', '{}']);
  });

  it('turns a refusal delta into text and content_filter into refusal', () => {
    const events = run([chunk({ refusal: 'I cannot ' }), chunk({ refusal: 'help.' }), chunk({}, 'content_filter')]);
    expect(wellFormedBlocks(events)).toEqual([{ type: 'text', text: 'I cannot help.' }]);
    expect(events.at(-2)!.data.delta.stop_reason).toBe('refusal');
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    [null, 'end_turn'],
  ] as const)('maps finish_reason %s to stop_reason %s', (finish, stop) => {
    const events = run(finish ? [text('x'), chunk({}, finish)] : [text('x')]);
    expect(events.at(-2)!.data.delta).toEqual({ stop_reason: stop, stop_sequence: null });
  });

  it('says tool_use when the upstream ends tool calls with stop', () => {
    expect(run([toolStart(0, 'a', 'f', '{}'), chunk({}, 'stop')]).at(-2)!.data.delta.stop_reason).toBe('tool_use');
  });

  it('opens no block for empty text deltas', () => {
    const events = run([chunk({ role: 'assistant', content: '' }), chunk({ content: null }), chunk({}, 'stop')]);
    expect(events.map((e) => e.event)).toEqual(['message_start', 'message_delta', 'message_stop']);
  });

  it('emits a valid message when frames() was never called', () => {
    const encoder = new MessagesStreamEncoder(OPTS);
    const events = parseEvents(encoder.finish({ prompt_tokens: 10, completion_tokens: 0, cache_write_prompt_tokens: 4, estimated: true }));
    expect(events.map((e) => e.event)).toEqual(['message_start', 'message_delta', 'message_stop']);
    expect(events[1].data.usage).toEqual({ input_tokens: 6, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 4 });
  });

  it('emits nothing after finish', () => {
    const encoder = new MessagesStreamEncoder(OPTS);
    encoder.frames(frame(text('x')));
    encoder.finish(USAGE);
    expect(encoder.frames(frame(text('y')))).toBe('');
    expect(encoder.finish(USAGE)).toBe('');
  });

  it('reads several frames in one call and a frame split across calls', () => {
    const all = REALISTIC.map(frame).join('');
    const encoder = new MessagesStreamEncoder(OPTS);
    const cut = all.indexOf('check both');
    const sse = encoder.frames(all.slice(0, cut)) + encoder.frames(all.slice(cut)) + encoder.finish(USAGE);
    expect(parseEvents(sse)).toEqual(run(REALISTIC));
  });

  it('reads a last frame that lacks its blank line at finish', () => {
    const encoder = new MessagesStreamEncoder(OPTS);
    const sse = encoder.frames(`${frame(text('a'))}data: ${JSON.stringify(text('b'))}`) + encoder.finish(USAGE);
    expect(wellFormedBlocks(parseEvents(sse))).toEqual([{ type: 'text', text: 'ab' }]);
  });

  it('fails as a bad upstream answer on a frame that is not JSON', () => {
    const encoder = new MessagesStreamEncoder(OPTS);
    try {
      encoder.frames('data: {"choices": [\n\n');
      throw new Error('expected a throw');
    } catch (e) {
      expect(e).toBeInstanceOf(AgentgwError);
      expect((e as AgentgwError).code).toBe('upstream_bad_response');
    }
  });

  it('writes error events in Anthropic\'s shape', () => {
    const encoder = new MessagesStreamEncoder(OPTS);
    const sse = encoder.error({ type: 'overloaded_error', message: 'Upstream is overloaded.' });
    expect(sse).toBe('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Upstream is overloaded."}}\n\n');
  });
});

// Random answers: text pieces and tool calls, cut into random fragments, tool calls possibly interleaved.
interface Call {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

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
  name: fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,15}$/),
  input: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  cuts: fc.array(fc.nat(), { maxLength: 8 }),
  argsWithStart: fc.boolean(),
});

const answerArb = fc.record({
  texts: fc.array(fc.string({ maxLength: 12, unit: 'grapheme' }), { maxLength: 6 }),
  calls: fc.array(callArb, { maxLength: 4 }),
  textFirst: fc.boolean(),
  interleave: fc.boolean(),
  schedule: fc.array(fc.nat(), { minLength: 60, maxLength: 60 }),
  batches: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 40, maxLength: 40 }),
});

describe('MessagesStreamEncoder properties', () => {
  it('always emits a well-formed Anthropic event sequence that carries the text and tool inputs that went in', () => {
    fc.assert(
      fc.property(answerArb, ({ texts, calls, textFirst, interleave, schedule, batches }) => {
        const expectedCalls: Call[] = calls.map((c, i) => ({ id: `call_${i}`, name: c.name, input: JSON.parse(JSON.stringify(c.input)) }));
        // One lane per tool call: its chunks in order; the first one carries id and name.
        const lanes: OpenAIChatCompletionChunk[][] = calls.map((c, i) => {
          const args = fragmentsOf(JSON.stringify(c.input), c.cuts);
          const first: OpenAIToolCallDelta = { index: i, id: `call_${i}`, type: 'function', function: { name: c.name, arguments: c.argsWithStart ? (args.shift() ?? '') : '' } };
          return [chunk({ tool_calls: [first] }), ...args.map((a) => toolArgs(i, a))];
        });
        const textChunks = texts.map(text);
        const ordered: OpenAIChatCompletionChunk[] = [];
        if (textFirst) ordered.push(...textChunks);
        if (interleave) {
          // Merge the lanes (and, when text is not first, the text) in a random order that keeps each lane's own order.
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
        ordered.push(chunk({}, calls.length > 0 ? 'tool_calls' : 'stop'));
        ordered.push(usageChunk({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }));

        // Fed in random batches of frames.
        const encoder = new MessagesStreamEncoder(OPTS);
        let sse = '';
        let b = 0;
        for (let i = 0; i < ordered.length; ) {
          const n = batches[b++ % batches.length];
          sse += encoder.frames(ordered.slice(i, i + n).map(frame).join(''));
          i += n;
        }
        sse += encoder.finish({ prompt_tokens: 10, completion_tokens: 5, estimated: false });

        const blocks = wellFormedBlocks(parseEvents(sse));
        const textOut = blocks.map((bl) => (bl.type === 'text' ? bl.text : '')).join('');
        const textIn = ordered.map((c) => c.choices[0]?.delta.content ?? '').join('');
        expect(textOut).toBe(textIn);
        expect(blocks.every((bl) => bl.type !== 'text' || bl.text !== '')).toBe(true);
        const toolsOut = blocks.flatMap((bl) => (bl.type === 'tool_use' ? [bl] : []));
        // Tool blocks come in the order their calls started.
        const startOrder = ordered.flatMap((c) => c.choices[0]?.delta.tool_calls?.filter((t) => t.id).map((t) => t.index) ?? []);
        expect(toolsOut.map((t) => t.id)).toEqual(startOrder.map((i) => `call_${i}`));
        for (const t of toolsOut) {
          const want = expectedCalls.find((c) => c.id === t.id)!;
          expect(t.name).toBe(want.name);
          expect(JSON.parse(t.json)).toEqual(want.input);
        }
        const delta = parseEvents(sse).at(-2)!.data;
        expect(delta.delta.stop_reason).toBe(calls.length > 0 ? 'tool_use' : 'end_turn');
      }),
      { numRuns: 500 },
    );
  });
});
