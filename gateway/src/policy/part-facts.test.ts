import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PromptRequest, membersBesides, promptTokensUpperBound } from '../accounting/tokens.js';
import { PII_TYPES, type PiiPart, type PiiType } from '../contract/policies.js';
import { chatPolicyView } from '../data-plane/dialects/chat-completions/chat-policy-view.js';
import { messagesPolicyView } from '../data-plane/dialects/messages/messages-policy-view.js';
import { responsesPolicyView } from '../data-plane/dialects/responses/responses-policy-view.js';
import { parseReceivedJson } from '../json/parse-received.js';
import { clearPartCache, partsLookedUp } from '../json/part-cache.js';
import { receivedJsonOf } from '../json/received-json.js';
import { Choices, writeJson } from '../test-support/json-text.js';
import { EVERY_PART, type PiiScope } from './pii/request-texts.js';
import { redactRequestPii, scanRequestPii, type TextWalker } from './pii/scan-request.js';
import type { PolicyView } from './policy-view.js';
import { normalisedRequestHash } from './retry-block.js';

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------------------------------
// Generated agent conversations in the three dialects.
// ---------------------------------------------------------------------------------------------------------------------

const word = fc.constantFrom(
  'hello',
  'the',
  'build',
  'src/index.ts',
  'naïve',
  '日本語',
  '😀',
  'a"quote',
  'back\\slash',
  '{"json":true}',
  'someone@example.com',
  '4111 1111 1111 1111',
  'x',
  'run',
  'tests',
);
const space = fc.constantFrom(' ', ' ', ' ', '  ', '\n', '\t', ' \n ', '\u00a0', '\r\n');
const text = fc.array(fc.tuple(word, space), { minLength: 1, maxLength: 16 }).map((parts) => parts.map(([w, s]) => w + s).join(''));
const id = fc.constantFrom('call_1', 'call_2', 'toolu_01', 'fc_9');
const toolName = fc.constantFrom('read_file', 'search', 'send_mail');
const args = fc.dictionary(fc.constantFrom('path', 'query', 'to', 'body'), text, { maxKeys: 3 }).map((o) => JSON.stringify(o));
const schema = fc.constant({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] });

// Chat Completions.
const chatToolCall = fc.record({ id, type: fc.constant('function'), function: fc.record({ name: toolName, arguments: args }) });
const chatPart = fc.oneof(
  { weight: 3, arbitrary: fc.record({ type: fc.constant('text'), text }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('image_url'), image_url: fc.record({ url: fc.constant('https://img.example.com/a.png') }) }) },
);
const chatMessage: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ role: fc.constant('user'), content: fc.oneof(text, fc.array(chatPart, { minLength: 1, maxLength: 3 })) }),
  fc.record({ role: fc.constant('user'), name: fc.constantFrom('bob', 'someone@example.com'), content: text }),
  fc.record({ role: fc.constantFrom('system', 'developer'), content: text }),
  fc.record({ role: fc.constant('assistant'), content: fc.option(text, { nil: null }), tool_calls: fc.array(chatToolCall, { minLength: 1, maxLength: 2 }) }),
  fc.record({ role: fc.constant('assistant'), content: text }),
  fc.record({ role: fc.constant('tool'), tool_call_id: id, content: text }),
);
const chatTools = fc.array(fc.record({ type: fc.constant('function'), function: fc.record({ name: toolName, description: text, parameters: schema }) }), { maxLength: 2 });

// Anthropic Messages.
const anthropicBlock = fc.oneof(
  { weight: 3, arbitrary: fc.record({ type: fc.constant('text'), text }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('tool_use'), id, name: toolName, input: fc.dictionary(fc.constantFrom('path', 'query', 'n'), fc.oneof(text, fc.integer(), fc.array(text, { maxLength: 2 })), { maxKeys: 3 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('tool_result'), tool_use_id: id, content: fc.oneof(text, fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 2 })) }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('image'), source: fc.constant({ type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('thinking'), thinking: text, signature: fc.constant('c2lnbmVk') }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('document'), source: fc.record({ type: fc.constant('text'), media_type: fc.constant('text/plain'), data: text }) }) },
);
const anthropicMessage: fc.Arbitrary<Json> = fc.record({ role: fc.constantFrom('user', 'assistant'), content: fc.oneof(text, fc.array(anthropicBlock, { minLength: 1, maxLength: 3 })) });
const anthropicTools = fc.array(fc.record({ name: toolName, description: text, input_schema: schema }), { maxLength: 2 });
const anthropicSystem = fc.option(fc.oneof(text, fc.array(fc.record({ type: fc.constant('text'), text }), { minLength: 1, maxLength: 2 })), { nil: undefined });

