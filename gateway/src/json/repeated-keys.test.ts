import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { repeatsKey, repeatsKeyOf } from './repeated-keys.js';

/**
 * `v` as JSON text with one object's first key written twice (its first value 0), spaced or not; null when `v` holds no
 * object with a key. Written member by member, so the doubled key is always a key (never text inside a string).
 */
function withKeyTwice(v: unknown, spaced = false): string | null {
  const sep = spaced ? '\n ' : '';
  let doubled = false;
  const write = (x: unknown): string => {
    if (Array.isArray(x)) return `[${x.map(write).join(`,${sep}`)}]`;
    if (x === null || typeof x !== 'object') return JSON.stringify(x) ?? 'null';
    const members = Object.entries(x).map(([k, value]) => `${JSON.stringify(k)}:${sep}${write(value)}`);
    if (!doubled && members.length > 0) {
      doubled = true;
      members.unshift(`${JSON.stringify(Object.keys(x)[0])}:${sep}0`);
    }
    return `{${sep}${members.join(`,${sep}`)}}`;
  };
  const text = write(v);
  return doubled ? text : null;
}

describe('repeatsKey', () => {
  it('finds a key repeated at any depth, escaped or not, and nothing in keys that only look alike', () => {
    expect(repeatsKey('{"a":1,"a":2}')).toBe(true);
    expect(repeatsKey('{"m":[{"role":"user","content":"x","content":"y"}]}')).toBe(true);
    expect(repeatsKey('{"a":1,"\\u0061":2}')).toBe(true);
    expect(repeatsKey('{"a" : {"a": {"a": 1}}, "b": [{"a":1},{"a":2}]}')).toBe(false);
    expect(repeatsKey('{"a":"a:","b":["a","a"],"c":"{\\"a\\":1,\\"a\\":2}"}')).toBe(false);
    expect(repeatsKey('{"A":1,"a":2}')).toBe(false);
    // A brace inside a string, then a key that is a colon: the key is doubled, not the text after the brace.
    expect(repeatsKey(JSON.stringify([['{', { ':': 0 }]]))).toBe(false);
    expect(withKeyTwice([['{', { ':': 0 }]])).toBe('[["{",{":":0,":":0}]]');
    expect(repeatsKey(withKeyTwice([['{', { ':': 0 }]])!)).toBe(true);
  });

  it('finds no repeat in JSON that JSON.stringify wrote, and the one written into it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        expect(repeatsKey(text)).toBe(false);
        // The same value with one object's first key written twice.
        const doubled = withKeyTwice(v);
        if (doubled !== null) expect(repeatsKey(doubled)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('repeatsKeyOf', () => {
  const of = (text: string) => repeatsKeyOf(text, JSON.parse(text));

  it('answers as repeatsKey on texts whose strings hold colons, quotes and backslashes', () => {
    for (const text of [
      '{"a":1,"a":2}',
      '{"m":[{"role":"user","content":"x","content":"y"}]}',
      '{"a":1,"\\u0061":2}',
      '{"a" : {"a": {"a": 1}}, "b": [{"a":1},{"a":2}]}',
      '{"a":"a:","b":["a","a"],"c":"{\\"a\\":1,\\"a\\":2}"}',
      '{"A":1,"a":2}',
      '{"k\\\\":"\\\\","k\\\\":":"}',
      '{"x":"\\\\\\":","y":"::"}',
      '{"__proto__":1,"__proto__":2}',
      '{"__proto__":{"a":1},"b":{"__proto__":{}}}',
      '[{"a":1},{"b":{"c":[{"d":1,"d":2}]}}]',
      '["a:b", ":", "\\":"]',
      '{"":1,"":2}',
      '{"é":"ü:","\\u00e9":0}',
      '{}',
      '"a:b"',
      '1',
    ]) {
      expect(of(text), text).toBe(repeatsKey(text));
    }
  });

  it('answers as repeatsKey on any JSON, with a key written twice or not, spaced or not', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (v, spaced) => {
        const text = JSON.stringify(v, null, spaced ? 1 : undefined);
        expect(of(text)).toBe(repeatsKey(text));
        const doubled = withKeyTwice(v, spaced);
        if (doubled !== null) {
          expect(of(doubled)).toBe(true);
          expect(repeatsKey(doubled)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});
