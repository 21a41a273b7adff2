import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PII_TYPES } from '../../contract/policies.js';
import { detectPii } from './detect-pii.js';
import { FOLDABLE, foldText, mayFold } from './fold-text.js';
import { redactPii } from './redact-pii.js';

const EMAIL = 'jane.doe@example.com';
const found = (text: string) => detectPii(text, PII_TYPES).map((m) => ({ type: m.type, text: text.slice(m.start, m.end) }));

/** Full-width forms of printable ASCII (U+FF01 to U+FF5E), a space kept. */
const fullWidth = (s: string) => s.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));

describe('PII written so a reader sees it but a byte comparison does not', () => {
  it.each([
    ['zero-width spaces inside an address', 'mail jane\u200B.doe@exa\u200Bmple.com now', 'jane\u200B.doe@exa\u200Bmple.com'],
    ['a soft hyphen and a word joiner', 'mail jane.doe\u00AD@example\u2060.com now', 'jane.doe\u00AD@example\u2060.com'],
    ['a full-width at sign and dot', 'mail jane.doe\uFF20example\uFF0Ecom now', 'jane.doe\uFF20example\uFF0Ecom'],
    ['a whole address in full-width forms', `mail ${fullWidth(EMAIL)} now`, fullWidth(EMAIL)],
    ['a small commercial at', 'mail jane.doe\uFE6Bexample.com now', 'jane.doe\uFE6Bexample.com'],
    ['mathematical bold letters', 'mail \u{1D423}\u{1D41A}\u{1D427}\u{1D41E}@example.com now', '\u{1D423}\u{1D41A}\u{1D427}\u{1D41E}@example.com'],
    ['a card number in full-width digits', `card ${fullWidth('4111 1111 1111 1111')} ok`, fullWidth('4111 1111 1111 1111')],
    ['a card number with zero-width joiners', 'card 4111\u200D1111\u200D1111\u200D1111 ok', '4111\u200D1111\u200D1111\u200D1111'],
    ['an address in invisible tag characters', `mail ${[...'jane.doe@example.com'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('')} now`, [...'jane.doe@example.com'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('')],
    ['an Arabic letter mark and a Mongolian vowel separator', 'mail jane.doe\u061C@exam\u180Eple.com now', 'jane.doe\u061C@exam\u180Eple.com'],
  ])('%s', (_name, text, expected) => {
    expect(found(text).map((m) => m.text)).toContain(expected);
    const redacted = redactPii(text, PII_TYPES).text;
    expect(redacted).not.toContain(expected);
    expect(redacted.startsWith(text.slice(0, 4))).toBe(true);
  });

  it('leaves a text with nothing to fold untouched, and costs it one test', () => {
    expect(foldText('plain ASCII text, jane@example.com')).toBeUndefined();
    expect(foldText('Grüße aus Köln, 日本語のテキスト')).toBeUndefined();
    expect(foldText('a circled ten ⑩ stays')).toBeUndefined();
  });

  it('maps every unit of the folded text back to the character it came from', () => {
    const f = foldText('a\u200Bb\uFF20\u{1D41A}')!;
    expect(f.text).toBe('ab@a');
    expect([...f.startOf]).toEqual([0, 2, 3, 4]);
    expect([...f.endOf]).toEqual([1, 3, 4, 6]);
  });

  it('finds in any text with invisible characters scattered through it what it finds without them', () => {
    const invisible = fc.constantFrom('\u200B', '\u200C', '\u200D', '\u2060', '\u00AD', '\uFEFF', '\u200E');
    const pii = fc.constantFrom(EMAIL, '4111 1111 1111 1111', '+44 20 7946 0958', '123-45-6789', '81.2.69.142', 'DE89 3704 0044 0532 0130 00');
    fc.assert(
      fc.property(pii, fc.array(fc.tuple(fc.nat(), invisible), { maxLength: 6 }), (value, inserts) => {
        let text = `see ${value} here`;
        const plain = detectPii(text, PII_TYPES).map((m) => m.type);
        for (const [at, c] of inserts) {
          const i = 4 + (at % (value.length + 1));
          text = text.slice(0, i) + c + text.slice(i);
        }
        expect(detectPii(text, PII_TYPES).map((m) => m.type)).toEqual(plain);
        expect(detectPii(redactPii(text, PII_TYPES).text, PII_TYPES)).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });
});

describe('mayFold', () => {
  it('is true exactly for the characters FOLDABLE names, over every UTF-16 unit', () => {
    const differ: string[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      const expected = FOLDABLE.test(ch);
      if (mayFold(`ab${ch}cd`) !== expected) differ.push(`U+${c.toString(16)}`);
    }
    expect(differ).toEqual([]);
  });

  it('covers every format character of Unicode (Cf) and every tag, on every plane', () => {
    const missed: string[] = [];
    for (let cp = 0x80; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      if (/\p{Cf}/u.test(ch) && !mayFold(`ab${ch}cd`)) missed.push(`U+${cp.toString(16)}`);
    }
    expect(missed).toEqual([]);
  });
});
