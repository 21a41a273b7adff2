import { createRequire } from 'node:module';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { countTokens, isSplitPoint, PIECE_CHARS, pieceEnd, truncateToTokens } from './o200k.js';

// The module o200k.ts loads (same file, same require cache): the reference for whole-text counts, and the thing spied on.
const lib = createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as typeof import('gpt-tokenizer/encoding/o200k_base');
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const wholeCount = (text: string) => lib.countTokens(text, AS_TEXT);
const wholeEncode = (text: string) => lib.encode(text, AS_TEXT);
/** truncateToTokens as it was: the whole text encoded at once. */
const wholeTruncate = (text: string, max: number) => {
  const tokens = wholeEncode(text);
  return tokens.length > max ? lib.decode(tokens.slice(0, max)) : null;
};
/**
 * gpt-tokenizer 4.0's decode streams through one shared TextDecoder and never flushes it: a decode that ends inside a
 * character leaves its bytes to the next decode, which then starts with U+FFFD. Flushed between the calls compared here.
 */
const sharedDecoder = (createRequire(import.meta.url)('gpt-tokenizer/BytePairEncodingCore') as { decoder: { decode(): string } }).decoder;
const flushDecoder = () => void sharedDecoder.decode();

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every character class the o200k split pattern tells apart, and the ones next to its whitespace rules. */
const tricky = fc.constantFrom(
  ...[' ', '  ', '\t', '\n', '\r', '\r\n', '\u00a0', '\u3000', '\u2028', '\u000b'],
  ...['a', 'b', 's', 't', 'A', 'B', 'S', 'é', 'É', 'ǅ', 'ʰ', '日', 'ж', 'Ж', '\u0301', '\u0903'],
  ...['1', '22', '٣', '.', ',', '/', ':', "'", '-', '(', '"', '<|endoftext|>', '👍', '👨‍👩‍👧', '\ud800', '\udc00', '\u0000'],
);
const trickyText = fc.array(tricky, { maxLength: 24 }).map((parts) => parts.join(''));

