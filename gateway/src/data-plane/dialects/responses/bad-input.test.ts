// Bad input on POST /v1/responses, GET and DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items, generated with
// fast-check: whatever the body, headers, path and query, the gateway answers a 4xx (or a 2xx) and never a 5xx, every error
// body has OpenAI's shape `{error: {message, type, code, param}}` with CONTRACT's type for its code and a sentence, a
// validation_failed names the field at fault, and every answer carries x-request-id. Three targets: translated to the mock
// provider, translated (through Chat Completions) to a scripted Anthropic upstream, and native to a scripted Responses
// upstream as an `openai` provider. The upstreams answer 200 to anything (the Responses one refuses an unknown top-level
// field with a 400, as OpenAI does), so a 5xx is the gateway's own.
import fc from 'fast-check';
import { Agent, request, validateHeaderValue } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply } from '../../../test-support/scripted-anthropic.js';
import { type ScriptedResponses, errorResponse, startScriptedResponses, textResponse } from '../../../test-support/scripted-responses.js';

// Fixed, so the run is deterministic; set BAD_INPUT_SEED / BAD_INPUT_RUNS to explore further (BAD_INPUT_TALLY=1 prints
// how many answers of each status and code the run got).
const SEED = Number(process.env.BAD_INPUT_SEED ?? 20_250_601);
const RUNS = Number(process.env.BAD_INPUT_RUNS ?? 100);
const UPSTREAM_SECRETS = ['sk-ant-upstream-secret-do-not-leak', 'sk-openai-upstream-secret-do-not-leak'];
/** Small, so that a body over the limit is cheap to send. */
const BODY_LIMIT = 256 * 1024;

const MOCK_MODEL = 'mock/mock-1';
const ANTHROPIC_MODEL = 'anthropic/claude-sonnet-4-5';
const NATIVE_MODEL = 'openai/gpt-4.1';

/** Top-level fields OpenAI's Responses API documents (the scripted Responses upstream refuses any other, as OpenAI does). */
const OPENAI_FIELDS = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'text', 'reasoning', 'max_output_tokens', 'temperature', 'top_p',
  'stream', 'stream_options', 'user', 'safety_identifier', 'store', 'previous_response_id', 'include', 'prompt_cache_key', 'prompt_cache_retention',
  'metadata', 'service_tier', 'truncation', 'background', 'conversation', 'prompt', 'max_tool_calls', 'top_logprobs', 'context_management',
]);

let gw: TestGateway;
let anthropic: ScriptedAnthropic;
let native: ScriptedResponses;
const agent = new Agent({ keepAlive: true });
/**
 * Agent keys: one without a policy; one whose policy redacts PII everywhere (its checks read every text of the body); one
 * whose cost cap lowers the output limit (clamp_output edits max_output_tokens) and that blocks retries; and another
 * agent of another tenant, whose stored responses the others must not read.
 */
let plainKey: string;
let piiKey: string;
let cappedKey: string;
let otherKey: string;
/** Responses stored by the plain agent (one per target), by the other agent, and one the plain agent deleted. */
const stored = { own: [] as string[], other: '', deleted: '' };

beforeAll(async () => {
  anthropic = await startScriptedAnthropic(() => textReply('ok'));
  native = await startScriptedResponses((body) => {
    const unknown = body && typeof body === 'object' ? Object.keys(body).find((k) => !OPENAI_FIELDS.has(k)) : undefined;
    if (unknown !== undefined) {
      const e = errorResponse(400, `Unknown parameter: '${unknown}'.`, 'unknown_parameter');
      (e.body as { error: { param: string } }).error.param = unknown;
      return e;
    }
    return textResponse('ok');
  });
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: { type: 'anthropic', base_url: anthropic.url, api_key: UPSTREAM_SECRETS[0] },
        openai: { type: 'openai', base_url: native.url, api_key: UPSTREAM_SECRETS[1] },
        mock: { type: 'mock' },
      },
      models: { 'mocked-*': [MOCK_MODEL] },
      prices: {
        [ANTHROPIC_MODEL]: { input: 3, output: 15 },
        [NATIVE_MODEL]: { input: 2, output: 8 },
        [MOCK_MODEL]: { input: 1, output: 4 },
      },
      limits: { gateway_body_bytes: BODY_LIMIT },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.tenant('other');
  plainKey = (await admin.agent('acme', 'plain')).api_key as string;
  await admin.policy('pii-everywhere', { tenant_id: 'acme', rules: { pii: 'redact', pii_scope: ['user', 'assistant', 'system', 'tools'] } });
  piiKey = (await admin.agent('acme', 'careful', 'pii-everywhere')).api_key as string;
  await admin.policy('capped', { tenant_id: 'acme', rules: { max_cost_per_request: 0.05, clamp_output: true, retry_block: { max_repeats: 20, window_seconds: 60 } } });
  cappedKey = (await admin.agent('acme', 'frugal', 'capped')).api_key as string;
  otherKey = (await admin.agent('other', 'stranger')).api_key as string;

  const create = async (key: string, model: string) => {
    const a = await post({ path: '/v1/responses', headers: json(key), body: JSON.stringify({ model, input: 'remember this' }) });
    expect(a.status, a.text).toBe(200);
    return (JSON.parse(a.text) as { id: string }).id;
  };
  for (const model of [MOCK_MODEL, ANTHROPIC_MODEL, NATIVE_MODEL]) stored.own.push(await create(plainKey, model));
  stored.other = await create(otherKey, MOCK_MODEL);
  stored.deleted = await create(plainKey, MOCK_MODEL);
  const deleted = await call('DELETE', `/v1/responses/${stored.deleted}`, json(plainKey));
  expect(deleted.status, deleted.text).toBe(200);
});
afterAll(async () => {
  agent.destroy();
  await gw?.close();
  await anthropic?.close();
  await native?.close();
});

// ---------------------------------------------------------------------------------------------------------------------
// What every answer must look like

/** CONTRACT's errors table: the OpenAI error type of each code, and the codes each status may carry. */
const TYPE_OF: Record<string, string> = {
  invalid_json: 'invalid_request_error',
  validation_failed: 'invalid_request_error',
  invalid_header: 'invalid_request_error',
  unknown_model: 'invalid_request_error',
  body_too_large: 'invalid_request_error',
  invalid_api_key: 'authentication_error',
  ...Object.fromEntries(
    ['model_not_allowed', 'pii_detected', 'retry_blocked', 'cost_cap_exceeded', 'policy_not_permitted', 'price_unknown', 'trace_stopped', 'agent_suspended', 'tool_not_allowed', 'tool_calls_exceeded'].map(
      (c) => [c, 'policy_blocked'],
    ),
  ),
  ...Object.fromEntries(['response_not_found', 'route_not_found', 'policy_not_found'].map((c) => [c, 'not_found'])),
  ...Object.fromEntries(
    ['daily_budget_exceeded', 'monthly_budget_exceeded', 'trace_budget_exceeded', 'tenant_daily_budget_exceeded', 'tenant_monthly_budget_exceeded'].map((c) => [c, 'budget_exceeded']),
  ),
  ...Object.fromEntries(['rpm_exceeded', 'tpm_exceeded', 'upstream_rate_limited'].map((c) => [c, 'rate_limited'])),
};
const CODES_OF: Record<number, readonly string[]> = {
  400: ['invalid_json', 'validation_failed', 'invalid_header', 'unknown_model'],
  401: ['invalid_api_key'],
  403: Object.keys(TYPE_OF).filter((c) => TYPE_OF[c] === 'policy_blocked'),
  404: ['response_not_found', 'route_not_found', 'policy_not_found'],
  413: ['body_too_large'],
  429: Object.keys(TYPE_OF).filter((c) => TYPE_OF[c] === 'budget_exceeded' || TYPE_OF[c] === 'rate_limited'),
};

