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
  // Written as JSON.stringify writes them: left out as a member, null in an array.
  fc.constant({ toJSON: () => undefined }),
  fc.constant({ toJSON: () => 'é'.repeat(600) }),
);
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), longText, fc.constantFrom('toJSON', 'length', '0', '10')), tie('value'), { maxKeys: 4 }),
  ),
}));

/** What stringifyBody must give for `v`: JSON.stringify's outcome, as ASCII text that parses to the same value. */
function expectLikeStringify(v: unknown): void {
  const want = outcome(() => JSON.stringify(v) ?? 'null');
  const got = outcome(() => stringifyBody(v).toString('latin1'));
  if ('error' in want) {
    expect(got).toEqual(want);
    return;
  }
  expect('value' in got).toBe(true);
  const text = got.value as string;
  // eslint-disable-next-line no-control-regex
  expect(/^[\x00-\x7f]*$/.test(text), text).toBe(true);
  expect(JSON.parse(text)).toEqual(JSON.parse(want.value as string));
  // The same text when nothing had to be escaped.
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(want.value as string)) expect(text).toBe(want.value);
}

describe('stringifyBody', () => {
  it('writes what JSON.stringify writes, in ASCII, twice over (the second time long texts are looked up)', () => {
    fc.assert(
      fc.property(value, (v) => {
        expectLikeStringify(v);
        expectLikeStringify(v);
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
          expectLikeStringify(built);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('looks up the JSON of a kept part instead of writing it again', () => {
    const text = 'a "quoted" line\n'.repeat(100);
    const bytes = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: text }], pad: 'x'.repeat(5_000) }));
    parseReceivedJson(bytes);
    // Sent again: kept.
    const body = parseReceivedJson(bytes) as { messages: object[] };
    const message = body.messages[0]!;
    expect(isKeptPart(message)).toBe(true);
    const first = stringifyBody({ messages: [message] });
    expectLikeStringify({ messages: [message] });
    // A kept part never changes: its JSON is taken as written the first time.
    expect(() => Object.assign(message, { role: 'assistant' })).toThrow(TypeError);
    expect(stringifyBody({ messages: [message] })).toEqual(first);
    // The very bytes written the first time.
    expect(stringifyBody(message)).toBe(stringifyBody(message));
  });

  it('writes or refuses nesting as deep as JSON.stringify does', () => {
    for (const depth of [300, 1_000, 5_000, 20_000, 200_000]) {
      let v: unknown = 'é'.repeat(600);
      for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { a: v };
      expectLikeStringify(v);
    }
  });
});
