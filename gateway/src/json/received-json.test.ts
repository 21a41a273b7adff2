import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asciiJsonText, parseReceivedJson } from './parse-received.js';
import { forgetKnownMembers } from './known-members.js';
import { stringifyBody } from './stringify.js';
import { MIN_BODY_BYTES } from './part-cache.js';
import { Choices, ws } from '../test-support/json-text.js';
import { ReceivedJson, receivedJsonOf, type Span, withMembers } from './received-json.js';
import { repeatsKey } from './repeated-keys.js';

// ---------------------------------------------------------------------------------------------------------------------
// Generated JSON texts: values written with random whitespace between tokens, strings with random escapes (\uXXXX in
// either case, \/, short escapes), numbers in several notations, and objects that may repeat a key.
// ---------------------------------------------------------------------------------------------------------------------

/** An object as written: its entries in order, a key possibly repeated (JSON.parse keeps the last). */
class Obj {
  constructor(readonly entries: [string, Tree][]) {}
}
/** An array of the top level drawn from a pool, so that equal elements (and often equal bytes) recur. */
class Picks {
  constructor(readonly at: number[]) {}
}
type Tree = null | boolean | number | string | Tree[] | Obj;

const SHORT: Record<string, string> = { '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function writeString(s: string, c: Choices): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const units = () => {
      let e = '';
      for (let k = 0; k < ch.length; k++) {
        const h = ch.charCodeAt(k).toString(16).padStart(4, '0');
        e += `\\u${c.next(2) === 0 ? h : h.toUpperCase()}`;
      }
      return e;
    };
    // A lone surrogate has no UTF-8 form: it can only be written escaped.
    if (cp >= 0xd800 && cp <= 0xdfff) out += units();
    else if (ch === '"') out += c.next(2) === 0 ? '\\"' : units();
    else if (ch === '\\') out += c.next(2) === 0 ? '\\\\' : units();
    else if (cp < 0x20) out += SHORT[ch] !== undefined && c.next(2) === 0 ? SHORT[ch] : units();
    else if (ch === '/') out += ['/', '\\/', units()][c.next(3)];
    else out += c.next(4) === 0 ? units() : ch;
  }
  return `${out}"`;
}

function writeNumber(n: number, c: Choices): string {
  switch (c.next(3)) {
    case 0:
      return Object.is(n, -0) ? '-0' : JSON.stringify(n);
    case 1:
      return n.toExponential().replace('e', c.next(2) === 0 ? 'e' : 'E');
    default:
      return JSON.stringify(n);
  }
}

function write(t: Tree, c: Choices, pool: readonly Tree[]): string {
  if (t === null) return 'null';
  if (typeof t === 'boolean') return String(t);
  if (typeof t === 'number') return writeNumber(t, c);
  if (typeof t === 'string') return writeString(t, c);
  const items: string[] = [];
  if (Array.isArray(t)) {
    for (const v of t) items.push(write(v, c, pool));
  } else {
    for (const [k, v] of t.entries) items.push(writeString(k, c) + ws(c) + ':' + ws(c) + write(v, c, pool));
  }
  let out = Array.isArray(t) ? '[' : '{';
  out += ws(c);
  items.forEach((item, i) => {
    if (i > 0) out += ws(c) + ',' + ws(c);
    out += item;
  });
  return out + ws(c) + (Array.isArray(t) ? ']' : '}');
}

/** The top-level object: its members' values may be picks from the pool. */
function writeTop(entries: readonly [string, Tree | Picks][], pool: readonly Tree[], c: Choices): string {
  const resolved: [string, Tree][] = entries.map(([k, v]) => [k, v instanceof Picks ? v.at.map((i) => pool[i % pool.length]!) : v]);
  return write(new Obj(resolved), c, pool);
}

/** The plain value of a tree, as JSON.parse would make it. */
function plain(t: Tree): unknown {
  if (t === null || typeof t !== 'object') return t;
  if (Array.isArray(t)) return t.map(plain);
  const o: Record<string, unknown> = {};
  for (const [k, v] of t.entries) o[k] = plain(v);
  return o;
}

