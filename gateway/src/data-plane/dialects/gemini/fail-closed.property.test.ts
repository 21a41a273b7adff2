// The fail-closed rule on the Gemini dialect, tried as an attacker would: a PII value, or a text long enough to break a
// cost cap, placed anywhere Google's parser reads (either spelling of a member: systemInstruction and
// system_instruction, function_declarations; part types and members no view names; function call arguments and
// responses; inline text data, base64-encoded; keys themselves; nested 1-200 levels deep), natively and translated.
// With `pii: block` and with the cap, the request is refused and the upstream receives nothing; with `redact`, what the
// upstream receives holds no match. Two members are skipped and listed here as carrying no text: a part's
// thoughtSignature and the data of inline media (images, audio, video, PDFs).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedGemini, geminiText, startScriptedGemini } from '../../../test-support/scripted-gemini.js';
import { visitGeminiTexts } from './gemini-policy-view.js';
import type { PiiScope } from '../../../policy/pii/request-texts.js';

type Json = Record<string, unknown>;

const EMAIL = 'jane.doe@example.com';
const LONG_TEXT = 'spend '.repeat(20_000);
const RUNS = 10;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

function nest(value: string, depth: number, asKey: boolean): unknown {
  let v: unknown = asKey ? { [value]: 1 } : value;
  for (let i = 1; i < depth; i++) v = i % 3 === 0 ? [v] : { [`level_${i}`]: v };
  return v;
}

const user = (parts: unknown[]) => ({ role: 'user', parts });
const hi = user([{ text: 'hi' }]);

/** `text` is the value itself (for members that must be strings); `w` the value nested, or a key. */
interface Placement {
  name: string;
  body(w: unknown, text: string): Json;
  /** Only translatable placements are sent to the translated target. */
  translatable?: boolean;
  caseVariant?: boolean;
}

const PLACEMENTS: Placement[] = [
  { name: 'systemInstruction', translatable: true, body: (_w, t) => ({ systemInstruction: { parts: [{ text: t }] }, contents: [hi] }) },
  { name: 'system_instruction', translatable: true, body: (_w, t) => ({ system_instruction: { parts: [{ text: t }] }, contents: [hi] }) },
  { name: 'a part of an unknown type', body: (w) => ({ contents: [user([{ text: 'hi' }, { x_part: w }])] }) },
  { name: 'a content member no view names', body: (w) => ({ contents: [{ role: 'user', parts: [{ text: 'hi' }], x_note: w }] }) },
  { name: 'a top-level member no view names', body: (w) => ({ contents: [hi], x_extra: w }) },
  { name: 'a generationConfig member no view names', body: (w) => ({ contents: [hi], generationConfig: { temperature: 1, x_knob: w } }) },
  {
    name: 'functionCall args and functionResponse response',
    translatable: true,
    body: (w) => ({
      contents: [
        user([{ text: 'look it up' }]),
        { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'lookup', args: { q: w } } }] },
        user([{ functionResponse: { id: 'c1', name: 'lookup', response: { output: w } } }]),
      ],
      tools: [{ functionDeclarations: [{ name: 'lookup', parametersJsonSchema: { type: 'object' } }] }],
    }),
  },
  {
    name: 'function_declarations (snake_case) description and tool_config',
    translatable: true,
    body: (_w, t) => ({ contents: [hi], tools: [{ function_declarations: [{ name: 'lookup', description: t }] }], tool_config: { function_calling_config: { mode: 'AUTO' } } }),
  },
  { name: 'inline text data (base64)', translatable: true, body: (_w, t) => ({ contents: [user([{ text: 'read this' }, { inlineData: { mimeType: 'text/plain', data: b64(t) } }])] }) },
  { name: 'inline_data (snake_case) text', body: (_w, t) => ({ contents: [user([{ inline_data: { mime_type: 'text/plain', data: b64(t) } }])] }) },
  { name: 'a case variant of contents', caseVariant: true, body: (w) => ({ contents: [hi], Contents: w }) },
  { name: 'a case variant of systemInstruction', caseVariant: true, body: (_w, t) => ({ contents: [hi], SystemInstruction: { parts: [{ text: t }] } }) },
];