interface Case {
  method?: 'POST' | 'GET' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  /** The raw body; undefined sends none. */
  body: string | undefined;
  /** Top-level fields the case broke: a validation_failed must name one of them (or a field inside one). */
  fields?: readonly string[];
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** node:http rather than fetch or undici: it sends header values those refuse (empty ones, latin-1 bytes). */
function send(c: Case): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${gw.url}${c.path}`, { method: c.method ?? 'POST', headers: c.headers, agent }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(c.body);
  });
}
const post = (c: Case) => send({ ...c, method: 'POST' });
const call = (method: 'GET' | 'DELETE', path: string, headers: Record<string, string>) => send({ method, path, headers, body: undefined });
const json = (key: string): Record<string, string> => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` });

const cut = (s: string, n = 600) => (s.length > n ? `${s.slice(0, n)}... (${s.length} chars)` : s);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The top-level field a param names: `input.3.content.0` -> `input`. */
const rootOf = (param: string) => param.split(/[.[]/)[0]!;

/** The violations of CONTRACT in one answer (empty when it is fine). */
function violations(c: Case, a: Answer): string[] {
  const out: string[] = [];
  const requestId = a.headers['x-request-id'];
  if (typeof requestId !== 'string' || !requestId) out.push('no x-request-id header');
  if (a.status >= 500) out.push(`status ${a.status}`);
  for (const secret of [plainKey, piiKey, cappedKey, otherKey, ...UPSTREAM_SECRETS]) if (a.text.includes(secret)) out.push('the answer contains a key');
  if (a.status >= 200 && a.status < 300) {
    if (String(a.headers['content-type']).startsWith('text/event-stream')) {
      // With upstreams that answer 200 to anything, a stream that started ends completed (or incomplete, at a small
      // max_output_tokens), without an error event.
      if (/^event: (error|response\.failed)$/m.test(a.text)) out.push('the stream carries an error event');
      if (!/^event: response\.(completed|incomplete)$/m.test(a.text)) out.push('the stream has no response.completed');
    } else {
      let body: unknown;
      try {
        body = JSON.parse(a.text);
      } catch {
        out.push('a 2xx body that is not JSON');
      }
      const expected = c.method === 'DELETE' ? 'response' : c.path.includes('/input_items') ? 'list' : 'response';
      if (!isRecord(body) || body.object !== expected) out.push(`a 2xx body that is not a ${expected}`);
    }
    return out;
  }
  if (!String(a.headers['content-type']).startsWith('application/json')) out.push(`an error with content-type ${String(a.headers['content-type'])}`);
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    out.push('an error body that is not JSON');
    return out;
  }
  if (!isRecord(body) || !isRecord(body.error)) {
    out.push('error body without an error object');
    return out;
  }
  const keys = Object.keys(body).sort().join(',');
  if (keys !== 'error') out.push(`error body has the keys ${keys}`);
  const e = body.error;
  const errorKeys = Object.keys(e).sort().join(',');
  if (errorKeys !== 'code,message,param,type') out.push(`error object has the keys ${errorKeys}`);
  const codes = CODES_OF[a.status];
  if (!codes) out.push(`status ${a.status} is not in CONTRACT's errors table`);
  if (typeof e.code !== 'string' || (codes && !codes.includes(e.code))) out.push(`error.code ${String(e.code)} for status ${a.status}`);
  else if (e.type !== TYPE_OF[e.code]) out.push(`error.type ${String(e.type)} for code ${e.code}`);
  if (typeof e.message !== 'string' || e.message.trim().length < 15 || !/[.!?)"]$/.test(e.message.trim())) out.push(`error.message is not a sentence: ${JSON.stringify(e.message)}`);
  if (typeof e.message === 'string' && /\n\s+at |\[object Object\]|undefined\.?$/.test(e.message)) out.push('error.message shows internals');
  if (e.param !== null && typeof e.param !== 'string') out.push('error.param is neither a string nor null');
  if (e.code === 'validation_failed') {
    if (typeof e.param !== 'string' || !e.param) out.push('a validation_failed without param');
    else if (c.fields && c.fields.length > 0 && !c.fields.includes(rootOf(e.param))) out.push(`param ${e.param} names none of the fields the case broke (${c.fields.join(', ')})`);
  }
  return out;
}

/** How many answers of each status and code, to see that the generators reach past the first checks. */
const tally = new Map<string, number>();
/** With BAD_INPUT_COLLECT=1, violations are gathered here and printed at the end instead of failing the first case. */
const collected: string[] = [];

async function check(c: Case): Promise<Answer> {
  let a: Answer;
  try {
    a = await send(c);
  } catch (e) {
    // The connection broke or the answer could not be parsed (headers too large, say): no client can read it.
    throw new Error(`the answer could not be read (${(e as Error).message})\n${c.method ?? 'POST'} ${cut(c.path, 300)}\nbody: ${c.body === undefined ? '(none)' : cut(c.body)}`);
  }
  let code = '';
  try {
    code = String((JSON.parse(a.text) as { error?: { code?: unknown } }).error?.code ?? '');
  } catch {}
  const what = `${c.method ?? 'POST'} ${c.path.split('?')[0]!.replace(/\/v1\/responses\/.+?(\/input_items)?$/, '/v1/responses/{id}$1')} ${a.status} ${code}${a.headers['x-agentgw-clamped-max-tokens'] ? ' clamped' : ''}`;
  tally.set(what, (tally.get(what) ?? 0) + 1);
  const found = violations(c, a);
  if (found.length > 0) {
    const shown = { ...c.headers };
    for (const k of Object.keys(shown)) {
      shown[k] = shown[k]!.replace(plainKey, '<plainKey>').replace(piiKey, '<piiKey>').replace(cappedKey, '<cappedKey>').replace(otherKey, '<otherKey>');
    }
    const report =
      `${found.join('; ')}\n${c.method ?? 'POST'} ${cut(c.path, 300)}\nheaders: ${JSON.stringify(shown)}\nbody: ${c.body === undefined ? '(none)' : cut(c.body)}\n` +
      `-> ${a.status} ${cut(a.text)}`;
    if (!process.env.BAD_INPUT_COLLECT) throw new Error(report);
    collected.push(report);
  }
  return a;
}

// ---------------------------------------------------------------------------------------------------------------------
// Generators

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Strings no field expects: NUL, lone surrogates (sent as JSON escapes), control characters, long and empty ones. */
const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\ud83dy', '\ud83d\ude00', '\u202e\u200b', '\r\n\t', 'null', '{"a":', '__proto__', 'constructor', 'x'.repeat(5000)),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({ maxLength: 20 }),
);

/** A value of the wrong type for nearly any field. */
const wrongValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(null, true, false, 0, -1, 1.5, -0.5, 1e308, -1e308, 2 ** 53 + 1, [], {}, [null], [[]], { type: 5 }, { type: null }, ['x'], 'x', ''),
  nastyString,
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
);

const hugeOrNegative: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(-1, 0, -0, 0.5, 1, 15, 16, 1.0000001, 10_000_000, 10_000_001, 1e308, -1e308, 2 ** 53, 2 ** 31, -(2 ** 31), 1e-300, '64', '1e3', null),
  fc.double({ noNaN: true }), // infinities are sent as null
  fc.integer(),
);

