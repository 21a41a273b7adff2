import fc from 'fast-check';
import secureJson from 'secure-json-parse';
import { describe, expect, it } from 'vitest';
import { parseReceivedJson } from './parse-received.js';

const parseJsonBody = (text: string) => parseReceivedJson(Buffer.from(text));

const guarded = (text: string) => secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
const outcome = (f: () => unknown) => {
  try {
    return { value: f() };
  } catch (e) {
    return { error: (e as Error).name };
  }
};

describe('parseJsonBody', () => {
  it('refuses prototype keys however they are written', () => {
    for (const text of [
      '{"__proto__":{"x":1}}',
      '{"a":[{"\\u005f_proto__":1}]}',
      '{"\\u005F\\u005Fproto\\u005f\\u005f" :{"x":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '{"m":{"\\u0063onstructor":{"prototype":{}}}}',
      '\ufeff{"__proto__":{}}',
    ]) {
      expect(() => parseJsonBody(text), text).toThrow(SyntaxError);
    }
  });

  it('parses what the guard parses, and throws where it throws', () => {
    const key = fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'prototype', 'model', '\\u005f'));
    const tree = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, fc.jsonValue(), fc.dictionary(key, tie('node'), { maxKeys: 4 }), fc.array(tie('node'), { maxLength: 3 })),
    })).node;
    const text = fc.oneof(
      fc.json(),
      tree.map((v) => JSON.stringify(v) ?? 'null'),
      // The same with keys and values written in \u escapes.
      fc.tuple(tree, fc.integer({ min: 1, max: 4 })).map(([v, every]) => {
        let i = 0;
        return (JSON.stringify(v) ?? 'null').replace(/[_a-z]/g, (c) => (i++ % every === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c));
      }),
      fc.string(),
    );
    fc.assert(
      fc.property(text, fc.boolean(), (t, bom) => {
        const input = bom ? `\ufeff${t}` : t;
        expect(outcome(() => parseJsonBody(input))).toEqual(outcome(() => guarded(input)));
      }),
      { numRuns: 3000 },
    );
  });
});