describe('isSplitPoint', () => {
  it('marks the points before a space and after a newline', () => {
    expect(isSplitPoint('hello world', 5)).toBe(true);
    expect(isSplitPoint('hello world', 6)).toBe(false);
    expect(isSplitPoint('hello world', 3)).toBe(false);
    expect(isSplitPoint('one\ntwo', 4)).toBe(true);
    expect(isSplitPoint('one\ntwo', 3)).toBe(false); // ' ?[^\s\p{L}\p{N}]+[\r\n/]*' takes a newline after punctuation
    expect(isSplitPoint('one\n/two', 4)).toBe(false); // ... and a slash after that
    expect(isSplitPoint('one  two', 4)).toBe(false); // inside a whitespace run
    expect(isSplitPoint('ab', 0)).toBe(false);
    expect(isSplitPoint('ab', 2)).toBe(false);
  });

  it('never changes the tokens: the pieces encode to the tokens of the whole text', () => {
    fc.assert(
      fc.property(trickyText, (text) => {
        const whole = wholeEncode(text);
        for (let i = 1; i < text.length; i++) {
          if (isSplitPoint(text, i)) expect([...wholeEncode(text.slice(0, i)), ...wholeEncode(text.slice(i))], `split at ${i}`).toEqual(whole);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('pieceEnd', () => {
  it('ends pieces at split points within the bound, else cuts blindly but not inside a surrogate pair', () => {
    fc.assert(
      fc.property(trickyText, fc.integer({ min: 1, max: 12 }), (text, max) => {
        let spanned = 0;
        for (let start = 0, previous = 0; start < text.length; ) {
          const end = pieceEnd(text, start, max);
          expect(end).toBeGreaterThan(start);
          expect(end).toBeLessThanOrEqual(start + max);
          const splits = Array.from({ length: max }, (_, k) => start + 1 + k).filter((i) => isSplitPoint(text, i));
          if (end === text.length) expect(text.length - start).toBeLessThanOrEqual(max);
          else if (splits.length > 0) expect(end).toBe(Math.max(...splits));
          else expect(end === start + max || (end === start + max - 1 && /[\ud800-\udbff]/.test(text[end]))).toBe(true);
          if (end < text.length && start > 0) spanned = Math.min(spanned || Infinity, end - previous);
          previous = start;
          start = end;
        }
        if (spanned > 0) expect(spanned).toBeGreaterThanOrEqual(max); // two successive pieces: the scans stay linear
      }),
      { numRuns: 2_000 },
    );
  });
});

/** Ordinary text: words, numbers, punctuation and unicode between spaces, tabs and newlines. */
const word = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('the', 'of', 'and', 'token', 'gateway', 'request', 'is', 'a', 'to', 'in', 'upstream', 'billing') },
  { weight: 2, arbitrary: fc.constantFrom('The', 'JSON', 'HTTP', 'GPT-4o', "don't", "It's", "O'NEIL'S", 'e.g.', 'U.S.', 'naïve', 'café', 'Straße') },
  { weight: 2, arbitrary: fc.constantFrom('(see', 'below)', '"quoted"', 'end.', 'list:', 'x,', 'a/b', 'https://example.com/a?b=c', '--flag', '#1', '$3.50', '100%') },
  { weight: 1, arbitrary: fc.constantFrom('ответ', 'Ответ', '日本語の文章', '한국어', 'مرحبا', 'नमस्ते', 'ἀλήθεια', 'e\u0301te\u0301', '👍', '👨‍👩‍👧‍👦', '🇫🇷') },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 10_000_000 }).map(String) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }) },
);
const separator = fc.oneof(
  { weight: 20, arbitrary: fc.constant(' ') },
  { weight: 6, arbitrary: fc.constantFrom(', ', '. ', '.\n', '\n', '\n\n', ':\n- ', '\r\n', '.\r\n\r\n') },
  { weight: 2, arbitrary: fc.constantFrom('  ', '\t', ' \n', '\n  ', '\u00a0', '\u3000', ' \t ', '\n\n\n    ', '') },
);
const ordinaryText = fc
  .array(fc.tuple(word, separator), { minLength: 800, maxLength: 4_000 })
  .map((pairs) => pairs.map(([w, s]) => w + s).join(''))
  .filter((text) => text.length > 2 * PIECE_CHARS);

describe('countTokens and truncateToTokens on long ordinary text', () => {
  it('count exactly what the tokenizer counts on the whole text', () => {
    fc.assert(
      fc.property(ordinaryText, (text) => {
        expect(countTokens(text)).toBe(wholeCount(text));
      }),
      { numRuns: 60 },
    );
  });

  it('cut exactly where the tokenizer on the whole text cuts', () => {
    fc.assert(
      fc.property(ordinaryText, fc.nat(), (text, seed) => {
        const total = wholeCount(text);
        for (const max of [0, 1, seed % total, total - 1, total, total + 1]) {
          flushDecoder();
          const cut = truncateToTokens(text, max);
          flushDecoder();
          expect(cut).toBe(wholeTruncate(text, max));
        }
      }),
      { numRuns: 30 },
    );
  });

  it('go to the tokenizer in pieces of at most PIECE_CHARS, and whole when short', () => {
    const count = vi.spyOn(lib, 'countTokens');
    const text = 'Hello, world. '.repeat(1_000);
    const n = countTokens(text);
    const pieces = count.mock.calls.map(([piece]) => piece as string);
    expect(n).toBe(wholeCount(text));
    expect(pieces.join('')).toBe(text);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(PIECE_CHARS);
    // Cut before the last space within the bound, and split points come every 7 characters at most here.
    expect(pieces.length).toBeLessThanOrEqual(Math.ceil(text.length / (PIECE_CHARS - 7)));
    for (const piece of pieces.slice(1)) expect(piece[0]).toBe(' ');

    count.mockClear();
    countTokens('Hello, world.');
    expect(count.mock.calls).toEqual([['Hello, world.', AS_TEXT]]);
  });
});

/** Runs with no split point: one pre-tokenized word each (or one whitespace run), quadratic for the tokenizer. */
const pathological: Record<string, (n: number) => string> = {
  'DE x n': (n) => 'DE'.repeat(n / 2),
  ': x n': (n) => ':'.repeat(n),
  'a x n @ b. x n': (n) => `${'a'.repeat(n / 3)}@${'b.'.repeat(n / 3)}`,
  'space x n': (n) => ' '.repeat(n),
  'newline x n': (n) => '\n'.repeat(n),
  'emoji x n': (n) => '👍'.repeat(n / 2),
  'uppercase soup': (n) => Array.from({ length: n }, (_, i) => 'ABCDEFGHIJ'[(i * i + 7 * i) % 10]).join(''),
};

describe('countTokens and truncateToTokens on long runs without whitespace', () => {
  it.each(Object.entries(pathological))('hand %s to the tokenizer in bounded, well-formed pieces', (_, make) => {
    const text = make(200_000);
    const count = vi.spyOn(lib, 'countTokens').mockImplementation((piece) => (piece as string).length);
    expect(countTokens(text)).toBe(text.length);
    const pieces = count.mock.calls.map(([piece]) => piece as string);
    expect(pieces.join('')).toBe(text);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(PIECE_CHARS);
    expect(pieces.length).toBeLessThanOrEqual(Math.ceil(text.length / (PIECE_CHARS - 1)));
    for (const piece of pieces) expect(/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(piece)).toBe(false); // no surrogate pair cut in two

    // One token per character here.
    const encode = vi.spyOn(lib, 'encode').mockImplementation((piece) => Array.from({ length: (piece as string).length }, () => 0));
    vi.spyOn(lib, 'decode').mockImplementation((tokens) => 'x'.repeat([...tokens].length));
    expect(truncateToTokens(text, 5_000)).toBe('x'.repeat(5_000));
    const encoded = encode.mock.calls.map(([piece]) => piece as string);
    expect(encoded.join('')).toBe(text.slice(0, encoded.join('').length));
    expect(Math.max(...encoded.map((p) => p.length))).toBeLessThanOrEqual(PIECE_CHARS);
    expect(encoded.join('').length).toBeLessThanOrEqual(5_000 + PIECE_CHARS); // stops once past max
  });

  it.each(Object.entries(pathological))('count %s within a token per piece of the whole-text count', (_, make) => {
    // The whole-text count is affordable at 12,000 characters; 240,000 are 20 times that.
    const small = make(12_000);
    const large = make(240_000);
    const perChar = wholeCount(small) / small.length;
    const pieces = Math.ceil(large.length / (PIECE_CHARS - 1));
    expect(Math.abs(countTokens(large) - perChar * large.length)).toBeLessThanOrEqual(pieces + 20 * 2);
    // Shorter than the bound: the whole text at once, exact.
    expect(countTokens(make(1_200))).toBe(wholeCount(make(1_200)));
  });

  it('truncate DE x 100,000 where the whole-text encoding would', () => {
    const text = 'DE'.repeat(100_000);
    expect(countTokens(text)).toBe(100_000);
    expect(truncateToTokens(text, 10)).toBe('DE'.repeat(10));
    expect(truncateToTokens(text, 50_000)).toBe('DE'.repeat(50_000));
    expect(truncateToTokens(text, 100_000)).toBeNull();
  });
});