/** Content parts of unknown or malformed shape. */
const badPart: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    null, 'text', 5, [], {}, { type: '' }, { type: 5 }, { type: null }, { type: 'x'.repeat(200) }, { type: 'hologram' }, { type: 'text', text: 'chat-style part' },
    { type: 'input_text' }, { type: 'input_text', text: 5 }, { type: 'input_text', text: null }, { type: 'input_text', text: ['x'] }, { type: 'input_text', text: '' },
    { type: 'output_text' }, { type: 'output_text', text: 5, annotations: 'x' }, { type: 'refusal' }, { type: 'refusal', refusal: 5 },
    { type: 'input_image' }, { type: 'input_image', image_url: 5 }, { type: 'input_image', image_url: '' }, { type: 'input_image', file_id: 'file_1' }, { type: 'input_image', image_url: 'not a url', detail: 'extreme' },
    { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'original' }, { type: 'input_image', image_url: 'data:,' },
    { type: 'input_file' }, { type: 'input_file', file_data: 5 }, { type: 'input_file', file_url: 'https://example.com/a.pdf' }, { type: 'input_file', file_id: 'file_1' },
    { type: 'input_file', file_data: 'JVBERi0=', filename: 5 }, { type: 'input_file', file_data: 'data:text/plain;base64,eA==', filename: 'a.txt' },
    { type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
  ),
  fc.record({ type: fc.oneof(fc.constantFrom('input_text', 'output_text', 'input_image', 'input_file', 'refusal'), nastyString), text: wrongValue, image_url: wrongValue, file_data: wrongValue }, { requiredKeys: ['type'] }) as fc.Arbitrary<Json>,
);

const role: fc.Arbitrary<Json> = fc.oneof(fc.constantFrom<Json>('user', 'assistant', 'system', 'developer'), fc.constantFrom<Json>('tool', 'function', 'USER', '', null, 5, ['user'], 'user\u0000'));

/** Input items of unknown or malformed shape. */
const badItem: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    null, 'hi', 5, [], {}, { type: '' }, { type: 5 }, { type: null }, { type: 'hologram' }, { type: 'x'.repeat(200) },
    // messages
    { role: 'user' }, { role: 'user', content: [] }, { role: 'user', content: '' }, { role: 'user', content: 5 }, { role: 'user', content: null }, { role: 'user', content: {} },
    { role: 'robot', content: 'x' }, { content: 'no role' }, { type: 'message', content: 'no role' }, { type: 'message', role: 'user', content: 'x', id: 5, status: 'bogus' },
    { role: 'assistant', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }, { role: 'system', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] },
    { role: 'developer', content: [{ type: 'input_file', file_data: 'JVBERi0=' }] }, { role: 'assistant', content: [{ type: 'refusal' }] }, { role: 'user', content: 'x', phase: 5 },
    // function calls and their outputs
    { type: 'function_call', name: 'f', arguments: '{}' }, { type: 'function_call', call_id: 'call_1', arguments: '{}' }, { type: 'function_call', call_id: 'call_1', name: 'f' },
    { type: 'function_call', call_id: 'call_1', name: 'f', arguments: { a: 1 } }, { type: 'function_call', call_id: 5, name: 5, arguments: 5 }, { type: 'function_call', call_id: '', name: '', arguments: '' },
    { type: 'function_call', call_id: 'call_1', name: 'f', arguments: 'not json' }, { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}', namespace: 5 },
    { type: 'function_call_output', output: 'x' }, { type: 'function_call_output', call_id: 5, output: 'x' }, { type: 'function_call_output', call_id: '', output: 'x' },
    { type: 'function_call_output', call_id: 'call_nowhere', output: 'no call made this' }, { type: 'function_call_output', call_id: 'call_1' }, { type: 'function_call_output', call_id: 'call_1', output: 5 },
    { type: 'function_call_output', call_id: 'call_1', output: null }, { type: 'function_call_output', call_id: 'call_1', output: [null] }, { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text' }] },
    { type: 'function_call_output', call_id: 'call_1', output: { type: 'input_text', text: 'x' } }, { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_image', file_id: 'file_1' }] },
    { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'output_text', text: 'x' }] }, { type: 'function_call_output', call_id: 'call_1', output: [] },
    // custom tools
    { type: 'custom_tool_call', call_id: 'call_1', name: 'f' }, { type: 'custom_tool_call', call_id: 'call_1', name: 'f', input: 5 }, { type: 'custom_tool_call_output', output: 'x' },
    { type: 'custom_tool_call_output', call_id: 'call_nowhere', output: 5 },
    // other items
    { type: 'item_reference', id: 'msg_1' }, { type: 'item_reference' }, { type: 'reasoning', summary: 5 }, { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'garbage' },
    { type: 'reasoning', summary: [{ type: 'summary_text', text: 5 }] }, { type: 'compaction', encrypted_content: 5 },
    { type: 'computer_call', call_id: 'c', action: {} }, { type: 'computer_call_output', call_id: 'c', output: {} }, { type: 'local_shell_call', call_id: 'c', action: {} },
    { type: 'shell_call', call_id: 'c' }, { type: 'apply_patch_call', call_id: 'c' }, { type: 'web_search_call', id: 'ws_1', status: 'completed' }, { type: 'file_search_call', id: 'fs_1', queries: 5 },
    { type: 'mcp_call', id: 'mcp_1' }, { type: 'mcp_approval_response', approve: 'yes' }, { type: 'image_generation_call', id: 'ig_1', result: 5 },
    { type: 'additional_tools', role: 'developer', tools: 5 }, { type: 'additional_tools', role: 'developer', tools: [{ type: 'function' }] },
  ),
  fc.record({ role, content: fc.oneof(fc.array(badPart, { minLength: 1, maxLength: 3 }), wrongValue, nastyString) }) as fc.Arbitrary<Json>,
  fc.record(
    {
      type: fc.oneof(fc.constantFrom('message', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output', 'reasoning', 'item_reference'), nastyString),
      role,
      content: wrongValue,
      call_id: fc.oneof(fc.constantFrom<Json>('call_1', 'call_nowhere'), wrongValue),
      name: wrongValue,
      arguments: wrongValue,
      output: fc.oneof(wrongValue, fc.array(badPart, { maxLength: 2 })),
    },
    { requiredKeys: ['type'] },
  ) as fc.Arbitrary<Json>,
);

const FUNCTION_F = { type: 'function', name: 'f', parameters: { type: 'object', properties: { q: { type: 'string' } } } };

const badTools: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    'tools', 5, {}, [null], [5], [{}], [{ type: '' }], [{ type: 5 }], [{ type: 'function' }], [{ type: 'function', name: '' }], [{ type: 'function', name: 5 }],
    [{ type: 'function', name: 'x'.repeat(300) }], [{ type: 'function', name: 'has spaces and ünïcode' }], [{ type: 'function', name: 'f', parameters: 'x' }],
    [{ type: 'function', name: 'f', parameters: [] }], [{ type: 'function', name: 'f', parameters: { type: 5, properties: 'x' } }], [{ type: 'function', name: 'f', parameters: { type: 'string' } }],
    [{ type: 'function', name: 'f', strict: 'yes' }], [{ type: 'function', name: 'f', description: 5 }], [FUNCTION_F, FUNCTION_F],
    [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], // the chat shape
    [{ type: 'custom', name: 'f', format: 'x' }], [{ type: 'custom', name: 'f', format: { type: 'grammar' } }], [{ type: 'custom', name: 'f', format: { type: 'grammar', syntax: 'ebnf', definition: 'x' } }],
    [{ type: 'custom' }], [{ type: 'custom', name: 'f' }, { type: 'function', name: 'f' }], [{ type: 'namespace', name: 'ns' }], [{ type: 'namespace', name: 'ns', tools: [] }],
    [{ type: 'namespace', name: 'ns', tools: [{ type: 'web_search' }] }], [{ type: 'namespace', tools: [FUNCTION_F] }], [{ type: 'namespace', name: 'ns', tools: [null] }],
    [{ type: 'web_search' }], [{ type: 'web_search_preview', search_context_size: 'huge' }], [{ type: 'file_search', vector_store_ids: 5 }], [{ type: 'code_interpreter', container: 5 }],
    [{ type: 'computer_use_preview' }], [{ type: 'image_generation' }], [{ type: 'mcp', server_label: 'x', server_url: 'not a url' }], [{ type: 'local_shell' }], [{ type: 'apply_patch' }],
    Array.from({ length: 1_001 }, (_, i) => ({ type: 'function', name: `f${i}` })),
    // tool types no target runs: unknown, unprintable, and many of them
    [{ type: 'hologram' }], [{ type: '\ud83d\ude00' }], [{ type: 'web_search\n' }], [{ type: 'caf\u00e9' }], Array.from({ length: 300 }, (_, i) => ({ type: `t${i}_${'x'.repeat(120)}` })),
  ),
  fc.array(fc.record({ type: fc.oneof(fc.constantFrom('function', 'custom', 'namespace', 'web_search'), nastyString), name: fc.oneof(nastyString, wrongValue), parameters: wrongValue, tools: wrongValue }, { requiredKeys: [] }), { maxLength: 3 }) as fc.Arbitrary<Json>,
);