const SPECIAL = fc.constantFrom('"', '\\', '/', '\n', '\t', '\r', '\b', '\f', '\u0000', '\u001f', '\u007f', '\u2028', 'é', '日', '😀', '\ud800', '\udfff', 'u', 'a', ' ', '{', '}', '[', ']', ',', ':');
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.string({ unit: SPECIAL, maxLength: 10 }),
);
const key = fc.oneof(text, fc.constantFrom('a', 'b', 'role', 'content', 'messages')).filter((k) => k !== '__proto__' && k !== 'constructor');
const number = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e21, 5e-324, 0.1));
/** Small values, often equal, and unequal ones that differ in one byte only ("1" and "2", "10" and "11"). */
const small = fc.oneof(fc.integer({ min: -3, max: 12 }), fc.constantFrom('a', 'b', '', true, false, null));
const leaf: fc.Arbitrary<Tree> = fc.oneof(fc.constant(null), fc.boolean(), number, text, small);
const { tree } = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('tree'), { maxLength: 4 }),
    fc.array(fc.tuple(key, tie('tree')), { maxLength: 4 }).map((e) => new Obj(e)),
  ),
}));

/** Top-level keys: a few names repeat (JSON.parse keeps the last value of a repeated key), others are any text. */
const topKey = fc.oneof({ weight: 3, arbitrary: fc.constantFrom('messages', 'input', 'tools', 'model', 'system', 'm\\u') }, { weight: 1, arbitrary: key });
/** Names every object inherits: for JSON they are members like any other. */
const inheritedKey = fc.constantFrom('toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf');
const topValue = fc.oneof(tree, fc.array(tree, { maxLength: 5 }), fc.array(fc.nat(), { maxLength: 6 }).map((at) => new Picks(at)));

interface Received {
  text: string;
  bytes: Buffer;
  value: Record<string, unknown>;
  rj: ReceivedJson;
}

function receivedWith(keys: fc.Arbitrary<string>): fc.Arbitrary<Received> {
  return fc
    .record({
      pool: fc.array(tree, { minLength: 1, maxLength: 4 }),
      entries: fc.array(fc.tuple(keys, topValue), { maxLength: 6 }),
      choices: fc.array(fc.nat(), { maxLength: 64 }),
      bom: fc.boolean(),
    })
    .map(({ pool, entries, choices, bom }): Received => {
      const c = new Choices(choices);
      const text = ws(c) + writeTop(entries, pool, c) + ws(c);
      const bytes = Buffer.from(bom ? `\ufeff${text}` : text);
      const value = JSON.parse(text) as Record<string, unknown>;
      return { text, bytes, value, rj: ReceivedJson.of(bytes, value) };
    });
}
const received = receivedWith(topKey);

const parseSpan = (bytes: Buffer, s: Span) => JSON.parse(bytes.subarray(s.start, s.end).toString('utf8')) as unknown;

/** Edits of the top-level members: replacements (JSON values), removals (undefined), of present keys or new ones. */
const edits = fc.array(fc.tuple(fc.oneof(fc.nat().map((i) => ({ at: i })), topKey.map((k) => ({ name: k }))), fc.option(tree, { nil: undefined })), { maxLength: 5 });

function editsFor(value: Record<string, unknown>, spec: readonly [{ at: number } | { name: string }, Tree | undefined][]): Record<string, unknown> {
  const keys = Object.keys(value);
  const out: Record<string, unknown> = {};
  for (const [which, v] of spec) {
    const name = 'at' in which ? (keys.length === 0 ? 'new' : keys[which.at % keys.length]!) : which.name;
    // Through JSON, so that what the edit holds is what its serialisation holds (-0 is written 0).
    out[name] = v === undefined ? undefined : JSON.parse(JSON.stringify(plain(v)));
  }
  return out;
}

function edited(value: Record<string, unknown>, e: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...value };
  for (const k in e) {
    if (e[k] === undefined) delete out[k];
    else out[k] = e[k];
  }
  return out;
}

const RUNS = 400;

