import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { providerIdentity } from '../shared/provider-identity.js';
import { StreamMeter } from '../shared/stream-meter.js';
import { AnthropicPassthroughFrames, isPlainBlockDelta } from './anthropic-passthrough-frames.js';

const identity = providerIdentity('up', 'anthropic', []);
const KINDS = [
  ['text_delta', 'text'],
  ['thinking_delta', 'thinking'],
  ['signature_delta', 'signature'],
  ['input_json_delta', 'partial_json'],
] as const;
const delta = (index: number, [type, member]: readonly [string, string], text: string) =>
  `{"type":"content_block_delta","index":${index},"delta":{"type":"${type}","${member}":${JSON.stringify(text)}}}`;

describe('content_block_delta events passed on without a parse', () => {
  it('every text, thinking, signature and tool-input delta in Anthropic\'s layout is recognised, and is valid JSON', () => {
    fc.assert(
      fc.property(fc.nat(999), fc.constantFrom(...KINDS), fc.string({ unit: 'binary' }), (index, kind, text) => {
        const data = delta(index, kind, text);
        expect(isPlainBlockDelta(data)).toBe(true);
        expect(JSON.parse(data).delta[kind[1]]).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('what it recognises always parses as a content_block_delta: mutated events', () => {
    const base = delta(3, KINDS[0], 'a "quoted"\nline \u00e9');
    fc.assert(
      fc.property(fc.nat(base.length - 1), fc.nat(8), fc.string({ maxLength: 4 }), (at, cut, insert) => {
        const data = base.slice(0, at) + insert + base.slice(at + cut);
        if (!isPlainBlockDelta(data)) return;
        expect(JSON.parse(data).type).toBe('content_block_delta');
      }),
      { numRuns: 3000 },
    );
  });

  it('events that are read, or not in the layout, are parsed', () => {
    for (const data of [
      '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}',
      delta(0, KINDS[0], 'x').replace('"index":0', '"index":00'),
      delta(0, KINDS[0], 'x').replace('"text":"x"', '"text":"x","extra":1'),
      delta(0, KINDS[0], 'x').replace('"x"', '"\\x"'),
      ` ${delta(0, KINDS[0], 'x')}`,
    ])
      expect(isPlainBlockDelta(data), data).toBe(false);
  });

  it('a stream relayed through the translator: the same frames, the usage and stop read as before', () => {
    const meter = new StreamMeter(() => 1);
    const t = new AnthropicPassthroughFrames(identity, meter);
    const events: Array<[string, string]> = [
      ['message_start', '{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude","usage":{"input_tokens":9,"output_tokens":1}}}'],
      ['content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'],
      ['content_block_delta', delta(0, KINDS[0], 'Hello')],
      ['', delta(0, KINDS[0], ' there')],
      ['content_block_stop', '{"type":"content_block_stop","index":0}'],
      ['message_delta', '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":4}}'],
      ['message_stop', '{"type":"message_stop"}'],
    ];
    const out = events.map(([event, data]) => t.event({ event: event || undefined, data, id: undefined }));
    expect(out).toEqual(events.map(([event, data]) => `event: ${event || 'content_block_delta'}\ndata: ${data}\n\n`));
    expect(t.finishReason()).toBe('end_turn');
    expect(meter.usage()).toMatchObject({ prompt_tokens: 9, completion_tokens: 4 });
    expect(t.end()).toBeNull();
  });
});