const badToolChoice: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    'auto', 'none', 'required', 'any', 'function', '', 5, [], {}, { type: 'function' }, { type: 'function', name: '' }, { type: 'function', name: 5 }, { type: 'function', name: 'missing' },
    { type: 'function', name: 'f' }, { type: 'custom', name: 'f' }, { type: 'function', function: { name: 'f' } }, { type: 'tool', name: 'f' }, { type: 'bogus' }, { type: null },
    { type: 'allowed_tools' }, { type: 'allowed_tools', mode: 'bogus', tools: [] }, { type: 'allowed_tools', mode: 'auto', tools: 'x' }, { type: 'allowed_tools', mode: 'required', tools: [] },
    { type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search' }] }, { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'missing' }] },
    { type: 'allowed_tools', mode: 'auto', tools: [null] }, { type: 'web_search' }, { type: 'web_search_preview' }, { type: 'file_search' }, { type: 'code_interpreter' },
    { type: 'mcp', server_label: 'x' }, { type: 'image_generation' },
  ),
  wrongValue,
);

const badText: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    'json', 5, [], {}, { format: 'json' }, { format: 5 }, { format: {} }, { format: { type: 5 } }, { format: { type: 'xml' } }, { format: { type: 'json_schema' } },
    { format: { type: 'json_schema', name: 'x' } }, { format: { type: 'json_schema', schema: { type: 'object' } } }, { format: { type: 'json_schema', name: 5, schema: { type: 'object' } } },
    { format: { type: 'json_schema', name: 'x', schema: 'x' } }, { format: { type: 'json_schema', name: 'x', schema: [] } }, { format: { type: 'json_schema', name: 'x', schema: null } },
    { format: { type: 'json_schema', name: 'x', schema: { type: 'object' }, strict: 'yes' } }, { format: { type: 'json_schema', name: 'x', schema: { type: 'object' }, description: 5 } },
    { format: { type: 'json_schema', name: 'x'.repeat(300), schema: { type: 'object' } } }, { format: { type: 'json_schema', name: 'has spaces', schema: { type: 'bogus' } } },
    { format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }, // the chat shape
    { format: { type: 'json_object' }, verbosity: 'loud' }, { verbosity: 5 }, { other: 1 }, { format: { type: 'text' }, other: 1 },
  ),
  fc.record({ format: fc.record({ type: fc.oneof(fc.constantFrom('json_schema', 'json_object', 'text'), nastyString), name: wrongValue, schema: wrongValue, strict: wrongValue }, { requiredKeys: [] }) }) as fc.Arbitrary<Json>,
);

const badReasoning: fc.Arbitrary<Json> = fc.constantFrom<Json>(
  'high', 5, [], { effort: 'extreme' }, { effort: 5 }, { effort: '' }, { summary: 'verbose' }, { generate_summary: 5 }, { other: 1 }, { effort: 'x'.repeat(100) }, { effort: null, summary: null },
);

/** previous_response_id values: malformed, unknown, deleted, another agent's, and this agent's own (valid for plainKey only). */
const PREVIOUS_IDS = ['', 'resp_', 'resp_!!', 'resp_a/../b', 'resp_%2F', 'x'.repeat(300), `resp_${'a'.repeat(300)}`, 'resp_\u0000', 'msg_123', 'RESP_abc', `resp_${'0'.repeat(48)}`, 'other', 'deleted', 'own'] as const;
const previousId: fc.Arbitrary<() => Json> = fc.oneof(
  fc.constantFrom(...PREVIOUS_IDS).map((v) => () => (v === 'other' ? stored.other : v === 'deleted' ? stored.deleted : v === 'own' ? stored.own[0]! : v)),
  wrongValue.filter((v) => typeof v !== 'string' && v !== null).map((v) => () => v),
);

/** Every documented field, some OpenAI documents that a translated call cannot carry, and some unknown ones. */
const FIELDS = [
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'text', 'reasoning', 'max_output_tokens', 'temperature', 'top_p', 'stream',
  'stream_options', 'user', 'safety_identifier', 'store', 'previous_response_id', 'include', 'prompt_cache_key', 'metadata', 'service_tier', 'truncation',
  'background', 'conversation', 'prompt', 'max_tool_calls', 'top_logprobs', 'messages', 'max_tokens', 'frobnicate',
] as const;

type Patch = { label: string; fields: string[]; apply: (body: Record<string, Json>) => void };

const patch = (label: string, fields: string[], apply: (body: Record<string, Json>) => void): Patch => ({ label, fields, apply });

const setField = (field: string, value: fc.Arbitrary<Json>): fc.Arbitrary<Patch> => value.map((v) => patch(`${field}=${cut(JSON.stringify(v) ?? 'undefined', 80)}`, [field], (b) => void (b[field] = v)));

/** Nesting built as a value; deeper bodies are built as text (see rawBody). */
const nested = (depth: number, leaf: Json, asArray: boolean): Json => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
  return v;
};

const HI: Json = { role: 'user', content: 'hi' };

