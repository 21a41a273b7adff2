import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { providerIdentity } from '../shared/provider-identity.js';
import { StreamMeter } from '../shared/stream-meter.js';
import { OpenAIFrameTranslator, isPlainContentChunk } from './openai-stream-frames.js';

const identity = providerIdentity('up', 'openai', []);
/** A content chunk in the recorded layout (providers/openai/__fixtures__/chat-stream.sse), optional members chosen. */
const chunk = (content: string, o: { tier?: boolean; fp?: boolean; logprobs?: boolean; usage?: boolean; obfuscation?: string } = {}) =>
  `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1742136086,"model":"gpt-4o-mini"` +
  `${o.tier ? ',"service_tier":"default"' : ''}${o.fp ? ',"system_fingerprint":"fp_1"' : ''}` +
  `,"choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}}${o.logprobs ? ',"logprobs":null' : ''},"finish_reason":null}]` +
  `${o.usage ? ',"usage":null' : ''}${o.obfuscation !== undefined ? `,"obfuscation":${JSON.stringify(o.obfuscation)}` : ''}}`;

describe('content chunks passed on without a parse', () => {
  it('every chunk of the layout is recognised, whatever its text, and is valid JSON', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean(), fc.option(fc.string()), (text, tier, fp, logprobs, usage, ob) => {
        const data = chunk(text, { tier, fp, logprobs, usage, obfuscation: ob ?? undefined });
        expect(isPlainContentChunk(data)).toBe(true);
        expect(JSON.parse(data).choices[0].delta.content).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('what it recognises always parses, with choice 0, no finish_reason and no usage: mutated chunks', () => {
    const base = chunk('hello "world"\n\u00e9', { tier: true, fp: true, logprobs: true, usage: true });
    fc.assert(
      fc.property(fc.nat(base.length - 1), fc.nat(base.length), fc.string({ maxLength: 4 }), (at, end, insert) => {
        const data = base.slice(0, at) + insert + base.slice(Math.max(at, end > at + 6 ? at : end));
        if (!isPlainContentChunk(data)) return;
        const v = JSON.parse(data);
        expect(v.choices).toHaveLength(1);
        expect(v.choices[0]).toMatchObject({ index: 0, finish_reason: null });
        expect(v.usage ?? null).toBeNull();
      }),
      { numRuns: 3000 },
    );
  });

  it('chunks that need reading are not recognised', () => {
    for (const data of [
      chunk('x').replace('"finish_reason":null', '"finish_reason":"stop"'),
      chunk('x').replace('"index":0', '"index":1'),
      chunk('x', { usage: true }).replace('"usage":null', '"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}'),
      chunk('x').replace('{"content":"x"}', '{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}'),
      chunk('x').replace('"created":1742136086', '"created":01742136086'),
      chunk('x').replace('"x"', '"\\q"'),
      chunk('x').replace('"x"', '"a\tb"'),
      chunk('x') + ' ',
    ])
      expect(isPlainContentChunk(data), data).toBe(false);
  });

  it('a stream relayed through the translator is byte for byte the same with and without the fast path', () => {
    const meter = new StreamMeter(() => 1);
    const t = new OpenAIFrameTranslator(identity, meter, true);
    const first = chunk('').replace('{"content":""}', '{"role":"assistant","content":""}');
    const frames = [first, chunk('Hel'), chunk('lo', { usage: true }), chunk('').replace('"finish_reason":null', '"finish_reason":"stop"'), '[DONE]'];
    const out = frames.map((data) => t.event({ data, event: undefined, id: undefined }));
    expect(out.slice(0, 4)).toEqual(frames.slice(0, 4).map((d) => `data: ${d}\n\n`));
    expect(t.finishReason()).toBe('stop');
    expect(t.end()).toContain('"usage"');
  });
});