// OpenAI Responses.
const responsesItem: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ role: fc.constantFrom('user', 'system', 'developer'), content: text }),
  fc.record({ type: fc.constant('message'), role: fc.constant('user'), content: fc.array(fc.oneof(fc.record({ type: fc.constant('input_text'), text }), fc.record({ type: fc.constant('input_image'), image_url: fc.constant('https://img.example.com/b.png') })), { minLength: 1, maxLength: 2 }) }),
  fc.record({ type: fc.constant('message'), role: fc.constant('assistant'), content: fc.array(fc.record({ type: fc.constant('output_text'), text }), { minLength: 1, maxLength: 2 }) }),
  fc.record({ type: fc.constant('function_call'), call_id: id, name: toolName, arguments: args }),
  fc.record({ type: fc.constant('function_call_output'), call_id: id, output: text }),
  fc.record({ type: fc.constant('reasoning'), id: fc.constant('rs_1'), summary: fc.array(fc.record({ type: fc.constant('summary_text'), text }), { maxLength: 1 }) }),
);
const responsesTools = fc.array(fc.record({ type: fc.constant('function'), name: toolName, description: text, parameters: schema }), { maxLength: 2 });

interface Dialect {
  name: string;
  view: PolicyView;
  /** The conversation member. */
  member: string;
  message: fc.Arbitrary<Json>;
  /** The rest of a body (model, tools, system prompt...), the conversation aside. */
  rest: fc.Arbitrary<Json>;
  /** The bound computed without looked-up parts: a reference independent of part-facts.ts. */
  bound(body: Json): number;
}

const model = fc.constantFrom('gpt-4o', 'openai/gpt-4o-mini', 'claude-sonnet-4');
const strip = (o: Json): Json => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const DIALECTS: Dialect[] = [
  {
    name: 'chat completions',
    view: chatPolicyView,
    member: 'messages',
    message: chatMessage,
    rest: fc.record({ model, tools: fc.option(chatTools, { nil: undefined }), user: fc.option(text, { nil: undefined }) }).map(strip),
    bound: (body) => promptTokensUpperBound(body as PromptRequest, { rest: membersBesides(body, new Set(['model', 'messages', 'tools', 'functions', 'response_format'])) }),
  },
  {
    name: 'messages',
    view: messagesPolicyView,
    member: 'messages',
    message: anthropicMessage,
    rest: fc
      .record({ model, max_tokens: fc.constant(1024), system: anthropicSystem, tools: fc.option(anthropicTools, { nil: undefined }), metadata: fc.option(fc.record({ user_id: text }), { nil: undefined }) })
      .map(strip),
    bound: (body) => {
      const messages = body.messages as unknown[];
      const all = body.system === undefined ? messages : [{ content: body.system }, ...messages];
      const rest = membersBesides(body, new Set(['model', 'system', 'messages', 'tools']));
      return promptTokensUpperBound({ model: body.model as string, messages: all, tools: body.tools as PromptRequest['tools'] }, { rest });
    },
  },
  {
    name: 'responses',
    view: responsesPolicyView,
    member: 'input',
    message: responsesItem,
    rest: fc
      .record({
        model,
        instructions: fc.option(text, { nil: undefined }),
        tools: fc.option(responsesTools, { nil: undefined }),
        text: fc.option(fc.constant({ format: { type: 'json_schema', name: 'answer', schema: { type: 'object' } } }), { nil: undefined }),
        user: fc.option(text, { nil: undefined }),
      })
      .map(strip),
    bound: (body) => {
      const items = body.input as unknown[];
      const all = body.instructions != null ? [{ content: body.instructions }, ...items] : items;
      const rest = membersBesides(body, new Set(['model', 'instructions', 'input', 'tools', 'text']));
      return promptTokensUpperBound({ model: body.model as string, messages: all, tools: body.tools as PromptRequest['tools'], response_format: (body.text as Json | undefined)?.format }, { rest });
    },
  },
];

// ---------------------------------------------------------------------------------------------------------------------
// Bodies as an agent sends them: random whitespace between tokens, step after step.
// ---------------------------------------------------------------------------------------------------------------------

/** The body as the gateway receives it: parsed from its bytes, and so registered with them. */
function receive(value: Json, c: Choices): Json {
  // Padded to a size whose parts are looked up (smaller bodies are computed afresh).
  const body = parseReceivedJson(Buffer.from(writeJson({ ...value, padding: 'p'.repeat(4096) }, c))) as Json;
  expect(partsLookedUp(body)).toBe(true);
  return body;
}

/** Every string of a value, deep (keys aside), through `f`. */
function mapStrings(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, f));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapStrings(x, f)]));
  return v;
}