/** One change that makes a valid body malformed. */
const badPatch: fc.Arbitrary<Patch> = fc.oneof(
  // a field of the wrong type, any field
  fc.tuple(fc.constantFrom(...FIELDS), wrongValue).map(([f, v]) => patch(`${f}=${cut(JSON.stringify(v), 80)}`, [f], (b) => void (b[f] = v))),
  // a required field missing
  fc.constantFrom('model', 'input').map((f) => patch(`no ${f}`, [f], (b) => void delete b[f])),
  // numbers out of range
  fc.tuple(fc.constantFrom('max_output_tokens', 'temperature', 'top_p', 'top_logprobs', 'max_tool_calls'), hugeOrNegative).map(([f, v]) => patch(`${f}=${JSON.stringify(v)}`, [f], (b) => void (b[f] = v))),
  setField('model', fc.oneof(nastyString, fc.constantFrom<Json>('nope/nope', 'openai/', '/x', 'mock/', 'mocked-*', 'x'.repeat(300), 'openai/gpt-4.1\u0000', 'mocked-\ud800', 'gpt-4.1', 'mock/unpriced'))),
  // input: strings, empty lists, bad items
  setField('input', fc.oneof(nastyString, fc.constantFrom<Json>([], {}, [[]], [HI, null], 'x'.repeat(BODY_LIMIT / 2)))),
  fc.tuple(fc.array(badItem, { minLength: 1, maxLength: 3 }), fc.boolean()).map(([items, prepend]) =>
    patch(`input+=${cut(JSON.stringify(items), 120)}`, ['input'], (b) => void (b.input = prepend ? [...items, HI] : [HI, ...items])),
  ),
  fc.tuple(role, fc.array(badPart, { minLength: 1, maxLength: 3 })).map(([r, parts]) =>
    patch(`${JSON.stringify(r)} parts ${cut(JSON.stringify(parts), 120)}`, ['input'], (b) => void (b.input = [HI, { type: 'message', role: r, content: parts }, { role: 'user', content: 'go on' }])),
  ),
  // a function_call_output that answers no call, or a call answered twice
  fc.constantFrom('orphan', 'twice', 'before').map((how) =>
    patch(`function_call_output ${how}`, ['input'], (b) => {
      const callItem = { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' };
      const output = { type: 'function_call_output', call_id: 'call_1', output: 'done' };
      b.tools = [FUNCTION_F];
      b.input = how === 'orphan' ? [HI, output] : how === 'twice' ? [HI, callItem, output, output] : [HI, output, callItem];
    }),
  ),
  setField('tools', badTools),
  fc.tuple(badToolChoice, fc.constantFrom('none', 'function', 'web_search')).map(([tc, tools]) =>
    patch(`tool_choice=${cut(JSON.stringify(tc), 80)} with ${tools} tools`, tools === 'none' ? ['tool_choice'] : ['tool_choice', 'tools'], (b) => {
      b.tool_choice = tc;
      if (tools === 'function') b.tools = [FUNCTION_F];
      else if (tools === 'web_search') b.tools = [{ type: 'web_search' }];
    }),
  ),
  previousId.map((v) => patch('previous_response_id', ['previous_response_id'], (b) => void (b.previous_response_id = v()))),
  setField('text', badText),
  setField('reasoning', badReasoning),
  setField('instructions', fc.oneof(nastyString, fc.constantFrom<Json>(5, [], {}, [HI], ['x']))),
  setField('metadata', fc.constantFrom<Json>('x', [], { k: 5 }, { k: null }, { ['k'.repeat(65)]: 'v' }, { k: 'v'.repeat(513) }, Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])), { user_id: 'jane.doe@example.com' })),
  setField('include', fc.constantFrom<Json>('x', [5], ['bogus.include'], ['reasoning.encrypted_content'], Array.from({ length: 101 }, () => 'x'))),
  setField('stream', fc.constantFrom<Json>('true', 1, 0, [], {})),
  setField('store', fc.constantFrom<Json>('yes', 1, [], {})),
  setField('parallel_tool_calls', fc.constantFrom<Json>('yes', 1, [])),
  setField('stream_options', fc.constantFrom<Json>('x', { include_obfuscation: 'no' }, { include_usage: true })),
  setField('truncation', fc.constantFrom<Json>('sometimes', 5, 'auto')),
  // fields OpenAI has and a translated call cannot carry, set
  fc.constantFrom<[string, Json]>(['background', true], ['conversation', 'conv_1'], ['conversation', { id: 'conv_1' }], ['prompt', { id: 'pmpt_1' }], ['max_tool_calls', 3], ['top_logprobs', 2]).map(
    ([f, v]) => patch(`${f}=${JSON.stringify(v)}`, [f], (b) => void (b[f] = v)),
  ),
  // strings with NUL and lone surrogates wherever text goes
  fc.tuple(nastyString, fc.constantFrom('input', 'instructions', 'part', 'tool_output', 'tool_args', 'tool_name', 'user')).map(([s, where]) =>
    patch(`${where} text ${JSON.stringify(s.slice(0, 20))}`, where === 'tool_name' ? ['tools', 'input'] : where === 'instructions' || where === 'user' ? [where] : ['input'], (b) => {
      if (where === 'input') b.input = s;
      else if (where === 'instructions') b.instructions = s;
      else if (where === 'part') b.input = [{ role: 'user', content: [{ type: 'input_text', text: s }] }];
      else if (where === 'tool_output') b.input = [HI, { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'call_1', output: s }];
      else if (where === 'tool_args') b.input = [HI, { type: 'function_call', call_id: s, name: 'f', arguments: JSON.stringify({ [s]: s }) }, { type: 'function_call_output', call_id: s, output: 'ok' }];
      else if (where === 'tool_name') {
        b.tools = [{ type: 'function', name: s, parameters: { type: 'object', properties: { [s]: { type: 'string' } } } }];
        b.input = [HI, { type: 'function_call', call_id: 'call_1', name: s, arguments: '{}' }, { type: 'function_call_output', call_id: 'call_1', output: 'ok' }];
      } else b.user = s;
    }),
  ),
  // nesting, as deep as a JSON value can be built here
  fc.tuple(fc.integer({ min: 50, max: 1500 }), fc.boolean(), fc.constantFrom('arguments', 'schema', 'part', 'output', 'metadata', 'format')).map(([depth, asArray, where]) =>
    patch(`${where} nested ${depth}`, where === 'schema' ? ['tools'] : where === 'format' ? ['text'] : where === 'metadata' ? ['metadata'] : ['input'], (b) => {
      const deep = nested(depth, 'x', asArray);
      if (where === 'arguments') b.input = [HI, { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}', deep }];
      else if (where === 'schema') b.tools = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: { deep } } }];
      else if (where === 'part') b.input = [{ role: 'user', content: [{ type: 'input_text', text: 'x', deep }] }];
      else if (where === 'output') b.input = [HI, { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: 'x', deep }] }];
      else if (where === 'metadata') b.metadata = { deep } as Json;
      else b.text = { format: { type: 'json_schema', name: 'x', schema: { type: 'object', properties: { deep } } } };
    }),
  ),
);

/** A valid body for that target, then one to three malformed changes. */
const badBody = (model: string, stream: boolean): fc.Arbitrary<{ body: Json; labels: string[]; fields: string[] }> =>
  fc.array(badPatch, { minLength: 1, maxLength: 3 }).map((patches) => {
    const body: Record<string, Json> = { model, input: 'hi', max_output_tokens: 64 };
    if (stream) body.stream = true;
    for (const p of patches) p.apply(body);
    return { body, labels: patches.map((p) => p.label), fields: [...new Set(patches.flatMap((p) => p.fields))] };
  });

/** Bodies that are no JSON object, or that only text can build. */
const rawBody = (model: string): fc.Arbitrary<string | undefined> => {
  const valid = JSON.stringify({ model, input: 'hi', max_output_tokens: 16 });
  const deep = (n: number, open: string, close: string) => open.repeat(n) + close.repeat(n);
  return fc.oneof(
    fc.constantFrom<string | undefined>(
      undefined, '', ' ', '{', '}', 'null', 'true', '42', '"x"', '[]', '[{}]', 'undefined', 'NaN', '{"model":', '\u0000', '{"a":1}{"b":2}', `${valid},`, `${valid}garbage`,
      `\ufeff${valid}`, valid.replace('{', '{"__proto__":{"x":1},'), valid.replace('{', '{"constructor":{"prototype":{"x":1}},'), valid.replace('"hi"', '"\\ud800"'),
      valid.replace('"hi"', '"\\u0000"'), valid.replace('"hi"', '"\\x41"'), valid.replace('16', '1e400'), valid.replace('16', '-1e400'), valid.replace('16', '016'), valid.replace('{', '{"model":"a",'),
      valid.replace('"hi"', `"${'x'.repeat(BODY_LIMIT)}"`), 'model=gpt&input=hi',
    ),
    fc.constantFrom(20_000, 5_000).chain((n) =>
      fc.constantFrom(
        valid.replace('"hi"', deep(n, '[', ']')),
        valid.replace('"hi"', `[{"type":"function_call_output","call_id":"c","output":${deep(n, '[', ']')}}]`),
        valid.replace('{', `{"metadata":{"x":${deep(n, '{"a":', '}').replace(/\{"a":\}/, '{}')}},`),
        valid.replace('{', `{"tools":[{"type":"function","name":"f","parameters":{"x":${deep(n, '[', ']')}}}],`),
        valid.replace('{', `{"text":{"format":{"type":"json_schema","name":"x","schema":{"x":${deep(n, '[', ']')}}}},`),
        valid.replace('{', `{"frobnicate":${deep(n, '[', ']')},`),
        deep(n, '[', ']'),
      ),
    ),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  );
};

