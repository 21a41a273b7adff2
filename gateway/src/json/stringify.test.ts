import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseReceivedJson } from './parse-received.js';
import { isKeptPart } from './part-values.js';
import { forgetLongTexts, stringifyBody } from './stringify.js';

const outcome = (f: () => unknown) => {
  try {
    return { value: f() };
  } catch (e) {
    return { error: (e as Error).name };
  }
};

/** Long texts with what JSON escapes: quotes, backslashes, control characters, lone surrogates, and characters outside ASCII. */
const longText = fc.string({ unit: fc.constantFrom('a', ' ', '"', '\\', '\n', '\u0001', '\u2028', 'é', '😀', '\ud800', '\udfff'), minLength: 500, maxLength: 700 });
const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.integer(),
  fc.string({ maxLength: 6 }),
  longText,
  fc.constant(undefined),
  fc.constant(() => 1),
  fc.constant(new Date(0)),
);
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), longText, fc.constantFrom('toJSON', 'length', '0', '10')), tie('value'), { maxKeys: 4 }),
  ),
}));

describe('stringifyBody', () => {
  it('writes what JSON.stringify writes, twice over (the second time long texts are looked up)', () => {
    fc.assert(
      fc.property(value, (v) => {
        const want = outcome(() => JSON.stringify(v));
        expect(outcome(() => stringifyBody(v))).toEqual(want.value === undefined && !('error' in want) ? { value: 'null' } : want);
        expect(outcome(() => stringifyBody(v))).toEqual(want.value === undefined && !('error' in want) ? { value: 'null' } : want);
      }),
      { numRuns: 600 },
    );
  });

  it('writes bodies made of kept parts as JSON.stringify does, also after the texts are forgotten', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 4 }), fc.array(value, { maxLength: 3 }), (messages, extra) => {
        const plain = JSON.parse(JSON.stringify({ messages, pad: 'x'.repeat(5_000) }) ?? 'null') as { messages: unknown[] };
        const received = parseReceivedJson(Buffer.from(JSON.stringify(plain))) as { messages: unknown[] };
        // A translation: kept parts, objects inside them and new objects side by side.
        const built = {
          model: 'm',
          messages: [...received.messages, ...extra, { role: 'user', content: received.messages }],
          inner: received.messages.filter((m) => m !== null && typeof m === 'object'),
        };
        for (let round = 0; round < 3; round++) {
          if (round === 2) forgetLongTexts();
          expect(stringifyBody(built)).toBe(JSON.stringify(built));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('looks up the JSON of a kept part instead of writing it again', () => {
    const text = 'a "quoted" line\n'.repeat(100);
    const body = parseReceivedJson(Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: text }], pad: 'x'.repeat(5_000) }))) as { messages: object[] };
    const message = body.messages[0]!;
    expect(isKeptPart(message)).toBe(true);
    const first = stringifyBody({ messages: [message] });
    expect(first).toBe(JSON.stringify({ messages: [message] }));
    // A kept part never changes: its JSON is taken as written the first time.
    expect(() => Object.assign(message, { role: 'assistant' })).toThrow(TypeError);
    expect(stringifyBody({ messages: [message] })).toBe(first);
  });

  it('writes or refuses nesting as deep as JSON.stringify does', () => {
    for (const depth of [300, 1_000, 5_000, 20_000, 200_000]) {
      let v: unknown = 'x'.repeat(600);
      for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { a: v };
      expect(outcome(() => stringifyBody(v)), `depth ${depth}`).toEqual(outcome(() => JSON.stringify(v)));
    }
  });
});
