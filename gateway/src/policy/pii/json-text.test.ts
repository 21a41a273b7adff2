import { describe, expect, it } from 'vitest';
import { mapJsonStrings } from './json-text.js';

const seen = (json: string) => {
  const out: Array<[string, string | undefined]> = [];
  mapJsonStrings(json, (v, label) => {
    out.push([v, label]);
    return v;
  });
  return out;
};

describe('mapJsonStrings', () => {
  it('reads every value of a repeated key, a __proto__ key and keys themselves, as the text spells them', () => {
    const json = '{"q":"a@example.com","q":"x","__proto__":{"p":"b@example.com"},"c@example.com":1}';
    expect(seen(json)).toEqual([
      ['q', undefined],
      ['a@example.com', 'q'],
      ['q', undefined],
      ['x', 'q'],
      ['__proto__', undefined],
      ['p', undefined],
      ['b@example.com', 'p'],
      ['c@example.com', undefined],
    ]);
  });

  it('labels array items with the key the array sits under, and reads long numbers as digits', () => {
    expect(seen('{"password":["s1",{"k":"v"},"s2"],"n":4111111111111111,"m":12}')).toEqual([
      ['password', undefined],
      ['s1', 'password'],
      ['k', undefined],
      ['v', 'k'],
      ['s2', 'password'],
      ['n', undefined],
      ['4111111111111111', 'n'],
      ['m', undefined],
    ]);
  });

  it('writes replacements as JSON strings, escapes decoded and re-encoded, the rest of the text untouched', () => {
    const json = '{ "a" : "x\\"y@example.com", "b": [1, 4111111111111111 ] }';
    const out = mapJsonStrings(json, (v) => v.replace(/\S+@example\.com|4111111111111111/, 'R'));
    expect(out).toBe('{ "a" : "R", "b": [1, "R" ] }');
    expect(JSON.parse(out!)).toEqual({ a: 'R', b: [1, 'R'] });
  });

  it('returns undefined for a text that is not JSON, and the same text when nothing changed', () => {
    expect(mapJsonStrings('{"a":', (v) => v)).toBeUndefined();
    const json = '{"a":"b"}';
    expect(mapJsonStrings(json, (v) => v)).toBe(json);
  });

  it('reads a string of megabytes and a nesting 500 deep', () => {
    const big = `{"a":"${'x'.repeat(4_000_000)} a@example.com"}`;
    let found = false;
    mapJsonStrings(big, (v) => ((found ||= v.endsWith('a@example.com')), v));
    expect(found).toBe(true);
    const deep = `${'{"k":'.repeat(500)}"d@example.com"${'}'.repeat(500)}`;
    expect(seen(deep).at(-1)).toEqual(['d@example.com', 'k']);
  });
});
