import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseReceivedJson } from './parse-received.js';
import { clearPartCache, ofMember, perElement } from './part-cache.js';
import { receivedJsonOf } from './received-json.js';
import { Choices, writeJson } from '../test-support/json-text.js';

type Json = Record<string, unknown>;

/** Makes a body large enough for its parts to be looked up. */
const PADDING = 'p'.repeat(4096);

/** A canonical form of a JSON value (keys sorted): a function of the value alone, whatever its bytes. */
function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((v as Json)[k])}`)
    .join(',')}}`;
}

const text = fc.oneof(fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('a b', 'a\n b', '"q"', '\\', '😀', 'é'));
/** Bodies with `__proto__` or `constructor` keys are refused by parseReceivedJson. */
const safe = <T>(a: fc.Arbitrary<T>) => a.filter((v) => !/"(__proto__|constructor)":/.test(JSON.stringify(v) ?? ''));
const element = fc.oneof(
  safe(fc.jsonValue({ maxDepth: 2 })),
  fc.record({ role: fc.constantFrom('user', 'assistant'), content: text }),
  fc.record({ role: fc.constant('user'), content: fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 2 }) }),
);

type Step = { kind: 'append'; items: unknown[] } | { kind: 'edit'; at: number; item: unknown } | { kind: 'resend' } | { kind: 'reformat' };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.array(element, { minLength: 1, maxLength: 3 }).map((items) => ({ kind: 'append' as const, items })) },
  { weight: 1, arbitrary: fc.tuple(fc.nat(), element).map(([at, item]) => ({ kind: 'edit' as const, at, item })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'resend' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reformat' as const }) },
);

/** A run of an agent: its conversation at each step, and how each step's body is written. */
const run = fc.record({
  first: fc.array(element, { maxLength: 4 }),
  steps: fc.array(step, { minLength: 1, maxLength: 6 }),
  tools: fc.option(fc.array(safe(fc.jsonValue({ maxDepth: 2 })), { maxLength: 3 }), { nil: undefined }),
  choices: fc.array(fc.nat(), { maxLength: 48 }),
});

interface Sent {
  body: Json;
  /** The bytes of each element of `messages`, as received. */
  elementBytes: string[];
}

function bodies(r: { first: unknown[]; steps: Step[]; tools: unknown[] | undefined; choices: number[] }): Sent[] {
  let conversation = r.first;
  let choices = r.choices;
  const out: Sent[] = [];
  const send = () => {
    const c = new Choices(choices);
    // Large enough for its parts to be looked up (smaller bodies are computed afresh).
    const value: Json = { model: 'm', messages: conversation, padding: PADDING };
    if (r.tools !== undefined) value.tools = r.tools;
    const body = parseReceivedJson(Buffer.from(writeJson(value, c))) as Json;
    const rj = receivedJsonOf(body)!;
    expect(rj).toBeDefined();
    const spans = rj.elements('messages')!;
    out.push({ body, elementBytes: spans.map((s) => rj.bytes.toString('latin1', s.start, s.end)) });
  };
  send();
  for (const s of r.steps) {
    if (s.kind === 'append') conversation = [...conversation, ...s.items];
    else if (s.kind === 'edit' && conversation.length > 0) conversation = conversation.map((m, i) => (i === s.at % conversation.length ? s.item : m));
    // The same conversation written with other whitespace: other bytes for the same values.
    else if (s.kind === 'reformat') choices = choices.map((x) => x + 1);
    send();
  }
  return out;
}

describe('perElement and ofMember', () => {
  it('give what computing afresh gives, at every step of an agent, and compute only elements with new bytes', () => {
    fc.assert(
      fc.property(run, (r) => {
        clearPartCache();
        const seen = new Set<string>();
        for (const { body, elementBytes } of bodies(r)) {
          const messages = body.messages as unknown[];
          let computed = 0;
          const got = perElement(body, 'messages', 'canonical', (e) => {
            computed++;
            return canonical(e);
          });
          expect(got).toEqual(messages.map(canonical));
          // Work in proportion to what is new: one computation per element whose bytes no earlier step sent.
          const fresh = new Set(elementBytes.filter((b) => !seen.has(b)));
          expect(computed).toBe(fresh.size);
          for (const b of elementBytes) seen.add(b);
          // A copy is never registered: always computed, and the same.
          let copies = 0;
          const copy = structuredClone(body);
          expect(
            perElement(copy, 'messages', 'canonical', (e) => {
              copies++;
              return canonical(e);
            }),
          ).toEqual(got);
          expect(copies).toBe(messages.length);
          // Another fact about the same parts is computed for itself, not taken from the first one.
          expect(perElement(body, 'messages', 'length', (e) => canonical(e).length)).toEqual(messages.map((e) => canonical(e).length));
          // A member.
          const tools = ofMember(body, 'tools', 'canonical member', (t) => canonical(t ?? null));
          expect(tools).toBe(canonical(body.tools ?? null));
          expect(ofMember(copy, 'tools', 'canonical member', (t) => canonical(t ?? null))).toBe(tools);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('after clearPartCache, everything is computed again, to the same values', () => {
    fc.assert(
      fc.property(run, (r) => {
        clearPartCache();
        const sent = bodies(r);
        const first = sent.map(({ body }) => perElement(body, 'messages', 'canonical', canonical));
        clearPartCache();
        sent.forEach(({ body }, i) => {
          let computed = 0;
          const again = perElement(body, 'messages', 'canonical', (e) => {
            computed++;
            return canonical(e);
          });
          expect(again).toEqual(first[i]);
          if (i === 0) expect(computed).toBe(new Set(sent[0]!.elementBytes).size);
        });
      }),
      { numRuns: 100 },
    );
  });

  it('elements with equal values but other bytes each get the value fresh computation gives', () => {
    // Values that JSON writes in several ways: the fact must not be taken from an element whose bytes differ.
    const spelled = fc.constantFrom<[string, unknown]>(['1', 1], ['1.0', 1], ['1e0', 1], ['"a"', 'a'], ['"\\u0061"', 'a'], ['{"x":1,"x":2}', { x: 2 }], ['{"x":2}', { x: 2 }], ['[ ]', []], ['[]', []], ['"\\/"', '/']);
    fc.assert(
      fc.property(fc.array(spelled, { maxLength: 8 }), (items) => {
        clearPartCache();
        const body = parseReceivedJson(Buffer.from(`{"messages":[${items.map(([t]) => t).join(',')}],"padding":"${PADDING}"}`)) as Json;
        expect(perElement(body, 'messages', 'canonical', canonical)).toEqual(items.map(([, v]) => canonical(v)));
      }),
      { numRuns: 100 },
    );
  });

  it('a missing or non-array member', () => {
    const body = parseReceivedJson(Buffer.from('{"messages":"hi","system":[1]}')) as Json;
    expect(perElement(body, 'messages', 'canonical', canonical)).toEqual([]);
    expect(perElement(body, 'input', 'canonical', canonical)).toEqual([]);
    expect(ofMember(body, 'messages', 'canonical', canonical)).toBe('"hi"');
    expect(ofMember(body, 'input', 'canonical', (v) => v)).toBeUndefined();
    expect(perElement(body, 'system', 'canonical', canonical)).toEqual(['1']);
  });
});