// ---------------------------------------------------------------------------------------------------------------------
// Headers

type KeyChoice = 'plain' | 'pii' | 'capped' | 'other';
const KEYS: readonly KeyChoice[] = ['plain', 'pii', 'capped'];
const keyOf = (k: KeyChoice) => (k === 'plain' ? plainKey : k === 'pii' ? piiKey : k === 'capped' ? cappedKey : otherKey);

/** Authentication variants; the valid ones weigh most so that bodies get past it. */
const authHeaders: fc.Arbitrary<(key: string) => Record<string, string>> = fc.oneof(
  { weight: 8, arbitrary: fc.constant((key: string) => ({ authorization: `Bearer ${key}` })) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<(key: string) => Record<string, string>>(
      (key) => ({ authorization: `bearer ${key}` }),
      (key) => ({ 'x-api-key': key }),
      (key) => ({ authorization: 'Bearer agk_wrong', 'x-api-key': key }),
      (key) => ({ authorization: `Basic ${key}` }),
      (key) => ({ authorization: `Bearer  ${key}` }),
      (key) => ({ authorization: `Bearer ${key} extra` }),
      (key) => ({ authorization: `Bearer ${key.toUpperCase()}` }),
      (key) => ({ authorization: `Bearer ${key}`, 'openai-organization': 'org-x', 'openai-project': 'proj_x' }),
      () => ({ authorization: 'Bearer agk_' }),
      () => ({ authorization: `Bearer ${'x'.repeat(2000)}` }),
      () => ({ authorization: 'Bearer' }),
      () => ({ authorization: '' }),
      () => ({}),
    ),
  },
);

/** Whether node:http sends it (no control characters but tab, nothing beyond latin-1). */
function sendable(value: string): boolean {
  try {
    validateHeaderValue('x', value);
    return true;
  } catch {
    return false;
  }
}

/** A header value HTTP can carry, but otherwise anything. */
const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'x'.repeat(129), 'x'.repeat(2000), 'tab\there', 'caf\u00e9', '\u00ff\u00fe', 'a,b', '"quoted"', '../../etc/passwd'),
  fc.string({ unit: 'grapheme-ascii', maxLength: 140 }).filter(sendable),
  fc.string({ unit: 'binary', maxLength: 20 }).filter(sendable),
);

/** Mostly a valid trace id, so that what follows the header checks is reached too. */
const traceValue: fc.Arbitrary<string> = fc.oneof({ weight: 2, arbitrary: fc.stringMatching(/^[\x20-\x7e]{1,128}$/) }, { weight: 1, arbitrary: headerValue });

const extraHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    'x-agent-trace-id': traceValue,
    'x-gateway-trace-id': traceValue,
    'session-id': headerValue,
    session_id: headerValue,
    'openai-beta': fc.oneof(fc.constantFrom('responses=experimental', 'assistants=v2', ''), headerValue),
    'x-agent-policy': fc.constantFrom('BAD ID', 'missing-policy', 'pii-everywhere', 'capped', ''),
    'content-type': fc.constantFrom('text/plain', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/jsonx', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', ''),
  },
  { requiredKeys: [] },
);

const PATHS = ['/v1/responses', '/v1/responses/', '/v1/responses?x=%ZZ', '/v1/responses?stream=true'];

