import fc from 'fast-check';
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { encodeChat } from 'gpt-tokenizer/model/gpt-4o';
import { describe, expect, it } from 'vitest';
import {
  countChatPromptTokens,
  countEmbeddingsInputTokens,
  countTokens,
  GPT_4O_MINI_IMAGE_TOKENS_UPPER_BOUND,
  IMAGE_TOKENS_UPPER_BOUND,
  promptTokensUpperBound,
  requestedMaxOutputTokens,
} from './tokens.js';

const cl100k = (s: string) => countCl100k(s, { disallowedSpecial: new Set() });

const cjk = fc.integer({ min: 0x4e00, max: 0x9fff }).map((c) => String.fromCodePoint(c));
const emoji = fc.constantFrom('👍', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇫🇷', '🧑🏿‍🚀', '❤️', '😀');
const combining = fc
  .tuple(fc.constantFrom('a', 'e', 'o', 'ب', 'ก'), fc.array(fc.integer({ min: 0x300, max: 0x36f }), { maxLength: 8 }))
  .map(([base, marks]) => base + String.fromCodePoint(...marks));
const specialText = fc.constantFrom('<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|fim_prefix|>');
const unit = fc.oneof(cjk, emoji, combining, specialText, fc.string({ unit: 'grapheme', maxLength: 4 }), fc.string({ unit: 'binary', maxLength: 4 }));
const text = fc.array(unit, { maxLength: 80 }).map((parts) => parts.join(''));
const anyText = fc.oneof(text, fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 200 }));

describe('countTokens', () => {
  it('counts o200k_base tokens', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
  });

  it('treats special-token text as ordinary text', () => {
    expect(countTokens('a <|endoftext|> b')).toBeGreaterThan(1);
  });
});

describe('promptTokensUpperBound', () => {
  it('bytes bound the tokens of any text (o200k_base and cl100k_base)', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const bytes = Buffer.byteLength(s, 'utf8');
        expect(countTokens(s)).toBeLessThanOrEqual(bytes);
        expect(cl100k(s)).toBeLessThanOrEqual(bytes);
      }),
      { numRuns: 500 },
    );
  });

  it('is at least the real prompt count of any chat body', () => {
    const message = fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: anyText });
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), (messages) => {
        const bound = promptTokensUpperBound({ model: 'gpt-4o', messages });
        expect(bound).toBeGreaterThanOrEqual(encodeChat(messages, undefined, { disallowedSpecial: new Set() }).length);
        expect(bound).toBeGreaterThanOrEqual(countChatPromptTokens({ messages }));
      }),
      { numRuns: 300 },
    );
  });

  it('counts content parts, names, tool calls and tool definitions', () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const body = {
      model: 'gpt-4o',
      messages: [
        { role: 'user', name: 'ana', content: [{ type: 'text', text: 'héllo 世界' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
      tools,
    };
    const bound = promptTokensUpperBound(body);
    const withoutTools = promptTokensUpperBound({ ...body, tools: undefined });
    expect(bound - withoutTools).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(tools)));
    expect(bound).toBeGreaterThanOrEqual(countChatPromptTokens(body));
  });

  it('counts an image at the fixed worst case, whatever its data', () => {
    const image = (url: string) => ({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url } }] }],
    });
    const small = promptTokensUpperBound(image('https://example.com/a.png'));
    const inline = promptTokensUpperBound(image(`data:image/png;base64,${'A'.repeat(100_000)}`));
    expect(inline).toBe(small);
    const textOnly = promptTokensUpperBound({ model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }] }] });
    expect(small - textOnly).toBe(IMAGE_TOKENS_UPPER_BOUND);
    expect(promptTokensUpperBound({ ...image('https://x'), model: 'openai/gpt-4o-mini' }) - textOnly).toBe(GPT_4O_MINI_IMAGE_TOKENS_UPPER_BOUND);
    expect(promptTokensUpperBound(image('https://x'), { imageTokens: 100 }) - textOnly).toBe(100);
  });

  it('bounds embeddings inputs', () => {
    fc.assert(
      fc.property(fc.array(anyText, { minLength: 1, maxLength: 5 }), (input) => {
        expect(promptTokensUpperBound({ input })).toBeGreaterThanOrEqual(input.reduce((n, s) => n + cl100k(s), 0));
        expect(promptTokensUpperBound({ input: input[0] })).toBeGreaterThanOrEqual(countEmbeddingsInputTokens(input[0]));
      }),
      { numRuns: 200 },
    );
    expect(promptTokensUpperBound({ input: [1, 2, 3] })).toBeGreaterThanOrEqual(3);
    expect(promptTokensUpperBound({ input: [[1, 2, 3], [4, 5]] })).toBeGreaterThanOrEqual(5);
    expect(countEmbeddingsInputTokens([[1, 2, 3], [4, 5]])).toBe(5);
  });
});

describe('countChatPromptTokens', () => {
  it("matches OpenAI's chat accounting for plain messages", () => {
    const messages = [
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'What is the capital of France?' },
    ];
    expect(countChatPromptTokens({ messages })).toBe(encodeChat(messages).length);
  });
});

describe('requestedMaxOutputTokens', () => {
  it('prefers max_completion_tokens', () => {
    expect(requestedMaxOutputTokens({ max_tokens: 10, max_completion_tokens: 20 })).toBe(20);
    expect(requestedMaxOutputTokens({ max_tokens: 10 })).toBe(10);
    expect(requestedMaxOutputTokens({})).toBeNull();
  });
});