describe('ReceivedJson', () => {
  it('spans of members and of array elements hold the bytes of the parsed values', () => {
    fc.assert(
      fc.property(received, ({ bytes, value, rj }) => {
        for (const k of Object.keys(value)) {
          const span = rj.memberSpan(k);
          expect(span).not.toBeNull();
          expect(parseSpan(bytes, span!)).toEqual(value[k]);
          const member = value[k];
          const spans = rj.elements(k);
          const digests = rj.elementDigests(k);
          if (!Array.isArray(member)) {
            expect(spans).toBeNull();
            expect(digests).toBeNull();
            continue;
          }
          expect(spans).not.toBeNull();
          expect(spans!.length).toBe(member.length);
          expect(digests!.length).toBe(member.length);
          spans!.forEach((s, i) => {
            expect(parseSpan(bytes, s)).toEqual(member[i]);
            // A span is the value and nothing else: no whitespace around it.
            expect(bytes.subarray(s.start, s.end).toString('utf8')).toBe(bytes.subarray(s.start, s.end).toString('utf8').trim());
          });
        }
        const absent = 'no such member \u0000';
        expect(rj.memberSpan(absent)).toBeNull();
        expect(rj.memberDigest(absent)).toBeNull();
        expect(rj.elements(absent)).toBeNull();
      }),
      { numRuns: RUNS },
    );
  });

  it('equal parts give equal digests, different parts different digests (an array by its elements bytes)', () => {
    fc.assert(
      fc.property(received, ({ bytes, value, rj }) => {
        const parts: { identity: string; digest: string }[] = [];
        const raw = (s: Span) => `bytes ${bytes.subarray(s.start, s.end).toString('hex')}`;
        for (const k of Object.keys(value)) {
          const spans = rj.elements(k);
          const identity = spans === null ? raw(rj.memberSpan(k)!) : `elements ${JSON.stringify(spans.map(raw))}`;
          parts.push({ identity, digest: rj.memberDigest(k)! });
          if (spans === null) continue;
          const digests = rj.elementDigests(k)!;
          spans.forEach((s, i) => parts.push({ identity: raw(s), digest: digests[i]! }));
        }
        for (const a of parts) for (const b of parts) expect(a.digest === b.digest).toBe(a.identity === b.identity);
      }),
      { numRuns: RUNS },
    );
  });

  it('digests depend on the bytes of the part, not on where it sits', () => {
    fc.assert(
      fc.property(fc.array(tree, { minLength: 1, maxLength: 5 }), fc.array(tree, { maxLength: 3 }), fc.array(fc.nat(), { maxLength: 32 }), (conversation, added, choices) => {
        // An agent's next step: the same elements (same bytes), more members before, more elements after.
        const c = new Choices(choices);
        const elements = conversation.map((t) => write(t, c, []));
        const step1 = `{"messages":[${elements.join(',')}]}`;
        const step2 = `{"model":"m",\n "messages": [ ${[...elements, ...added.map((t) => write(t, c, []))].join(' ,\t')} ] }`;
        const one = ReceivedJson.of(Buffer.from(step1), JSON.parse(step1) as Record<string, unknown>);
        const two = ReceivedJson.of(Buffer.from(step2), JSON.parse(step2) as Record<string, unknown>);
        expect(two.elementDigests('messages')!.slice(0, elements.length)).toEqual(one.elementDigests('messages'));
      }),
      { numRuns: 200 },
    );
  });

  it('withMembers gives bytes that parse to the value with the edits applied, other members as received', () => {
    fc.assert(
      fc.property(received, edits, ({ bytes, value, rj }, spec) => {
        const e = editsFor(value, spec);
        const expected = edited(value, e);
        const out = rj.withMembers(e);
        expect(out).not.toBeNull();
        expect(JSON.parse(out!.toString('utf8'))).toEqual(expected);
        for (const k of Object.keys(value)) {
          if (k in e) continue;
          const span = rj.memberSpan(k)!;
          expect(out!.includes(bytes.subarray(span.start, span.end))).toBe(true);
        }
        // The free function: the bytes when the body is the registered one...
        const free = withMembers(value, e);
        expect(Buffer.isBuffer(free)).toBe(true);
        expect((free as Buffer).equals(out!)).toBe(true);
        // ...and the serialisation of the edited copy for any other object, which is never registered.
        const copy = structuredClone(value);
        expect(receivedJsonOf(copy)).toBeUndefined();
        expect(receivedJsonOf({ ...value })).toBeUndefined();
        expect(receivedJsonOf(value)).toBe(rj);
        const fallback = withMembers(copy, e);
        expect(fallback).toEqual(stringifyBody(edited(copy, e)));
        // (JSON.stringify writes -0 as 0.)
        expect(JSON.parse(fallback.toString('utf8'))).toEqual(JSON.parse(JSON.stringify(expected)));
      }),
      { numRuns: RUNS },
    );
  });

  it('members named like inherited properties (toString, valueOf) are kept or edited like any other', () => {
    fc.assert(
      fc.property(receivedWith(fc.oneof(topKey, inheritedKey)), edits, ({ value, rj }, spec) => {
        const e = editsFor(value, spec);
        let out: Buffer | null = null;
        expect(() => (out = rj.withMembers(e))).not.toThrow();
        expect(JSON.parse(out!.toString('utf8'))).toEqual(edited(value, e));
        expect(JSON.parse(String(withMembers(value, e)))).toEqual(edited(value, e));
      }),
      { numRuns: 200 },
    );
  });

  it('a repeated top-level key reads as its last value, as JSON.parse has it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(tree, { maxLength: 4 }), { minLength: 2, maxLength: 4 }),
        fc.array(fc.tuple(key.filter((k) => k !== 'messages'), tree), { maxLength: 3 }),
        fc.array(fc.nat(), { maxLength: 32 }),
        edits,
        (versions, others, choices, spec) => {
          const c = new Choices(choices);
          const entries: [string, Tree][] = [];
          versions.forEach((v, i) => {
            entries.push(['messages', v]);
            if (others[i] !== undefined) entries.push(others[i]!);
          });
          const text = write(new Obj(entries), c, []);
          const bytes = Buffer.from(text);
          const value = JSON.parse(text) as Record<string, unknown>;
          const rj = ReceivedJson.of(bytes, value);
          const last = value.messages;
          expect((last as unknown[]).length).toBe(versions[versions.length - 1]!.length);
          expect(parseSpan(bytes, rj.memberSpan('messages')!)).toEqual(last);
          expect(rj.elements('messages')!.map((s) => parseSpan(bytes, s))).toEqual(last);
          const e = editsFor(value, spec);
          const out = rj.withMembers(e)!;
          expect(JSON.parse(out.toString('utf8'))).toEqual(edited(value, e));
          // Each key once in the output.
          expect(Object.keys(JSON.parse(out.toString('utf8')) as object).length).toBe(Object.keys(edited(value, e)).length);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('bytes that are not one object are not used: the free withMembers serialises', () => {
    fc.assert(
      fc.property(received, fc.constantFrom(' x', ',', '{}', ']', '"'), edits, ({ text, value }, junk, spec) => {
        const copy = structuredClone(value);
        const rj = ReceivedJson.of(Buffer.from(text + junk), copy);
        const e = editsFor(copy, spec);
        expect(rj.withMembers(e)).toBeNull();
        expect(rj.elements('messages')).toBeNull();
        expect(withMembers(copy, e)).toEqual(stringifyBody(edited(copy, e)));
      }),
      { numRuns: 100 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------------
// asciiJsonText and parseReceivedJson
// ---------------------------------------------------------------------------------------------------------------------

const outcome = (f: () => unknown) => {
  try {
    return { value: f() };
  } catch (e) {
    return { error: (e as Error).name };
  }
};

/** What the escaped text parses to (or the UTF-8 text when there is none) beside what the UTF-8 text parses to. */
function expectSameParse(b: Buffer): void {
  const escaped = asciiJsonText(b);
  if (escaped !== null) {
    // eslint-disable-next-line no-control-regex
    expect(/^[\x00-\x7f]*$/.test(escaped)).toBe(true);
  }
  const got = outcome(() => JSON.parse(escaped ?? b.toString('utf8')));
  const want = outcome(() => JSON.parse(b.toString('utf8')));
  expect(got, `bytes ${b.toString('hex')}`).toEqual(want);
  if ('error' in want) expect(want.error).toBe('SyntaxError');
}

/** Byte fragments of JSON-ish text: tokens, escapes, UTF-8 of characters outside ASCII, and invalid UTF-8. */
const fragment = fc.oneof(
  fc.constantFrom('{', '}', '[', ']', ':', ',', '"', '\\', 'u', '00e9', 'n', 'true', '1', '-', 'e', ' ', '\n', 'a').map((s) => Buffer.from(s)),
  fc.constantFrom('é', '日', '😀', '\u2028', '\u00a0', '\ufeff', '\ufffd').map((s) => Buffer.from(s)),
  fc.constantFrom([0x80], [0xff], [0xc3], [0xe6, 0x97], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf0, 0x9f, 0x98], [0xf4, 0x90, 0x80, 0x80]).map((a) => Buffer.from(a)),
  fc.uint8Array({ maxLength: 3 }).map((a) => Buffer.from(a)),
);
const fragments = fc.array(fragment, { maxLength: 12 }).map((fs) => Buffer.concat(fs));
/** The same inside a string member, where characters outside ASCII belong. */
const inString = fragments.map((f) => Buffer.concat([Buffer.from('{"a":"'), f, Buffer.from('"}')]));

describe('asciiJsonText', () => {
  it('parses as the UTF-8 text parses, or throws where it throws: any bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (a) => expectSameParse(Buffer.from(a))), { numRuns: 500 });
  });

  it('parses as the UTF-8 text parses, or throws where it throws: JSON-like bytes with characters outside ASCII', () => {
    fc.assert(fc.property(fc.oneof(fragments, inString), expectSameParse), { numRuns: 3000 });
  });

  it('parses as the UTF-8 text parses: valid UTF-8 of any code points in JSON strings', () => {
    const texts = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: fc.constantFrom('é', '😀', '日', 'a', '"', '\\', '\n'), maxLength: 200 }),
    );
    fc.assert(
      fc.property(fc.array(texts, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 32 }), (strings, choices) => {
        const c = new Choices(choices);
        // Raw (JSON.stringify leaves characters outside ASCII as they are) and with random escapes.
        expectSameParse(Buffer.from(JSON.stringify({ s: strings })));
        expectSameParse(Buffer.from(write(new Obj(strings.map((s, i) => [s, strings[strings.length - 1 - i]!])), c, [])));
      }),
      { numRuns: 500 },
    );
  });

  it('gives up (null) on long texts mostly outside ASCII, and the caller decodes', () => {
    const b = Buffer.from(JSON.stringify({ s: 'é'.repeat(1000) }));
    expect(asciiJsonText(b)).toBeNull();
    const ascii = Buffer.from('{"s":"plain"}');
    expect(asciiJsonText(ascii)).toBe('{"s":"plain"}');
  });
});

describe('parseReceivedJson', () => {
  it('parses texts of generated values as JSON.parse does, registering object bodies with their bytes unless a key repeats', () => {
    fc.assert(
      fc.property(fc.oneof(tree.map((t) => ({ t })), received.map((r) => ({ text: r.text }))), fc.array(fc.nat(), { maxLength: 32 }), (g, choices) => {
        const unpadded = 'text' in g ? g.text : write(g.t, new Choices(choices), []);
        // Small bodies are parsed as text and never registered; leading whitespace takes each text both ways.
        for (const text of [unpadded, ' '.repeat(2048) + unpadded]) {
          const bytes = Buffer.from(text);
          const value = parseReceivedJson(bytes);
          expect(value).toEqual(JSON.parse(text));
          if (typeof value === 'object' && value !== null && !Array.isArray(value) && bytes.length >= 2048 && !repeatsKey(text)) {
            expect(receivedJsonOf(value)?.bytes).toBe(bytes);
          } else if (typeof value === 'object' && value !== null) {
            expect(receivedJsonOf(value)).toBeUndefined();
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('parses bodies of MIN_BODY_BYTES or more part by part as JSON.parse does, with parts kept from earlier bodies', () => {
    const long = fc.string({ unit: SPECIAL, minLength: 1_100, maxLength: 1_300 });
    fc.assert(
      fc.property(received, long, fc.nat(), (r, filler, at) => {
        // The generated text, its first member behind 4 KB of whitespace, and with a member large enough to be kept whole.
        const open = r.text.indexOf('{');
        const padded = `${r.text.slice(0, open + 1)}${' '.repeat(4_096)}${r.text.slice(open + 1)}`;
        const withLarge = r.text.slice(open + 1).trim() === '}'
          ? `${r.text.slice(0, open + 1)}"big":${JSON.stringify(filler)}${' '.repeat(3_000)}}`
          : `${r.text.slice(0, open + 1)}${JSON.stringify(`k${at}`)}:${JSON.stringify({ filler })},${' '.repeat(3_000)}${r.text.slice(open + 1)}`;
        for (const text of [padded, withLarge]) {
          const bytes = Buffer.from(text);
          expect(bytes.length).toBeGreaterThanOrEqual(MIN_BODY_BYTES);
          // Three times: the second time the parts are kept, the third they are taken as kept.
          for (let round = 0; round < 3; round++) {
            const value = parseReceivedJson(bytes) as Record<string, unknown>;
            expect(value).toEqual(JSON.parse(text));
            // Bytes that repeat a key somewhere are not forwarded as received (an upstream may read either value).
            expect(receivedJsonOf(value)?.bytes).toBe(repeatsKey(text) ? undefined : bytes);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('shares a part between bodies that send the same bytes, frozen all the way down', () => {
    const message = { role: 'user', content: [{ type: 'text', text: 'x'.repeat(5_000) }] };
    const first = parseReceivedJson(Buffer.from(JSON.stringify({ model: 'first', messages: [message] }))) as { messages: unknown[] };
    // Sent once, a part is parsed and not kept; the second time it is kept, and from then on shared.
    expect(Object.isFrozen(first.messages[0])).toBe(false);
    const a = parseReceivedJson(Buffer.from(JSON.stringify({ model: 'a', messages: [message] }))) as { messages: unknown[] };
    const b = parseReceivedJson(Buffer.from(JSON.stringify({ model: 'b', messages: [message, { role: 'assistant', content: 'ok' }] }))) as { messages: unknown[] };
    expect(b.messages[0]).toBe(a.messages[0]);
    expect(a.messages[0]).not.toBe(first.messages[0]);
    expect(b.messages).not.toBe(a.messages);
    const content = (a.messages[0] as typeof message).content;
    expect(Object.isFrozen(a.messages[0]) && Object.isFrozen(content) && Object.isFrozen(content[0])).toBe(true);
    expect(() => {
      content[0]!.text = 'changed';
    }).toThrow(TypeError);
    // The body and its arrays are the request's own.
    expect(Object.isFrozen(a) || Object.isFrozen(a.messages)).toBe(false);
  });

  it('parses large JSON-like bytes as JSON.parse of their UTF-8 text does, or throws where it throws, in every kind of part', () => {
    const big = '"' + 'y'.repeat(1_200) + '"';
    const shapes: Array<(b: Buffer) => Array<string | Buffer>> = [
      (b) => ['{"messages":[', b, '],"system":', big, '}'],
      (b) => ['{"input":[{"a":1},', b, ']', ' '.repeat(4_096), '}'],
      (b) => ['{"system":[', big, ',', b, '],"tools":[]}'],
      (b) => ['{', b, ':1,"tools":[', big, ']}'],
      (b) => ['{"', b, '":1,"messages":[', big, ']}'],
      // A repeated key: its earlier value must be JSON too.
      (b) => ['{"stream":', b, ',"messages":[', big, '],"stream":true}'],
      (b) => ['{"model":', b, ',"messages":[', big, ',', big, ',', big, ',', big, ']}'],
    ];
    fc.assert(
      fc.property(fc.oneof(fragments, inString), fc.nat(shapes.length - 1), (b, which) => {
        const bytes = Buffer.concat(shapes[which]!(b).map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
        // Whitespace before the body, or before its closing brace (then its parts are few of its bytes: parsed by parts).
        const ahead = Buffer.concat([Buffer.alloc(MIN_BODY_BYTES, 0x20), bytes]);
        const within = Buffer.concat([bytes.subarray(0, -1), Buffer.alloc(MIN_BODY_BYTES, 0x20), bytes.subarray(-1)]);
        for (const padded of [ahead, within]) {
          expect(outcome(() => parseReceivedJson(padded)), `bytes ${b.toString('hex')} in shape ${which}`).toEqual(outcome(() => JSON.parse(padded.toString('utf8'))));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('parses JSON-like bytes as JSON.parse of their UTF-8 text does, or throws where it throws', () => {
    fc.assert(
      fc.property(fc.oneof(fragments, inString, fc.uint8Array({ maxLength: 32 }).map((a) => Buffer.from(a))), (b) => {
        // A byte order mark is skipped on purpose (JSON.parse refuses it): bodies with one are compared elsewhere.
        fc.pre(!(b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf));
        expect(outcome(() => parseReceivedJson(b)), `bytes ${b.toString('hex')}`).toEqual(outcome(() => JSON.parse(b.toString('utf8'))));
        // The same bytes past the size under which bodies are parsed as text.
        const large = Buffer.concat([Buffer.alloc(2048, 0x20), b]);
        expect(outcome(() => parseReceivedJson(large)), `bytes ${b.toString('hex')} after 2,048 spaces`).toEqual(outcome(() => JSON.parse(large.toString('utf8'))));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('known members', () => {
  /** What a body's scan gives for a member: its span's bytes, digest, element spans and element digests. */
  const facts = (rj: ReceivedJson, bytes: Buffer, k: string) => {
    const span = rj.memberSpan(k);
    return {
      bytes: span && bytes.subarray(span.start, span.end).toString('hex'),
      digest: rj.memberDigest(k),
      elements: rj.elements(k)?.map((s) => bytes.subarray(s.start, s.end).toString('hex')) ?? null,
      elementDigests: rj.elementDigests(k),
    };
  };

  it('a member sent again with the same bytes is recognised, and gives what scanning it afresh gives', () => {
    const long = fc.string({ unit: SPECIAL, minLength: 1_500, maxLength: 2_500 });
    fc.assert(
      fc.property(fc.array(fc.tuple(long, tree), { minLength: 2, maxLength: 4 }), received, fc.array(fc.nat(), { maxLength: 32 }), fc.nat(3), (tools, other, choices, cut) => {
        const c = new Choices(choices);
        const list = `[${tools.map(([d, t]) => write(new Obj([['description', d], ['schema', t]]), c, [])).join(`${ws(c)},${ws(c)}`)}]`;
        // A lookalike: the same list but for its last bytes.
        const lookalike = `${list.slice(0, list.length - 2 - cut)}${list.slice(list.length - 2 - cut, -1).replace(/./g, (ch) => (ch === '}' || ch === '"' || ch === ']' ? ch : ' '))}]`;
        const open = other.text.indexOf('{');
        const rest = other.text.slice(open + 1).trim() === '}' ? '}' : `,${other.text.slice(open + 1)}`;
        const body = (tail: string, value: string) => Buffer.from(`${ws(c)}{ "model":"m${tail}",${ws(c)}"tools" :${ws(c)}${value}${ws(c)}${rest}`);
        const bodies = [body('1', list), body('2', list), body('3', list), body('4', lookalike), body('5', list)];
        const seen: ReturnType<typeof facts>[][] = [];
        for (const bytes of bodies) {
          let text: string;
          try {
            text = bytes.toString('utf8');
            JSON.parse(text);
          } catch {
            return; // the lookalike is not always JSON
          }
          const value = parseReceivedJson(bytes) as Record<string, unknown>;
          expect(value).toEqual(JSON.parse(text));
          if (repeatsKey(text)) return; // not registered with its bytes
          const rj = receivedJsonOf(value)!;
          seen.push(Object.keys(value).map((k) => facts(rj, bytes, k)));
        }
        // The same bodies scanned with nothing known.
        forgetKnownMembers();
        bodies.forEach((bytes, i) => {
          const rj = ReceivedJson.of(bytes, JSON.parse(bytes.toString('utf8')) as Record<string, unknown>);
          forgetKnownMembers();
          expect(Object.keys(JSON.parse(bytes.toString('utf8')) as object).map((k) => facts(rj, bytes, k)), `body ${i}`).toEqual(seen[i]);
        });
      }),
      { numRuns: 150 },
    );
  });
});
