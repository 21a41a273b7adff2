// The fail-closed rule, tried as an attacker would: a PII value, or a text long enough to break a cost cap, placed
// anywhere in a valid body that an upstream's parser would read (item and block types the views have no rule for,
// members they do not name, case variants of defined keys, repeated keys inside argument strings, keys themselves, at
// depths 1-500), on every dialect and route. With `pii: block` and with the cap, the request is refused and the upstream
// receives nothing; with `redact`, what the upstream receives holds no match.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Dialect, send } from '../test-support/dialects.js';
import { type DialectGateway, startDialectGateway } from '../test-support/dialect-gateway.js';

type Json = Record<string, unknown>;

const EMAIL = 'jane.doe@example.com';
/** About 120,000 prompt tokens by the byte bound: $0.12 at $1 per million, over the $0.05 cap. */
const LONG_TEXT = 'spend '.repeat(20_000);
/** Runs per route and mode (each run is one request through the gateway). */
const RUNS = 12;

type Mode = 'block' | 'redact' | 'cap';

/** Where a value is put: `wrapped` is the value nested 1-500 levels deep (or under a key that is the value itself). */
interface Placement {
  name: string;
  /** The body with the wrapped value placed. */
  body(d: Dialect, wrapped: unknown): Json;
  /** A case variant of a defined member: refused as such (400 validation_failed). */
  caseVariant?: boolean;
}

/** The value nested `depth` levels deep in objects and arrays; as a key instead of a value when `asKey`. */
function nest(value: string, depth: number, asKey: boolean): unknown {
  let v: unknown = asKey ? { [value]: 1 } : value;
  for (let i = 1; i < depth; i++) v = i % 3 === 0 ? [v] : { [`level_${i}`]: v };
  return v;
}

/** JSON text whose key `q` is repeated: JSON.parse keeps the last value; Go merges or keeps either; the model reads both. */
const repeatedKey = (wrapped: unknown) => `{"q":${JSON.stringify(wrapped)},"q":"x"}`;

const CHAT: Placement[] = [
  { name: 'a message member no view names', body: (d, w) => ({ model: d.model, max_tokens: 64, messages: [{ role: 'user', content: 'hi', x_note: w }] }) },
  {
    name: 'a content part of an unknown type',
    body: (d, w) => ({ model: d.model, max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'x_part', x: w }] }] }),
  },
  { name: 'a top-level member no view names', body: (d, w) => ({ model: d.model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], x_extra: w }) },
  {
    name: 'tool call arguments with a repeated key',
    body: (d, w) => ({
      model: d.model,
      max_tokens: 64,
      messages: [
        { role: 'user', content: 'look it up' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: repeatedKey(w) } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
      ],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
    }),
  },
  { name: 'a case variant of content', caseVariant: true, body: (d, w) => ({ model: d.model, max_tokens: 64, messages: [{ role: 'user', content: 'hi', Content: w }] }) },
];

const userTurn = (content: unknown) => ({ role: 'user', content });

const MESSAGES: Placement[] = [
  {
    name: 'a tool_use input',
    body: (d, w) => ({
      model: d.model,
      max_tokens: 64,
      messages: [
        userTurn('look it up'),
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: w } }] },
        userTurn([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }, { type: 'text', text: 'go on' }]),
      ],
      tools: [{ name: 'lookup', input_schema: { type: 'object' } }],
    }),
  },
  { name: 'a block of an unknown type', body: (d, w) => ({ model: d.model, max_tokens: 64, messages: [userTurn([{ type: 'text', text: 'hi' }, { type: 'x_block', x: w }])] }) },
  {
    name: 'a document with content source',
    body: (d, w) => ({
      model: d.model,
      max_tokens: 64,
      messages: [userTurn([{ type: 'document', title: 'notes', source: { type: 'content', content: [{ type: 'text', text: 'a', x: w }] } }, { type: 'text', text: 'hi' }])],
    }),
  },
  {
    name: 'a search_result block',
    body: (d, w) => ({
      model: d.model,
      max_tokens: 64,
      messages: [userTurn([{ type: 'search_result', source: 'https://example.org', title: 't', content: [{ type: 'text', text: 'r' }], x: w }, { type: 'text', text: 'hi' }])],
    }),
  },
  { name: 'metadata', body: (d, w) => ({ model: d.model, max_tokens: 64, messages: [userTurn('hi')], metadata: { user_id: 'u1', x: w } }) },
  { name: 'a case variant of content', caseVariant: true, body: (d, w) => ({ model: d.model, max_tokens: 64, messages: [{ role: 'user', content: 'hi', Content: w }] }) },
];