const RUNS_OF_SPACE = [' ', '  ', '\n', '\t', '\r\n', '\u00a0', ' \n\t ', '\u2003'];
/** The same texts with each run of whitespace replaced by another run. */
const respaced = (v: unknown, c: Choices) => mapStrings(v, (s) => s.replace(/\s+/g, () => RUNS_OF_SPACE[c.next(RUNS_OF_SPACE.length)]!));
/** The form retry blocking compares: runs of whitespace as one space. */
const normalised = (v: unknown) => JSON.stringify(mapStrings(v, (s) => s.replace(/\s+/g, ' ')));

type Step =
  | { kind: 'append'; items: Json[] }
  | { kind: 'edit'; at: number; item: Json }
  | { kind: 'respace'; at: number }
  | { kind: 'resend' }
  | { kind: 'reformat' };

function steps(message: fc.Arbitrary<Json>): fc.Arbitrary<Step[]> {
  return fc.array(
    fc.oneof(
      { weight: 4, arbitrary: fc.array(message, { minLength: 1, maxLength: 3 }).map((items): Step => ({ kind: 'append', items })) },
      { weight: 1, arbitrary: fc.tuple(fc.nat(), message).map(([at, item]): Step => ({ kind: 'edit', at, item })) },
      { weight: 1, arbitrary: fc.nat().map((at): Step => ({ kind: 'respace', at })) },
      { weight: 1, arbitrary: fc.constant<Step>({ kind: 'resend' }) },
      { weight: 1, arbitrary: fc.constant<Step>({ kind: 'reformat' }) },
    ),
    { minLength: 1, maxLength: 5 },
  );
}

function agentRun(d: Dialect) {
  return fc.record({ rest: d.rest, first: fc.array(d.message, { maxLength: 4 }), steps: steps(d.message), choices: fc.array(fc.nat(), { minLength: 1, maxLength: 48 }) });
}

/** The body sent at each step of an agent's run: the conversation grows, is edited in the middle, is respaced. */
function agentBodies(d: Dialect, r: { rest: Json; first: Json[]; steps: Step[]; choices: number[] }): Json[] {
  let conversation = r.first;
  let choices = r.choices;
  const out: Json[] = [];
  const send = () => out.push(receive({ ...r.rest, [d.member]: conversation }, new Choices(choices)));
  send();
  for (const s of r.steps) {
    const at = (n: number) => n % Math.max(conversation.length, 1);
    if (s.kind === 'append') conversation = [...conversation, ...s.items];
    else if (s.kind === 'edit') conversation = conversation.map((m, i) => (i === at(s.at) ? s.item : m));
    else if (s.kind === 'respace') conversation = conversation.map((m, i) => (i === at(s.at) ? (respaced(m, new Choices([s.at, ...choices])) as Json) : m));
    else if (s.kind === 'reformat') choices = choices.map((x) => x + 7);
    send();
  }
  return out;
}

const hashOf = (view: PolicyView, body: Json) => normalisedRequestHash(view.retrySubject(body));

// ---------------------------------------------------------------------------------------------------------------------

