import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { repeatsKey } from './repeated-keys.js';

describe('repeatsKey', () => {
  it('finds a key repeated at any depth, escaped or not, and nothing in keys that only look alike', () => {
    expect(repeatsKey('{"a":1,"a":2}')).toBe(true);
    expect(repeatsKey('{"m":[{"role":"user","content":"x","content":"y"}]}')).toBe(true);
    expect(repeatsKey('{"a":1,"\\u0061":2}')).toBe(true);
    expect(repeatsKey('{"a" : {"a": {"a": 1}}, "b": [{"a":1},{"a":2}]}')).toBe(false);
    expect(repeatsKey('{"a":"a:","b":["a","a"],"c":"{\\"a\\":1,\\"a\\":2}"}')).toBe(false);
    expect(repeatsKey('{"A":1,"a":2}')).toBe(false);
  });

  it('finds no repeat in JSON that JSON.stringify wrote, and the one written into it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        expect(repeatsKey(text)).toBe(false);
        // The same text with one object's first key written twice.
        const doubled = text.replace(/\{("(?:[^"\\]|\\.)*"):/, (_m, key: string) => `{${key}:0,${key}:`);
        if (doubled !== text) expect(repeatsKey(doubled)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