let gw: TestGateway;
let google: ScriptedGemini;
let anthropic: ScriptedAnthropic;
const keys: Record<string, string> = {};

beforeAll(async () => {
  google = await startScriptedGemini(() => geminiText('ok'));
  anthropic = await startScriptedAnthropic(() => textReply('ok'));
  gw = await startTestGateway({
    config: {
      providers: { google: { type: 'gemini', base_url: google.url, api_key: 'g' }, anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'a' } },
      prices: { 'google/gemini-2.5-flash': { input: 1, output: 1 }, 'anthropic/claude-sonnet-4-5': { input: 1, output: 1 } },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  const scope = ['user', 'assistant', 'system', 'tools'];
  await admin.policy('block', { tenant_id: 'acme', rules: { pii: 'block', pii_types: ['email'], pii_scope: scope } });
  await admin.policy('redact', { tenant_id: 'acme', rules: { pii: 'redact', pii_types: ['email'], pii_scope: scope } });
  await admin.policy('cap', { tenant_id: 'acme', rules: { max_cost_per_request: 0.05 } });
  for (const mode of ['block', 'redact', 'cap']) keys[mode] = (await admin.agent('acme', mode, mode)).api_key;
});
afterAll(async () => {
  await gw?.close();
  await google?.close();
  await anthropic?.close();
});

async function send(model: string, key: string, body: Json): Promise<{ status: number; body: any }> {
  const res = await fetch(`${gw.url}/v1beta/models/${model}:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': key }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** Every string of what the upstream received, inline data decoded. */
function received(body: unknown): string {
  const text = JSON.stringify(body);
  const decoded = [...text.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8'));
  return text + decoded.join('');
}

const TARGETS = [
  { name: 'native', model: 'google/gemini-2.5-flash', upstream: () => google.requests.length, last: () => google.requests.at(-1)!.body },
  { name: 'translated', model: 'anthropic/claude-sonnet-4-5', upstream: () => anthropic.messageRequests.length, last: () => anthropic.messageRequests.at(-1)!.body },
] as const;

describe.each(TARGETS)('Gemini dialect, $name', (target) => {
  test.each(PLACEMENTS.filter((p) => target.name === 'native' || p.translatable || p.caseVariant))('$name', async (p) => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 200 }), fc.boolean(), fc.constantFrom('block', 'redact', 'cap'), async (depth, asKey, mode) => {
        const value = mode === 'cap' ? LONG_TEXT : `write to ${EMAIL} today`;
        const before = target.upstream();
        const r = await send(target.model, keys[mode]!, p.body(nest(value, depth, asKey), value));
        if (p.caseVariant) {
          expect(r.status).toBe(400);
          expect(r.body.error.details[0].reason).toBe('validation_failed');
          expect(target.upstream()).toBe(before);
          return;
        }
        if (mode === 'block' || mode === 'cap') {
          expect(r.status, JSON.stringify(r.body)).toBe(403);
          expect(r.body.error.details[0].reason).toBe(mode === 'block' ? 'pii_detected' : 'cost_cap_exceeded');
          expect(target.upstream()).toBe(before);
        } else {
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          expect(target.upstream()).toBe(before + 1);
          expect(received(target.last())).not.toContain(EMAIL);
        }
      }),
      { numRuns: RUNS },
    );
  });
});

describe("an agent's growing conversation (parts looked up by their bytes)", () => {
  test.each(TARGETS)('$name: a turn sent before is read again under a new role or place; a new turn is read', async (target) => {
    const turns = Array.from({ length: 30 }, (_, i) => ({ role: i % 2 ? 'model' : 'user', parts: [{ text: `turn ${i}: ${'context '.repeat(30)}` }] }));
    const clean = { contents: [...turns, user([{ text: 'go on' }])] };
    for (let i = 0; i < 3; i++) expect((await send(target.model, keys.block!, clean)).status).toBe(200);
    const newTurn = { contents: [...turns, user([{ text: `mail ${EMAIL}` }])] };
    expect((await send(target.model, keys.block!, newTurn)).status).toBe(403);
    const before = target.upstream();
    const redacted = await send(target.model, keys.redact!, { contents: [...turns, user([{ text: `mail ${EMAIL}` }])] });
    expect(redacted.status).toBe(200);
    expect(target.upstream()).toBe(before + 1);
    expect(received(target.last())).not.toContain(EMAIL);
    const earlier = { contents: [user([{ text: `from ${EMAIL}` }]), ...turns.slice(1), user([{ text: 'go on' }])] };
    expect((await send(target.model, keys.block!, earlier)).status).toBe(403);
  });
});

describe('what the checks cannot read is priced at its worst', () => {
  test('a cachedContent or a file by reference counts as a whole context window against the cost cap', async () => {
    const before = google.requests.length;
    const cached = await send('google/gemini-2.5-flash', keys.cap!, { contents: [hi], cachedContent: 'cachedContents/abc123', generationConfig: { maxOutputTokens: 64 } });
    expect(cached.status).toBe(403);
    expect(cached.body.error.details[0].reason).toBe('cost_cap_exceeded');
    const file = await send('google/gemini-2.5-flash', keys.cap!, { contents: [user([{ fileData: { mimeType: 'video/mp4', fileUri: 'https://example.com/v.mp4' } }])], generationConfig: { maxOutputTokens: 64 } });
    expect(file.status).toBe(403);
    expect(google.requests.length).toBe(before);
    expect((await send('google/gemini-2.5-flash', keys.cap!, { contents: [hi], generationConfig: { maxOutputTokens: 64 } })).status).toBe(200);
  });
});

describe('members listed as carrying no text', () => {
  /** The texts the view visits in one turn of `parts`, under `scope`. */
  const seenIn = (role: string, parts: Json[], scope: readonly string[]): string[] => {
    const seen: string[] = [];
    visitGeminiTexts({ contents: [{ role, parts }] }, (t) => {
      seen.push(t);
      return undefined;
    }, new Set(scope) as PiiScope);
    return seen;
  };

  test("a part's thoughtSignature and inline media data are the only members the view skips", () => {
    const seen = seenIn(
      'model',
      [
        { text: 'T1', thoughtSignature: 'SIG' },
        { inlineData: { mimeType: 'image/png', data: 'IMG' } },
        { inlineData: { mimeType: 'application/pdf', data: 'PDF' } },
        { inlineData: { mimeType: 'text/plain', data: b64('TXT') } },
        { functionCall: { name: 'f', args: { a: 'ARG' } }, thoughtSignature: 'SIG2' },
        { x_unknown: 'UNK' },
      ],
      ['user', 'assistant', 'system', 'tools'],
    );
    expect(seen).toEqual(expect.arrayContaining(['T1', 'TXT', 'ARG', 'UNK', 'image/png', 'f']));
    expect(seen).not.toContain('SIG');
    expect(seen).not.toContain('SIG2');
    expect(seen).not.toContain('IMG');
    expect(seen).not.toContain('PDF');
  });

  test('a thoughtSignature or inline media data that is not base64 is text, and read', () => {
    const seen = seenIn(
      'user',
      [
        { text: 'hi', thoughtSignature: 'mail jane.doe@example.com' },
        { inlineData: { mimeType: 'image/png', data: 'contact jane.doe@example.com' } },
        { text: 'ok', thoughtSignature: 'skip_thought_signature_validator' },
      ],
      ['user'],
    );
    expect(seen).toEqual(expect.arrayContaining(['mail jane.doe@example.com', 'contact jane.doe@example.com']));
    expect(seen).not.toContain('skip_thought_signature_validator');
  });
});
