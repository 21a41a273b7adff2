// 600 generated malformed requests on the Gemini routes (a valid generateContent request with one member replaced by an
// arbitrary JSON value, dropped, renamed or duplicated in the other spelling; bodies that are no object; broken JSON;
// wrong content types; odd paths and queries), native and translated: never a 5xx, and every error in Google's shape
// with agentgw's code as the ErrorInfo reason.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedGemini, geminiText, startScriptedGemini } from '../../../test-support/scripted-gemini.js';

type Json = Record<string, unknown>;

let gw: TestGateway;
let google: ScriptedGemini;
let anthropic: ScriptedAnthropic;
let key: string;

beforeAll(async () => {
  google = await startScriptedGemini(() => geminiText('ok'));
  anthropic = await startScriptedAnthropic(() => textReply('ok'));
  gw = await startTestGateway({
    config: { providers: { google: { type: 'gemini', base_url: google.url, api_key: 'g' }, anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: 'a' } } },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('strict', { tenant_id: 'acme', rules: { pii: 'redact', max_cost_per_request: 5 }, tool_rules: [{ tools: ['run'], when: { cmd: 'rm *' }, action: 'deny' }] });
  key = (await admin.agent('acme', 'fuzz', 'strict')).api_key;
});
afterAll(async () => {
  await gw?.close();
  await google?.close();
  await anthropic?.close();
});

const VALID: Json = {
  contents: [
    { role: 'user', parts: [{ text: 'hello' }, { inlineData: { mimeType: 'text/plain', data: 'aGk=' } }] },
    { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'run', args: { cmd: 'ls' } } }] },
    { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'run', response: { output: 'a b' } } }] },
  ],
  systemInstruction: { parts: [{ text: 'be brief' }] },
  tools: [{ functionDeclarations: [{ name: 'run', description: 'run a command', parameters: { type: 'OBJECT', properties: { cmd: { type: 'STRING' } } } }] }],
  toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['run'] } },
  generationConfig: { temperature: 0.5, maxOutputTokens: 100, stopSequences: ['END'], thinkingConfig: { thinkingBudget: 64 }, responseMimeType: 'text/plain' },
  safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
};

/** Every path of objects and arrays in a value, as key lists. */
function paths(v: unknown, at: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  if (v === null || typeof v !== 'object') return out;
  for (const [k, child] of Object.entries(v)) {
    const p = [...at, Array.isArray(v) ? Number(k) : k];
    out.push(p);
    paths(child, p, out);
  }
  return out;
}
const ALL_PATHS = paths(VALID);

type Edit = { kind: 'replace' | 'drop' | 'rename'; path: Array<string | number>; value: unknown; name: string };

function applyEdit(edit: Edit): unknown {
  const body = structuredClone(VALID) as any;
  let holder = body;
  for (const k of edit.path.slice(0, -1)) holder = holder[k];
  const last = edit.path.at(-1)!;
  if (edit.kind === 'replace') holder[last] = edit.value;
  else if (edit.kind === 'drop') Array.isArray(holder) ? holder.splice(Number(last), 1) : delete holder[last];
  else if (!Array.isArray(holder)) {
    holder[edit.name] = holder[last];
    if (edit.name !== last) delete holder[last];
  }
  return body;
}

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const editArb: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom('replace', 'replace', 'drop', 'rename'),
  path: fc.constantFrom(...ALL_PATHS),
  value: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(null, '', -1, 1e308, 'OBJECT', [], {}, 'a'.repeat(5000))),
  name: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('snake', 'snake', 'Contents', 'system_instruction', 'SYSTEM_INSTRUCTION', 'function_call', 'Text', 'text', 'parts', '__proto__', 'constructor')),
}).map((e) => (e.kind === 'rename' && e.name === 'snake' ? { ...e, name: snake(String(e.path.at(-1))) } : e));

type Req = { path: string; method: string; contentType: string; raw: string };

const requestArb: fc.Arbitrary<Req> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ edit: editArb, model: fc.constantFrom('google/gemini-2.5-flash', 'anthropic/claude-sonnet-4-5'), call: fc.constantFrom('generateContent', 'streamGenerateContent', 'countTokens'), sse: fc.boolean(), v1: fc.boolean() }).map(({ edit, model, call, sse, v1 }) => ({ path: `/${v1 ? 'v1' : 'v1beta'}/models/${model}:${call}${sse ? '?alt=sse' : ''}`, method: 'POST', contentType: 'application/json', raw: JSON.stringify(applyEdit(edit)) })) },
  { weight: 1, arbitrary: fc.record({ body: fc.jsonValue({ maxDepth: 4 }), model: fc.constantFrom('google/gemini-2.5-flash', 'anthropic/claude-sonnet-4-5') }).map(({ body, model }) => ({ path: `/v1beta/models/${model}:generateContent`, method: 'POST', contentType: 'application/json', raw: JSON.stringify(body) })) },
  { weight: 1, arbitrary: fc.record({ raw: fc.string({ maxLength: 40 }), contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded') }).map(({ raw, contentType }) => ({ path: '/v1beta/models/google/gemini-2.5-flash:streamGenerateContent?alt=sse', method: 'POST', contentType, raw })) },
  {
    weight: 1,
    arbitrary: fc.record({
      path: fc.constantFrom('/v1beta/models/:generateContent', '/v1beta/models/%E0%A4%A:generateContent', '/v1beta/models/x:unknownMethod', '/v1beta/tunedModels/x:generateContent', '/v1beta/models/google/gemini-2.5-flash:countTokens?key=agk_bad', '/v1beta/models/google%2Fgemini-2.5-flash:generateContent', '/v1beta/models/models/google/gemini-2.5-flash:generateContent', '/v1beta/models/unknown-provider/x:generateContent', '/v1beta/models/gemini/x/../y:generateContent', '/v1beta', '/v1beta/models/nope'),
      method: fc.constantFrom('POST', 'GET', 'PUT', 'DELETE'),
    }).map(({ path, method }) => ({ path, method, contentType: 'application/json', raw: method === 'GET' ? '' : JSON.stringify(VALID) })),
  },
);

const GOOGLE_STATUSES = new Set(['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'PERMISSION_DENIED', 'NOT_FOUND', 'ABORTED', 'RESOURCE_EXHAUSTED', 'UNAVAILABLE', 'DEADLINE_EXCEEDED', 'FAILED_PRECONDITION']);

describe('malformed requests on the Gemini routes', () => {
  test('600 generated requests: no 5xx, every error in Google shape with a sentence and agentgw code', async () => {
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        const res = await fetch(`${gw.url}${r.path}`, {
          method: r.method,
          signal: AbortSignal.timeout(10_000),
          headers: { 'content-type': r.contentType, 'x-goog-api-key': key },
          ...(r.method === 'GET' ? {} : { body: r.raw }),
        });
        const text = await res.text();
        expect(res.status, `${r.method} ${r.path} ${r.raw.slice(0, 300)} -> ${text.slice(0, 300)}`).toBeLessThan(500);
        if (res.status < 400) return;
        const body = JSON.parse(text);
        expect(body.error.code).toBe(res.status);
        expect(GOOGLE_STATUSES.has(body.error.status), body.error.status).toBe(true);
        expect(body.error.message.length).toBeGreaterThan(10);
        expect(body.error.details[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', domain: 'agentgw' });
        expect(typeof body.error.details[0].reason).toBe('string');
        expect(text).not.toContain('    at ');
      }),
      { numRuns: 600 },
    );
  }, 300_000);
});