const RESPONSES: Placement[] = [
  {
    name: 'a shell_call_output item',
    body: (d, w) => ({ model: d.model, max_output_tokens: 64, input: [userTurn('run it'), { type: 'shell_call_output', call_id: 'call_1', output: w }] }),
  },
  {
    name: 'an mcp_call item',
    body: (d, w) => ({ model: d.model, max_output_tokens: 64, input: [userTurn('hi'), { type: 'mcp_call', id: 'mcp_1', server_label: 's', name: 't', arguments: '{}', output: w }] }),
  },
  {
    name: 'function_call arguments with a repeated key',
    body: (d, w) => ({
      model: d.model,
      max_output_tokens: 64,
      input: [userTurn('look it up'), { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: repeatedKey(w) }, { type: 'function_call_output', call_id: 'call_1', output: 'ok' }],
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }],
    }),
  },
  {
    name: 'a content part of an unknown type',
    body: (d, w) => ({ model: d.model, max_output_tokens: 64, input: [userTurn([{ type: 'input_text', text: 'hi' }, { type: 'x_part', x: w }])] }),
  },
  { name: 'prompt variables', body: (d, w) => ({ model: d.model, max_output_tokens: 64, input: 'hi', prompt: { id: 'pmpt_1', variables: { v: w } } }) },
  { name: 'a case variant of content', caseVariant: true, body: (d, w) => ({ model: d.model, max_output_tokens: 64, input: [{ role: 'user', content: 'hi', Content: w }] }) },
];

const ROUTES: Array<[string, Placement[]]> = [
  ['chat completions', CHAT],
  ['messages native', MESSAGES],
  ['messages translated', MESSAGES],
  ['responses native', RESPONSES],
  ['responses translated', RESPONSES],
];

let harness: DialectGateway;
const keys: Record<Mode, string> = { block: '', redact: '', cap: '' };

beforeAll(async () => {
  harness = await startDialectGateway({ prices: { input: 1, output: 1 } });
  const { admin } = harness;
  await admin.tenant('acme');
  const everyPart = { pii_types: ['email'], pii_scope: ['user', 'assistant', 'system', 'tools'] };
  await admin.policy('fc-block', { tenant_id: 'acme', rules: { pii: 'block', ...everyPart } });
  await admin.policy('fc-redact', { tenant_id: 'acme', rules: { pii: 'redact', ...everyPart } });
  await admin.policy('fc-cap', { tenant_id: 'acme', rules: { max_cost_per_request: 0.05 } });
  for (const mode of ['block', 'redact', 'cap'] as const) keys[mode] = (await admin.agent('acme', `fc-${mode}`, `fc-${mode}`)).api_key as string;
}, 60_000);
afterAll(async () => {
  await harness?.close();
});

const route = (name: string): Dialect => harness.route(name);

describe.each(ROUTES)('%s: what the upstream reads, the checks have read', (name, placements) => {
  test.each(['block', 'redact', 'cap'] as const)('%s', async (mode) => {
    const d = route(name);
    let served = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...placements), fc.integer({ min: 1, max: 500 }), fc.boolean(), async (placement, depth, asKey) => {
        const value = mode === 'cap' ? LONG_TEXT : EMAIL;
        const body = placement.body(d, nest(value, depth, asKey));
        const before = d.upstream.count();
        const res = await send(harness.gw.url, d, body, { key: keys[mode] });
        const reached = d.upstream.count() > before;
        expect(res.status, res.text).not.toBeGreaterThanOrEqual(500);
        if (placement.caseVariant) {
          expect(res.status, res.text).toBe(400);
          expect(d.error(res.json)?.code).toBe('validation_failed');
        }
        if (mode === 'redact' && res.status === 200) {
          served++;
          expect(reached).toBe(true);
          expect(d.upstream.lastRaw()).not.toContain(EMAIL);
        } else {
          // Refused (a policy, or a translation that cannot carry the part): nothing went upstream.
          expect(res.status, res.text).toBeGreaterThanOrEqual(400);
          expect(reached, `${placement.name} at depth ${depth} reached the upstream with ${res.status}`).toBe(false);
        }
      }),
      { numRuns: RUNS },
    );
    // Not vacuous: on routes that carry these parts, redaction serves requests.
    if (mode === 'redact' && name.endsWith('native')) expect(served).toBeGreaterThan(0);
  });
});
