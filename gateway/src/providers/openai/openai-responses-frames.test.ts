import { describe, expect, test } from 'vitest';
import { providerIdentity } from '../shared/provider-identity.js';
import { StreamMeter } from '../shared/stream-meter.js';
import { PARSED_EVENT_CHARS } from '../shared/upstream-failure.js';
import fc from 'fast-check';
import { OpenAIResponsesFrames, isPlainResponsesDelta } from './openai-responses-frames.js';

const identity = providerIdentity('up', 'openai', []);
const frames = () => new OpenAIResponsesFrames(identity, new StreamMeter(() => 1));
/** A response.created snapshot echoing `n` characters of instructions, as OpenAI echoes the request's. */
const snapshot = (n: number) => JSON.stringify({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', instructions: 'i'.repeat(n), output: [] } });
const completed = JSON.stringify({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [], usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 } } });

describe('native Responses events passed on', () => {
  test('a large snapshot is passed on as sent; the terminal event is read', () => {
    const f = frames();
    const big = snapshot(PARSED_EVENT_CHARS * 4);
    expect(f.event({ event: 'response.created', data: big, id: undefined })).toBe(`event: response.created\ndata: ${big}\n\n`);
    f.event({ event: 'response.completed', data: completed, id: undefined });
    expect(f.finalResponse()).toMatchObject({ id: 'resp_1', usage: { input_tokens: 7 } });
    expect(f.end()).toBeNull();
  });

  test('a large snapshot cut short, or a line of text, fails the stream', () => {
    const cut = snapshot(PARSED_EVENT_CHARS * 4).slice(0, -3);
    expect(() => frames().event({ event: 'response.created', data: cut, id: undefined })).toThrow(expect.objectContaining({ code: 'upstream_bad_response' }));
    expect(() => frames().event({ event: 'response.in_progress', data: 'x'.repeat(PARSED_EVENT_CHARS + 1), id: undefined })).toThrow(
      expect.objectContaining({ code: 'upstream_bad_response' }),
    );
  });

  test('small events are parsed whole: one broken inside fails the stream', () => {
    const broken = '{"type":"response.output_text.delta","delta":"x""item_id":"m"}';
    expect(() => frames().event({ event: 'response.output_text.delta', data: broken, id: undefined })).toThrow(expect.objectContaining({ code: 'upstream_bad_response' }));
  });

  test('a terminal event is parsed whole whatever its size: broken inside, it fails the stream', () => {
    const big = completed.replace('"output":[]', `"output":[],"instructions":"${'i'.repeat(PARSED_EVENT_CHARS * 2)}"`).replace('"status"', '"status" ');
    const broken = big.replace('"usage":', '"usage"');
    expect(() => frames().event({ event: 'response.completed', data: broken, id: undefined })).toThrow(expect.objectContaining({ code: 'upstream_bad_response' }));
  });
});

describe('delta events passed on without a parse', () => {
  const delta = (type: string, text: string, o: { index?: 'content_index' | 'summary_index'; logprobs?: boolean; obfuscation?: string } = {}) =>
    `{"type":"response.${type}.delta","sequence_number":12,"item_id":"msg_1","output_index":0${o.index ? `,"${o.index}":0` : ''},"delta":${JSON.stringify(text)}` +
    `${o.logprobs ? ',"logprobs":[]' : ''}${o.obfuscation !== undefined ? `,"obfuscation":${JSON.stringify(o.obfuscation)}` : ''}}`;

  test('every delta in OpenAI\'s layout is recognised, whatever its text, and is valid JSON', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('output_text', 'function_call_arguments', 'custom_tool_call_input', 'reasoning_text', 'reasoning_summary_text', 'refusal'),
        fc.string({ unit: 'binary' }),
        fc.constantFrom(undefined, 'content_index' as const, 'summary_index' as const),
        fc.boolean(),
        fc.option(fc.string()),
        (type, text, index, logprobs, ob) => {
          const data = delta(type, text, { index, logprobs, obfuscation: ob ?? undefined });
          expect(isPlainResponsesDelta(data)).toBe(true);
          expect(JSON.parse(data).delta).toBe(text);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('what it recognises always parses: mutated deltas', () => {
    const base = delta('output_text', 'say "hi"\n', { index: 'content_index', logprobs: true });
    fc.assert(
      fc.property(fc.nat(base.length - 1), fc.nat(8), fc.string({ maxLength: 4 }), (at, cut, insert) => {
        const data = base.slice(0, at) + insert + base.slice(at + cut);
        if (isPlainResponsesDelta(data)) expect(() => JSON.parse(data)).not.toThrow();
      }),
      { numRuns: 3000 },
    );
  });

  test('a delta broken inside still fails the stream', () => {
    const broken = delta('output_text', 'x').replace('"delta":', '"delta"');
    expect(isPlainResponsesDelta(broken)).toBe(false);
    expect(() => frames().event({ event: 'response.output_text.delta', data: broken, id: undefined })).toThrow(expect.objectContaining({ code: 'upstream_bad_response' }));
  });
});