function headersFor(key: string, auth: (key: string) => Record<string, string>, extra: Record<string, string>, hasBody: boolean): Record<string, string> {
  const out: Record<string, string> = { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...auth(key), ...extra };
  // An empty content-type stands for none.
  if (out['content-type'] === '') delete out['content-type'];
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------

const TARGETS = [
  { name: 'translated to mock', model: MOCK_MODEL },
  { name: 'translated to anthropic', model: ANTHROPIC_MODEL },
  { name: 'native', model: NATIVE_MODEL },
] as const;

describe('malformed /v1/responses bodies are 4xx in OpenAI shape naming the field, never 5xx', () => {
  const cases = TARGETS.flatMap((t) => [false, true].map((stream) => ({ ...t, stream, title: `${t.name}${stream ? ', streamed' : ''}` })));
  test.each(cases)('$title', async ({ model, stream }) => {
    await fc.assert(
      fc.asyncProperty(badBody(model, stream), fc.constantFrom(...KEYS), async ({ body, fields }, key) => {
        await check({ path: '/v1/responses', headers: json(keyOf(key)), body: JSON.stringify(body), fields });
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

describe('malformed headers and bodies that are no JSON object', () => {
  test.each(TARGETS)('$name', async ({ model }) => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { weight: 1, arbitrary: rawBody(model) },
          { weight: 2, arbitrary: fc.boolean().map((stream) => JSON.stringify({ model, stream, input: [{ role: 'user', content: 'hi' }] })) },
        ),
        fc.constantFrom(...KEYS),
        authHeaders,
        extraHeaders,
        fc.constantFrom(...PATHS),
        async (body, key, auth, extra, path) => {
          await check({ path, headers: headersFor(keyOf(key), auth, extra, body !== undefined), body });
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

describe('output limits a cost cap must lower', () => {
  test('clamped or refused, never a 5xx', async () => {
    let clamped = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(MOCK_MODEL, ANTHROPIC_MODEL, NATIVE_MODEL),
        fc.boolean(),
        fc.option(fc.integer({ min: 1, max: 10_000_000 }), { nil: undefined }),
        fc.option(fc.constantFrom('low', 'medium', 'high', 'minimal', 'none'), { nil: undefined }),
        async (model, stream, max, effort) => {
          const body = { model, stream, input: 'hi', ...(max !== undefined ? { max_output_tokens: max } : {}), ...(effort ? { reasoning: { effort } } : {}) };
          const a = await check({ path: '/v1/responses', headers: { ...json(cappedKey), 'x-agent-trace-id': `clamp-${max}-${effort}` }, body: JSON.stringify(body) });
          if (a.headers['x-agentgw-clamped-max-tokens']) clamped++;
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    expect(clamped).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------------------------------
// Stored responses: GET, DELETE, input_items

/** Response ids a path can carry: percent-encoding garbage, very long, other agents', unknown, deleted. */
const oddId: fc.Arbitrary<() => string> = fc.oneof(
  fc.constantFrom(
    '%', '%Z', '%ZZ', '%E0%A4%A', '%C0%AF', '%FF', '%00', 'resp_%00', 'resp_%2F..%2F', '%2e%2e', '..', '.', 'resp_', 'resp_!!', `resp_${'a'.repeat(10_000)}`, 'x'.repeat(8_000),
    `resp_${'0'.repeat(48)}`, 'RESP_abc', 'resp_a%20b', 'resp_%F0%9F%98%80', '%ED%A0%80', 'resp_a;b', 'resp_a,b', 'compact', 'null', 'undefined', '__proto__', 'constructor',
  ).map((v) => () => v),
  fc.constantFrom('other', 'deleted').map((v) => () => (v === 'other' ? stored.other : stored.deleted)),
  fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((s) => () => encodeURIComponent(s)),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 60 }).filter((s) => /^[\x21-\x7e]+$/.test(s) && !/[/?#]/.test(s)).map((s) => () => s),
);

/** input_items query strings: limits out of range or not numbers, orders that are none, unknown parameters. */
const BAD_QUERIES = [
  'limit=0', 'limit=-1', 'limit=101', 'limit=abc', 'limit=1.5', 'limit=', 'limit=1e2', 'limit=0x10', 'limit=%00', 'order=sideways', 'order=', 'order=ASC', 'frobnicate=1',
  'limit=10&limit=abc', 'after=', `after=${'x'.repeat(300)}`, `before=${'x'.repeat(300)}`, 'include[]=bogus&include[]=x', 'x=%ZZ', '%ZZ=1', '&&&', 'limit[]=1', 'order=asc&order=sideways',
];
const GOOD_QUERIES = ['', 'limit=1', 'limit=100', 'order=asc', 'order=desc&limit=5', 'after=nope', 'before=nope', 'include[]=message.input_image.image_url'];

describe('GET and DELETE /v1/responses/{id} and input_items with odd ids and queries', () => {
  test('never a 5xx; an id this agent did not store is 404 response_not_found; a bad query is a 400 naming the parameter', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 3, arbitrary: oddId }, { weight: 1, arbitrary: fc.constant(() => stored.own[0]!) }),
        fc.constantFrom<'GET' | 'DELETE' | 'POST'>('GET', 'GET', 'GET', 'DELETE', 'POST'),
        fc.constantFrom('', '/', '/input_items', '/input_items/', '/input_items/x', '/other', '/cancel'),
        fc.oneof(fc.constantFrom(...BAD_QUERIES), fc.constantFrom(...GOOD_QUERIES)),
        fc.constantFrom<KeyChoice>('plain', 'plain', 'pii', 'other'),
        async (id, method, suffix, query, key) => {
          const theId = id();
          const owner: KeyChoice | null = stored.own.includes(theId) ? 'plain' : theId === stored.other ? 'other' : null;
          const own = owner === key;
          // Stored responses are for reading here; deleting one's own is a test of its own (below).
          const m = own ? 'GET' : method;
          const path = `/v1/responses/${theId}${suffix}${query ? `?${query}` : ''}`;
          const a = await check({ method: m, path, headers: { authorization: `Bearer ${keyOf(key)}` }, body: undefined });
          if (own && (suffix === '' || suffix === '/') && a.status !== 200) throw new Error(`GET of an own response -> ${a.status} ${a.text}`);
          if (!own && !theId.startsWith('%') && a.status === 200) throw new Error(`${m} ${cut(path, 200)} -> 200 for a response this agent did not store`);
        },
      ),
      { seed: SEED, numRuns: RUNS * 2 },
    );
  });

  test.each(['other', 'deleted', 'unknown'] as const)("an id that is %s: 404 response_not_found on GET, DELETE and input_items, whatever the tenant's key", async (which) => {
    const id = which === 'other' ? stored.other : which === 'deleted' ? stored.deleted : `resp_${'0'.repeat(48)}`;
    for (const key of [plainKey, piiKey]) {
      for (const [method, suffix] of [['GET', ''], ['GET', '/input_items'], ['DELETE', '']] as const) {
        const a = await check({ method, path: `/v1/responses/${id}${suffix}`, headers: { authorization: `Bearer ${key}` }, body: undefined });
        expect(a.status, a.text).toBe(404);
        expect(JSON.parse(a.text).error).toMatchObject({ type: 'not_found', code: 'response_not_found' });
      }
    }
    // The owner still has it.
    if (which === 'other') expect((await call('GET', `/v1/responses/${id}`, { authorization: `Bearer ${otherKey}` })).status).toBe(200);
  });

  test.each([
    ['limit=0', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=101', 'limit'],
    ['limit=1.5', 'limit'],
    ['order=sideways', 'order'],
    ['frobnicate=1', 'frobnicate'],
  ])('input_items?%s is 400 validation_failed naming %s', async (query, param) => {
    const a = await check({ method: 'GET', path: `/v1/responses/${stored.own[0]}/input_items?${query}`, headers: { authorization: `Bearer ${plainKey}` }, body: undefined });
    expect(a.status, a.text).toBe(400);
    expect(JSON.parse(a.text).error).toMatchObject({ type: 'invalid_request_error', code: 'validation_failed', param });
  });

  test('percent-encoding that does not decode is a 400 naming response_id, not a 5xx', async () => {
    for (const id of ['%', '%ZZ', '%E0%A4%A', '%FF']) {
      for (const suffix of ['', '/input_items']) {
        const a = await check({ method: 'GET', path: `/v1/responses/${id}${suffix}`, headers: { authorization: `Bearer ${plainKey}` }, body: undefined });
        expect([400, 404], a.text).toContain(a.status);
        if (a.status === 400) expect(JSON.parse(a.text).error).toMatchObject({ code: 'validation_failed', param: 'response_id' });
      }
    }
  });

  test('deleting an own response: 200 once, then 404 on GET, input_items and DELETE', async () => {
    const created = await check({ path: '/v1/responses', headers: json(plainKey), body: JSON.stringify({ model: MOCK_MODEL, input: 'to delete' }) });
    const id = (JSON.parse(created.text) as { id: string }).id;
    const first = await check({ method: 'DELETE', path: `/v1/responses/${id}`, headers: { authorization: `Bearer ${plainKey}` }, body: undefined });
    expect(first.status, first.text).toBe(200);
    expect(JSON.parse(first.text)).toMatchObject({ id, deleted: true });
    for (const [method, suffix] of [['GET', ''], ['GET', '/input_items'], ['DELETE', '']] as const) {
      const a = await check({ method, path: `/v1/responses/${id}${suffix}`, headers: { authorization: `Bearer ${plainKey}` }, body: undefined });
      expect(a.status, a.text).toBe(404);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------------
// Fixed cases: what the generators should reach, answered as CONTRACT says

describe('what a translated target cannot take is a 400 naming the field; the native path passes it on', () => {
  const user = (content: Json): Json => [{ role: 'user', content }];
  const cases: Array<[string, Record<string, Json>, string]> = [
    ['tool_choice naming a missing tool', { tools: [FUNCTION_F], tool_choice: { type: 'function', name: 'missing' } }, 'tool_choice.name'],
    ['tool_choice requiring a built-in tool', { tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }], tool_choice: { type: 'file_search' } }, 'tool_choice'],
    ['tool_choice required without a client tool', { tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }], tool_choice: 'required' }, 'tool_choice'],
    ['a function_call without call_id', { input: [{ role: 'user', content: 'a' }, { type: 'function_call', name: 'f', arguments: '{}' }] }, 'input.1.call_id'],
    ['a function_call_output without call_id', { input: [{ role: 'user', content: 'a' }, { type: 'function_call_output', output: 'x' }] }, 'input.1.call_id'],
    ['an item_reference', { input: [{ type: 'item_reference', id: 'msg_1' }, { role: 'user', content: 'a' }] }, 'input.0'],
    ['an unknown item type', { input: [{ type: 'hologram' }, { role: 'user', content: 'a' }] }, 'input.0.type'],
    ['an image from the Files API', { input: user([{ type: 'input_image', file_id: 'file_1' }]) }, 'input.0.content.0.file_id'],
    ['a file by URL', { input: user([{ type: 'input_file', file_url: 'https://example.com/a.pdf' }]) }, 'input.0.content.0.file_url'],
    ['an unknown content part', { input: user([{ type: 'hologram' }]) }, 'input.0.content.0.type'],
    ['a json_schema format without a schema', { text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format.schema'],
    ['a json_schema format without a name', { text: { format: { type: 'json_schema', schema: { type: 'object' } } } }, 'text.format.name'],
    ['an unknown text.format type', { text: { format: { type: 'xml' } } }, 'text.format.type'],
    ['two tools of one name', { tools: [FUNCTION_F, FUNCTION_F] }, 'tools.1'],
    ['a function tool without a name', { tools: [{ type: 'function', parameters: { type: 'object' } }] }, 'tools.0.name'],
    ['background', { background: true }, 'background'],
    ['conversation', { conversation: 'conv_1' }, 'conversation'],
    ['an unknown top-level field', { frobnicate: 1 }, 'frobnicate'],
  ];
  test.each(cases)('%s', async (_name, fields, param) => {
    for (const stream of [false, true]) {
      for (const model of [MOCK_MODEL, ANTHROPIC_MODEL]) {
        const body = { model, input: 'hi', ...fields, stream };
        const translated = await check({ path: '/v1/responses', headers: json(plainKey), body: JSON.stringify(body) });
        expect(translated.status, translated.text).toBe(400);
        expect(JSON.parse(translated.text).error).toMatchObject({ type: 'invalid_request_error', code: 'validation_failed', param });
      }
      // Native: the upstream decides (here it takes everything OpenAI documents, and refuses an unknown field by name).
      const nativeAnswer = await check({ path: '/v1/responses', headers: json(plainKey), body: JSON.stringify({ model: NATIVE_MODEL, input: 'hi', ...fields, stream }) });
      // Background responses are refused on the native path too: a queued response carries no usage to bill.
      if (param === 'frobnicate' || param === 'background') {
        expect(nativeAnswer.status, nativeAnswer.text).toBe(400);
        expect(JSON.parse(nativeAnswer.text).error).toMatchObject({ code: 'validation_failed', param });
      } else expect(nativeAnswer.status, nativeAnswer.text).toBe(200);
    }
  });

  test.each([
    ['a function_call_output that answers no call', [{ role: 'user', content: 'a' }, { type: 'function_call_output', call_id: 'call_nowhere', output: 'x' }], 'input.1'],
    ['a function_call_output before its call', [{ role: 'user', content: 'a' }, { type: 'function_call_output', call_id: 'call_1', output: 'x' }, { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' }], 'input.1'],
  ] as Array<[string, Json, string]>)('%s: translated, a 400 naming the item (as OpenAI answers it), never a 5xx', async (_name, input, param) => {
    for (const stream of [false, true]) {
      for (const model of [MOCK_MODEL, ANTHROPIC_MODEL]) {
        const a = await check({ path: '/v1/responses', headers: json(plainKey), body: JSON.stringify({ model, input, tools: [FUNCTION_F], stream }) });
        expect(a.status, `${model}: ${a.text}`).toBe(400);
        expect(JSON.parse(a.text).error.param, a.text).toMatch(new RegExp(`^${param.replace('.', '\\.')}`));
      }
    }
  });
});

// Bugs the generated input found, held as fixed cases.
describe('found by generated input', () => {
  test.each([
    ['an emoji', '\ud83d\ude00'],
    ['a control character', 'web_search\n'],
    ['a NUL', 'x\u0000'],
  ])('a tool type with %s (no target runs it): a 4xx naming the tool, or served, never a 5xx', async (_name, type) => {
    for (const model of [MOCK_MODEL, ANTHROPIC_MODEL]) {
      for (const stream of [false, true]) {
        const a = await check({ path: '/v1/responses', headers: json(plainKey), body: JSON.stringify({ model, input: 'hi', tools: [FUNCTION_F, { type }], stream }), fields: ['tools'] });
        if (a.status === 400) expect(JSON.parse(a.text).error.param, a.text).toMatch(/^tools\.1/);
        else expect(a.status, a.text).toBe(200);
      }
    }
  });

  test('300 tool types no target runs: the answer stays readable (its headers fit what HTTP clients take)', async () => {
    const tools = Array.from({ length: 300 }, (_, i) => ({ type: `t${i}_${'x'.repeat(120)}` }));
    for (const model of [MOCK_MODEL, ANTHROPIC_MODEL]) {
      for (const stream of [false, true]) {
        const a = await check({ path: '/v1/responses', headers: json(plainKey), body: JSON.stringify({ model, input: 'hi', tools, stream }), fields: ['tools'] });
        expect(a.status === 200 || a.status === 400, a.text).toBe(true);
        expect(String(a.headers['x-agentgw-dropped-tools'] ?? '').length).toBeLessThan(8 * 1024);
      }
    }
  });

  test.each([
    ['a string', ''],
    ['one empty output_text part', [{ type: 'output_text', text: '', annotations: [] }]],
  ] as Array<[string, Json]>)('an assistant message whose content is empty (%s): served, or a 400 naming input.1.content, never a chat field', async (_name, content) => {
    for (const model of [MOCK_MODEL, ANTHROPIC_MODEL]) {
      for (const stream of [false, true]) {
        const input = [{ role: 'user', content: 'hi' }, { type: 'message', role: 'assistant', content }, { role: 'user', content: 'go on' }];
        const a = await check({ path: '/v1/responses', headers: json(plainKey), body: JSON.stringify({ model, input, stream }), fields: ['input'] });
        if (a.status === 400) expect(JSON.parse(a.text).error.param, `${model}: ${a.text}`).toMatch(/^input\.1\.content/);
        else expect(a.status, a.text).toBe(200);
      }
    }
  });
});

describe('previous_response_id', () => {
  test.each([
    ['malformed', () => 'resp_!!'],
    ['too long', () => `resp_${'a'.repeat(300)}`],
    ['not a string', () => 5 as unknown as string],
    ['unknown', () => `resp_${'0'.repeat(48)}`],
    ['deleted', () => stored.deleted],
    ["another agent's", () => stored.other],
  ])('%s: 400 validation_failed naming previous_response_id on every target, nothing sent upstream', async (_name, id) => {
    const before = { anthropic: anthropic.messageRequests.length, native: native.responseRequests.length };
    for (const { model } of TARGETS) {
      for (const stream of [false, true]) {
        const a = await check({ path: '/v1/responses', headers: json(plainKey), body: JSON.stringify({ model, input: 'hi', previous_response_id: id(), stream }) });
        expect(a.status, a.text).toBe(400);
        expect(JSON.parse(a.text).error).toMatchObject({ type: 'invalid_request_error', code: 'validation_failed', param: 'previous_response_id' });
      }
    }
    expect(anthropic.messageRequests.length).toBe(before.anthropic);
    expect(native.responseRequests.length).toBe(before.native);
  });

  test('an own response continues on every target, whichever target stored it', async () => {
    for (const id of stored.own) {
      for (const { model } of TARGETS) {
        for (const stream of [false, true]) {
          const a = await check({ path: '/v1/responses', headers: json(plainKey), body: JSON.stringify({ model, input: 'and then?', previous_response_id: id, stream }) });
          expect(a.status, a.text).toBe(200);
        }
      }
    }
  });
});

test('the property really reaches every upstream, and the server is still up', async () => {
  if (collected.length > 0) console.log(`${collected.length} violations:\n\n${collected.join('\n\n')}`);
  expect(collected).toEqual([]);
  if (process.env.BAD_INPUT_TALLY) console.log([...tally].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n}\t${k}`).join('\n'));
  expect(anthropic.messageRequests.length).toBeGreaterThan(0);
  expect(native.responseRequests.length).toBeGreaterThan(0);
  for (const { model } of TARGETS) {
    const a = await check({ path: '/v1/responses', headers: json(plainKey), body: JSON.stringify({ model, input: 'still there?' }) });
    expect(a.status, a.text).toBe(200);
  }
  // Far more than 300 generated requests were answered.
  expect([...tally.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(300);
});