describe.each(DIALECTS)('$name: facts looked up by the bytes of parts equal facts computed afresh', (d) => {
  it('prompt bound and retry hash at every step of an agent, and again after clearPartCache', () => {
    fc.assert(
      fc.property(agentRun(d), (r) => {
        const sent = agentBodies(d, r);
        const first = sent.map((body) => {
          const copy = structuredClone(body);
          expect(receivedJsonOf(copy)).toBeUndefined();
          const bound = d.view.promptTokensUpperBound(body);
          expect(bound).toBe(d.view.promptTokensUpperBound(copy));
          expect(bound).toBe(d.bound(copy));
          const hash = hashOf(d.view, body);
          expect(hash).toBe(hashOf(d.view, copy));
          // Looked up a second time, from the cache.
          expect(d.view.promptTokensUpperBound(body)).toBe(bound);
          expect(hashOf(d.view, body)).toBe(hash);
          return { bound, hash };
        });
        clearPartCache();
        // Newest first this time: the facts of a later step are computed before those of an earlier one.
        for (let i = sent.length - 1; i >= 0; i--) {
          expect(d.view.promptTokensUpperBound(sent[i]!)).toBe(first[i]!.bound);
          expect(hashOf(d.view, sent[i]!)).toBe(first[i]!.hash);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('retry: texts that differ only in runs of whitespace give one hash; a different middle message another', () => {
    fc.assert(
      fc.property(
        d.rest,
        fc.array(d.message, { minLength: 3, maxLength: 7 }),
        fc.nat(),
        d.message,
        fc.array(fc.nat(), { minLength: 1, maxLength: 32 }),
        (rest, conversation, at, replacement, choices) => {
          const c = new Choices(choices);
          const value = { ...rest, [d.member]: conversation };
          const a = receive(value, c);
          const spaced = receive(respaced(value, c) as Json, c);
          expect(hashOf(d.view, spaced)).toBe(hashOf(d.view, a));
          expect(hashOf(d.view, structuredClone(spaced))).toBe(hashOf(d.view, a));
          const middle = 1 + (at % (conversation.length - 2));
          fc.pre(normalised(replacement) !== normalised(conversation[middle]));
          const changed = receive({ ...rest, [d.member]: conversation.map((m, i) => (i === middle ? replacement : m)) }, c);
          expect(hashOf(d.view, changed)).not.toBe(hashOf(d.view, a));
          expect(hashOf(d.view, structuredClone(changed))).toBe(hashOf(d.view, changed));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('PII scan and redaction of a body as received equal those of a fresh copy, twice over', () => {
    const scopes: PiiScope[] = [EVERY_PART, new Set<PiiPart>(['user']), new Set<PiiPart>(['assistant', 'tools'])];
    const typeLists: (readonly PiiType[])[] = [PII_TYPES, ['email'], ['credit_card', 'phone']];
    // Each setting (walker, types, scope) of the same body: a fact found under one must not answer for another.
    const settings: [TextWalker, readonly PiiType[], PiiScope][] = [
      ...scopes.flatMap((scope) => typeLists.map((types): [TextWalker, readonly PiiType[], PiiScope] => [d.view.visitTexts, types, scope])),
      ...DIALECTS.filter((o) => o !== d).map((o): [TextWalker, readonly PiiType[], PiiScope] => [o.view.visitTexts, PII_TYPES, EVERY_PART]),
    ];
    fc.assert(
      fc.property(agentRun(d), (r) => {
        for (const body of agentBodies(d, r)) {
          for (const [walk, types, scope] of settings) {
            const fresh = scanRequestPii(structuredClone(body), types, walk, scope);
            expect(scanRequestPii(body, types, walk, scope)).toEqual(fresh);
            expect(scanRequestPii(body, types, walk, scope)).toEqual(fresh);
            const redacted = redactRequestPii(body, types, walk, scope);
            expect(redacted.types).toEqual(fresh);
            expect(redacted.body).toEqual(redactRequestPii(structuredClone(body), types, walk, scope).body);
            expect(receivedJsonOf(redacted.body)).toBeUndefined();
          }
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe('PII facts of a part are those of the part where it is', () => {
  // The same bytes may stand at two places a walker reads differently (a conversation element and a tool definition):
  // a fact looked up by the bytes alone must then be the one fresh computation gives for each place.
  const shared = (members: string[], pool: fc.Arbitrary<Json>) =>
    fc.record({
      pool: fc.array(pool, { minLength: 1, maxLength: 3 }),
      picks: fc.tuple(...members.map(() => fc.array(fc.nat(), { maxLength: 3 }))),
      model,
    });
  const cases: { name: string; view: PolicyView; members: string[]; pool: fc.Arbitrary<Json> }[] = [
    {
      name: 'chat completions',
      view: chatPolicyView,
      members: ['messages', 'input', 'tools'],
      pool: fc.oneof(chatMessage, fc.record({ type: fc.constant('function'), function: fc.record({ name: toolName, description: text, parameters: schema }) })),
    },
    { name: 'messages', view: messagesPolicyView, members: ['messages', 'tools'], pool: fc.oneof(anthropicMessage, fc.record({ name: toolName, description: text, input_schema: schema })) },
    { name: 'responses', view: responsesPolicyView, members: ['input', 'tools'], pool: fc.oneof(responsesItem, fc.record({ type: fc.constant('function'), name: toolName, description: text, parameters: schema })) },
  ];
  it.each(cases)('$name', ({ view, members, pool }) => {
    fc.assert(
      fc.property(shared(members, pool), ({ pool: parts, picks, model: m }) => {
        clearPartCache();
        const value: Json = { model: m };
        members.forEach((member, i) => (value[member] = picks[i]!.map((k) => parts[k % parts.length])));
        // Written without whitespace: a part has the same bytes wherever it stands.
        const body = receive(value, new Choices([0]));
        const fresh = scanRequestPii(structuredClone(body), PII_TYPES, view.visitTexts, EVERY_PART);
        expect(scanRequestPii(body, PII_TYPES, view.visitTexts, EVERY_PART)).toEqual(fresh);
      }),
      { numRuns: 150 },
    );
  });
});
