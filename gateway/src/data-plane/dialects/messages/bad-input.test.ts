// Bad input on POST /v1/messages and /v1/messages/count_tokens, generated with fast-check: whatever the body and headers,
// the gateway answers a 4xx (or a 2xx) and never a 5xx, every error body has Anthropic's shape with agentgw's code and the
// request id, and every answer carries x-request-id. The Anthropic upstream answers 200 to anything, so a 5xx is the
// gateway's own.
import fc from 'fast-check';
import { Agent, request, validateHeaderValue } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../../../test-support/admin.js';
import { type TestGateway, startTestGateway } from '../../../test-support/gateway.js';
import { type ScriptedAnthropic, startScriptedAnthropic, textReply } from '../../../test-support/scripted-anthropic.js';

// Fixed, so the run is deterministic; set BAD_INPUT_SEED / BAD_INPUT_RUNS to explore further (BAD_INPUT_TALLY=1 prints
// how many answers of each status and code the run got).
const SEED = Number(process.env.BAD_INPUT_SEED ?? 20_250_601);
const RUNS = Number(process.env.BAD_INPUT_RUNS ?? 160);
const UPSTREAM_SECRET = 'sk-ant-upstream-secret-do-not-leak';
/** Small, so that a body over the limit is cheap to send. */
const BODY_LIMIT = 256 * 1024;

let gw: TestGateway;
let upstream: ScriptedAnthropic;
const agent = new Agent({ keepAlive: true });
/**
 * Agent keys: one without a policy; one whose policy redacts PII everywhere (its checks read every text of the body); one
 * whose cost cap lowers the output limit (clamp_output edits max_tokens and the thinking budget) and that blocks retries.
 */
let plainKey: string;
let piiKey: string;
let cappedKey: string;

beforeAll(async () => {
  upstream = await startScriptedAnthropic(() => textReply('ok'));
  gw = await startTestGateway({
    config: {
      providers: {
        anthropic: { type: 'anthropic', base_url: upstream.url, api_key: UPSTREAM_SECRET },
        mock: { type: 'mock' },
      },
      models: { 'claude-*': ['anthropic/claude-sonnet-4-5'], 'mocked-*': ['mock/mock-1'] },
      prices: { 'anthropic/claude-sonnet-4-5': { input: 3, output: 15 }, 'mock/mock-1': { input: 1, output: 4 } },
      limits: { gateway_body_bytes: BODY_LIMIT },
    },
  });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  plainKey = (await admin.agent('acme', 'plain')).api_key as string;
  await admin.policy('pii-everywhere', { tenant_id: 'acme', rules: { pii: 'redact', pii_scope: ['user', 'assistant', 'system', 'tools'] } });
  piiKey = (await admin.agent('acme', 'careful', 'pii-everywhere')).api_key as string;
  await admin.policy('capped', { tenant_id: 'acme', rules: { max_cost_per_request: 0.05, clamp_output: true, retry_block: { max_repeats: 20, window_seconds: 60 } } });
  cappedKey = (await admin.agent('acme', 'frugal', 'capped')).api_key as string;
});
afterAll(async () => {
  agent.destroy();
  await gw?.close();
  await upstream?.close();
});

// ---------------------------------------------------------------------------------------------------------------------
// What every answer must look like

/** CONTRACT's errors table: the Anthropic error type of each status and the agentgw codes it may carry. */
const ERRORS: Record<number, { type: string; codes: readonly string[] }> = {
  400: { type: 'invalid_request_error', codes: ['invalid_json', 'validation_failed', 'invalid_header', 'unknown_model'] },
  401: { type: 'authentication_error', codes: ['invalid_api_key'] },
  403: {
    type: 'permission_error',
    codes: ['model_not_allowed', 'pii_detected', 'retry_blocked', 'cost_cap_exceeded', 'policy_not_permitted', 'price_unknown', 'trace_stopped', 'agent_suspended', 'tool_not_allowed', 'tool_calls_exceeded'],
  },
  404: { type: 'not_found_error', codes: ['route_not_found', 'policy_not_found'] },
  413: { type: 'request_too_large', codes: ['body_too_large'] },
  429: { type: 'rate_limit_error', codes: ['rpm_exceeded', 'tpm_exceeded', 'upstream_rate_limited', 'daily_budget_exceeded', 'monthly_budget_exceeded', 'trace_budget_exceeded', 'tenant_daily_budget_exceeded', 'tenant_monthly_budget_exceeded'] },
};

interface Case {
  path: string;
  headers: Record<string, string>;
  /** The raw body; undefined sends none. */
  body: string | undefined;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** node:http rather than fetch or undici: it sends header values those refuse (empty ones, latin-1 bytes). */
function send(c: Case): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${gw.url}${c.path}`, { method: 'POST', headers: c.headers, agent }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(c.body);
  });
}

const cut = (s: string, n = 600) => (s.length > n ? `${s.slice(0, n)}... (${s.length} chars)` : s);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The violations of CONTRACT in one answer (empty when it is fine). */
function violations(c: Case, a: Answer): string[] {
  const out: string[] = [];
  const requestId = a.headers['x-request-id'];
  if (typeof requestId !== 'string' || !requestId) out.push('no x-request-id header');
  if (a.status >= 500) out.push(`status ${a.status}`);
  for (const secret of [plainKey, piiKey, cappedKey, UPSTREAM_SECRET]) if (a.text.includes(secret)) out.push('the answer contains a key');
  if (a.status >= 200 && a.status < 300) {
    if (String(a.headers['content-type']).startsWith('text/event-stream')) {
      // With an upstream that answers 200 to anything, a stream that started ends without an error event.
      if (/^event: error$/m.test(a.text)) out.push('the stream carries an error event');
      if (!c.path.includes('count_tokens') && !/^event: message_stop$/m.test(a.text)) out.push('the stream has no message_stop');
    } else {
      let body: unknown;
      try {
        body = JSON.parse(a.text);
      } catch {
        out.push('a 2xx body that is not JSON');
      }
      if (c.path.includes('count_tokens')) {
        if (!isRecord(body) || typeof body.input_tokens !== 'number') out.push('a count without input_tokens');
      } else if (!isRecord(body) || body.type !== 'message') out.push('a 2xx body that is not a message');
    }
    return out;
  }
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    out.push('an error body that is not JSON');
    return out;
  }
  const expected = ERRORS[a.status];
  if (!expected) out.push(`status ${a.status} is not in CONTRACT's errors table`);
  if (!isRecord(body) || body.type !== 'error') {
    out.push('error body without type "error"');
    return out;
  }
  const keys = Object.keys(body).sort().join(',');
  if (keys !== 'error,request_id,type') out.push(`error body has the keys ${keys}`);
  if (body.request_id !== requestId) out.push('request_id differs from x-request-id');
  const e = body.error;
  if (!isRecord(e)) {
    out.push('error.error is not an object');
    return out;
  }
  if (expected && e.type !== expected.type) out.push(`error.type ${String(e.type)} for status ${a.status}`);
  if (typeof e.message !== 'string' || e.message.trim().length < 10) out.push('error.message is not a sentence');
  if (typeof e.code !== 'string' || (expected && !expected.codes.includes(e.code))) out.push(`error.code ${String(e.code)} for status ${a.status}`);
  return out;
}

/** How many answers of each status and code, to see that the generators reach past the first checks. */
const tally = new Map<string, number>();

async function check(c: Case): Promise<void> {
  const a = await send(c);
  let code = '';
  try {
    code = String((JSON.parse(a.text) as { error?: { code?: unknown } }).error?.code ?? '');
  } catch {}
  const what = `${c.path.includes('count_tokens') ? 'count ' : ''}${a.status} ${code}${a.headers['x-agentgw-clamped-max-tokens'] ? ' clamped' : ''}`;
  tally.set(what, (tally.get(what) ?? 0) + 1);
  const found = violations(c, a);
  if (found.length > 0) {
    const shown = { ...c.headers };
    for (const k of Object.keys(shown)) shown[k] = shown[k]!.replace(plainKey, '<plainKey>').replace(piiKey, '<piiKey>').replace(cappedKey, '<cappedKey>');
    throw new Error(
      `${found.join('; ')}\nPOST ${c.path}\nheaders: ${JSON.stringify(shown)}\nbody: ${c.body === undefined ? '(none)' : cut(c.body)}\n` +
        `-> ${a.status} ${cut(a.text)}`,
    );
  }
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
  fc.constantFrom<Json>(-1, 0, -0, 0.5, 1.0000001, 10_000_000, 5_000_000, 10_000_001, 1e308, -1e308, 2 ** 53, 2 ** 31, -(2 ** 31), 1e-300, '64', '1e3', null),
  fc.double({ noNaN: true }), // infinities are sent as null
  fc.integer(),
);

const base64Image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };

/** Content blocks of unknown or malformed shape. */
const badBlock: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    null, 'text', 5, [], {}, { type: '' }, { type: 5 }, { type: null }, { type: 'x'.repeat(200) }, { type: 'video', url: 'x' }, { type: 'unknown_block' },
    // text
    { type: 'text' }, { type: 'text', text: 5 }, { type: 'text', text: null }, { type: 'text', text: ['x'] }, { type: 'text', text: '' },
    { type: 'text', text: 'x', cache_control: 'bad' }, { type: 'text', text: 'x', citations: 'bad' }, { type: 'text', text: 'x', citations: [null, 5] },
    // tool_result
    { type: 'tool_result' }, { type: 'tool_result', tool_use_id: 5 }, { type: 'tool_result', tool_use_id: '' },
    { type: 'tool_result', tool_use_id: 't1', content: [base64Image] }, { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a' }, base64Image] },
    { type: 'tool_result', tool_use_id: 't1', content: 5 }, { type: 'tool_result', tool_use_id: 't1', content: [null] }, { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text' }] },
    { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'document', source: { type: 'text', data: 'd' } }] }, { type: 'tool_result', tool_use_id: 't1', content: { type: 'text', text: 'x' } },
    { type: 'tool_result', tool_use_id: 't1', content: 'x', is_error: 'yes' },
    // tool_use
    { type: 'tool_use', id: 't1', name: 'f' }, { type: 'tool_use', name: 'f', input: {} }, { type: 'tool_use', id: 't1', input: {} }, { type: 'tool_use', id: 5, name: 5, input: 5 },
    { type: 'tool_use', id: 't1', name: 'f', input: 'not an object' }, { type: 'tool_use', id: 't1', name: 'f', input: [1, 2] }, { type: 'tool_use', id: 't1', name: 'f', input: null },
    // images
    { type: 'image' }, { type: 'image', source: 'x' }, { type: 'image', source: null }, { type: 'image', source: { type: 'file', file_id: 'file_1' } }, { type: 'image', source: { type: 'base64' } },
    { type: 'image', source: { type: 'base64', media_type: 5, data: 5 } }, { type: 'image', source: { type: 'url' } }, { type: 'image', source: { type: 'nope' } },
    // documents
    { type: 'document' }, { type: 'document', source: null }, { type: 'document', source: 'x' }, { type: 'document', source: {} }, { type: 'document', source: { type: 'base64', media_type: 'text/plain', data: 'eA==' } },
    { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 5 } }, { type: 'document', source: { type: 'text' } }, { type: 'document', source: { type: 'text', data: 5 } },
    { type: 'document', source: { type: 'url' } }, { type: 'document', source: { type: 'url', url: 'https://example.com/x.pdf' } }, { type: 'document', source: { type: 'file', file_id: 'file_1' } },
    { type: 'document', source: { type: 'content' } }, { type: 'document', source: { type: 'content', content: 5 } }, { type: 'document', source: { type: 'content', content: [{ type: 'video' }] } },
    { type: 'document', source: { type: 'content', content: [null] } }, { type: 'document', source: { type: 'content', content: [{ type: 'image', source: null }] } }, { type: 'document', source: { type: 'text', data: 'd' }, title: 5, context: [] },
    // thinking
    { type: 'thinking', thinking: 'hmm' }, { type: 'thinking' }, { type: 'thinking', thinking: 5, signature: 5 }, { type: 'redacted_thinking' }, { type: 'redacted_thinking', data: 5 },
    // server tools
    { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
    { type: 'mcp_tool_use' }, { type: 'container_upload', file_id: 'f' }, { type: 'search_result', source: 5 },
  ),
  fc.record({ type: fc.oneof(fc.constantFrom('text', 'image', 'document', 'tool_use', 'tool_result', 'thinking'), nastyString), text: wrongValue, source: wrongValue, input: wrongValue, content: wrongValue }, { requiredKeys: ['type'] }) as fc.Arbitrary<Json>,
);

const role: fc.Arbitrary<Json> = fc.oneof(fc.constantFrom<Json>('user', 'assistant', 'system'), fc.constantFrom<Json>('tool', 'developer', 'USER', '', null, 5, ['user'], 'user\u0000'));

const badMessage: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ role, content: fc.oneof(fc.array(badBlock, { minLength: 1, maxLength: 3 }), wrongValue, nastyString) }) as fc.Arbitrary<Json>,
  fc.record({ role }) as fc.Arbitrary<Json>,
  fc.record({ content: fc.constant('hi') }) as fc.Arbitrary<Json>,
  fc.constantFrom<Json>(null, 'hi', 5, [], {}, { role: 'user', content: 'hi', name: 'x' }, { role: 'user', content: [] }, { role: 'user', content: '' }),
);

const badTools: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    'tools', 5, {}, [null], [5], [{}], [{ name: '' }], [{ name: 5 }], [{ name: 'x'.repeat(300) }], [{ name: 'f', input_schema: 'x' }], [{ name: 'f', input_schema: [] }],
    [{ name: 'f', input_schema: { type: 5, properties: 'x' } }], [{ name: 'f', type: 5 }], [{ name: 'f', type: 'custom', input_schema: null }], [{ type: 'web_search_20250305', name: 'web_search' }],
    [{ type: 'bash_20250124', name: 'bash' }], [{ name: 'f', description: 5, strict: 'yes' }], [{ name: 'f', input_schema: { type: 'object' }, cache_control: 5 }], [{ name: 'f' }, { name: 'f' }],
  ),
  fc.array(fc.record({ name: fc.oneof(nastyString, wrongValue), input_schema: wrongValue, type: wrongValue }, { requiredKeys: [] }), { maxLength: 3 }) as fc.Arbitrary<Json>,
);

const badToolChoice: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>('auto', 'any', 5, [], {}, { type: 'tool' }, { type: 'tool', name: '' }, { type: 'tool', name: 5 }, { type: 'bogus' }, { type: 'any' }, { type: 'tool', name: 'missing' },
    { type: 'auto', disable_parallel_tool_use: 'yes' }, { type: 'none', disable_parallel_tool_use: true }, { type: null }),
  wrongValue,
);

const badSystem: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(5, {}, [null], [5], [{}], [{ type: 'text' }], [{ type: 'text', text: 5 }], [{ type: 'image', source: {} }], [{ type: 'text', text: 'x', cache_control: { type: 'nope' } }]),
  nastyString,
  wrongValue,
);

const badThinking: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>('enabled', 5, {}, { type: 'enabled' }, { type: 'enabled', budget_tokens: 0 }, { type: 'enabled', budget_tokens: -5 }, { type: 'enabled', budget_tokens: 1e308 },
    { type: 'enabled', budget_tokens: 'lots' }, { type: 'enabled', budget_tokens: 1.5 }, { type: 'enabled', budget_tokens: 10_000_000 }, { type: 'sometimes' }, { type: 'adaptive', budget_tokens: null }),
  fc.record({ type: fc.constantFrom('enabled', 'disabled', 'adaptive'), budget_tokens: hugeOrNegative }) as fc.Arbitrary<Json>,
);

/** Every documented field, and some unknown ones. */
const FIELDS = [
  'model', 'messages', 'max_tokens', 'system', 'stream', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'metadata', 'tools', 'tool_choice', 'thinking',
  'output_config', 'service_tier', 'container', 'mcp_servers', 'inference_geo', 'context_management', 'cache_control', 'speed', 'diagnostics', 'betas', 'n', 'frobnicate',
] as const;

type Patch = { label: string; apply: (body: Record<string, Json>) => void };

const patch = (label: string, apply: (body: Record<string, Json>) => void): Patch => ({ label, apply });

const setField = (field: string, value: fc.Arbitrary<Json>): fc.Arbitrary<Patch> => value.map((v) => patch(`${field}=${cut(JSON.stringify(v), 80)}`, (b) => void (b[field] = v)));

/** Nesting built as a value; deeper bodies are built as text (see rawBody). */
const nested = (depth: number, leaf: Json, asArray: boolean): Json => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
  return v;
};

/** One change that makes a valid body malformed. */
const badPatch: fc.Arbitrary<Patch> = fc.oneof(
  // a field of the wrong type, any field
  fc.tuple(fc.constantFrom(...FIELDS), wrongValue).map(([f, v]) => patch(`${f}=${cut(JSON.stringify(v), 80)}`, (b) => void (b[f] = v))),
  // a required field missing
  fc.constantFrom('model', 'max_tokens', 'messages').map((f) => patch(`no ${f}`, (b) => void delete b[f])),
  // numbers out of range
  fc.tuple(fc.constantFrom('max_tokens', 'temperature', 'top_p', 'top_k'), hugeOrNegative).map(([f, v]) => patch(`${f}=${JSON.stringify(v)}`, (b) => void (b[f] = v))),
  setField('model', fc.oneof(nastyString, fc.constantFrom<Json>('nope/nope', 'anthropic/', '/x', 'mock/', 'claude-*', 'x'.repeat(300), 'anthropic/claude\u0000', 'mocked-\ud800'))),
  // roles, messages and content blocks
  fc.tuple(fc.array(badMessage, { minLength: 1, maxLength: 3 }), fc.boolean()).map(([ms, prepend]) =>
    patch(`messages+=${cut(JSON.stringify(ms), 120)}`, (b) => void (b.messages = prepend ? [...ms, { role: 'user', content: 'hi' }] : [{ role: 'user', content: 'hi' }, ...ms])),
  ),
  fc.tuple(fc.constantFrom('user', 'assistant'), fc.array(badBlock, { minLength: 1, maxLength: 3 })).map(([r, blocks]) =>
    patch(`${r} blocks ${cut(JSON.stringify(blocks), 120)}`, (b) => void (b.messages = [{ role: 'user', content: 'hi' }, { role: r, content: blocks }, { role: 'user', content: 'go on' }])),
  ),
  setField('messages', fc.constantFrom<Json>([], {}, 'hi', [[]], [{ role: 'user', content: 'hi' }, null])),
  setField('tools', badTools),
  fc.tuple(badToolChoice, fc.boolean()).map(([tc, withTools]) =>
    patch(`tool_choice=${cut(JSON.stringify(tc), 80)}${withTools ? ' with tools' : ''}`, (b) => {
      b.tool_choice = tc;
      if (withTools) b.tools = [{ name: 'f', input_schema: { type: 'object' } }];
    }),
  ),
  setField('system', badSystem),
  setField('thinking', badThinking),
  setField('stop_sequences', fc.constantFrom<Json>('stop', [5], [null], ['a', 'b', 'c', 'd', 'e'], Array.from({ length: 10_001 }, () => 'x'), ['x'.repeat(10_001)])),
  setField('metadata', fc.constantFrom<Json>('x', [], { user_id: 5 }, { user_id: 'jane.doe@example.com' }, { other: 1 })),
  setField('output_config', fc.constantFrom<Json>('x', [], { effort: 'extreme' }, { effort: 5 }, { format: 'json' }, { format: { type: 'json_schema' } }, { format: { type: 'json_schema', schema: 5 } }, { other: 1 })),
  setField('stream', fc.constantFrom<Json>('true', 1, null, [], {})),
  // strings with NUL and lone surrogates wherever text goes
  fc.tuple(nastyString, fc.constantFrom('user', 'system', 'tool_result', 'tool_input', 'tool_name', 'stop')).map(([s, where]) =>
    patch(`${where} text ${JSON.stringify(s.slice(0, 20))}`, (b) => {
      if (where === 'user') b.messages = [{ role: 'user', content: [{ type: 'text', text: s }] }];
      else if (where === 'system') b.system = s;
      else if (where === 'tool_result') b.messages = [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { q: s } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: s }] }];
      else if (where === 'tool_input') b.messages = [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', id: s, name: 'f', input: { [s]: s } }] }];
      else if (where === 'tool_name') b.tools = [{ name: s, input_schema: { type: 'object', properties: { [s]: { type: 'string' } } } }];
      else b.stop_sequences = [s];
    }),
  ),
  // nesting, as deep as a JSON value can be built here
  fc.tuple(fc.integer({ min: 50, max: 1500 }), fc.boolean(), fc.constantFrom('input', 'schema', 'content', 'metadata')).map(([depth, asArray, where]) =>
    patch(`${where} nested ${depth}`, (b) => {
      const deep = nested(depth, 'x', asArray);
      if (where === 'input') b.messages = [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { deep } }] }];
      else if (where === 'schema') b.tools = [{ name: 'f', input_schema: { type: 'object', properties: { deep } } }];
      else if (where === 'content') b.messages = [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'x', deep }] }] }];
      else b.metadata = { deep };
    }),
  ),
);

const NATIVE_MODELS = ['claude-sonnet-4-5', 'anthropic/claude-sonnet-4-5', 'claude-3-haiku'];
const TRANSLATED_MODELS = ['mocked-model', 'mock/mock-1'];

/** A valid body for that path, then one to three malformed changes. */
const badBody = (models: readonly string[], stream: boolean): fc.Arbitrary<{ body: Json; labels: string[] }> =>
  fc.tuple(fc.constantFrom(...models), fc.array(badPatch, { minLength: 1, maxLength: 3 })).map(([model, patches]) => {
    const body: Record<string, Json> = { model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };
    if (stream) body.stream = true;
    for (const p of patches) p.apply(body);
    return { body, labels: patches.map((p) => p.label) };
  });

/** Bodies that are no JSON object, or that only text can build. */
const rawBody = (model: string): fc.Arbitrary<string | undefined> => {
  const valid = JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
  const deep = (n: number, open: string, close: string) => open.repeat(n) + close.repeat(n);
  return fc.oneof(
    fc.constantFrom<string | undefined>(
      undefined, '', ' ', '{', '}', 'null', 'true', '42', '"x"', '[]', '[{}]', 'undefined', 'NaN', '{"model":', '\u0000', '{"a":1}{"b":2}', `${valid},`, `${valid}garbage`,
      `\ufeff${valid}`, valid.replace('{', '{"__proto__":{"x":1},'), valid.replace('{', '{"constructor":{"prototype":{"x":1}},'), valid.replace('"hi"', '"\\ud800"'),
      valid.replace('"hi"', '"\\u0000"'), valid.replace('"hi"', '"\\x41"'), valid.replace('16', '1e400'), valid.replace('16', '-1e400'), valid.replace('16', '016'), valid.replace('{', '{"model":"a",'),
      valid.replace('"hi"', `"${'x'.repeat(BODY_LIMIT)}"`), 'model=claude&max_tokens=1',
    ),
    fc.constantFrom(20_000, 5_000).chain((n) =>
      fc.constantFrom(
        valid.replace('"hi"', deep(n, '[', ']')),
        valid.replace('"hi"', `[{"type":"tool_result","tool_use_id":"t","content":${deep(n, '[', ']')}}]`),
        valid.replace('{', `{"metadata":{"x":${deep(n, '{"a":', '}').replace(/\{"a":\}/, '{}')}},`),
        valid.replace('{', `{"tools":[{"name":"f","input_schema":{"x":${deep(n, '[', ']')}}}],`),
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

type KeyChoice = 'plain' | 'pii' | 'capped';
const KEYS: readonly KeyChoice[] = ['plain', 'pii', 'capped'];
const keyOf = (k: KeyChoice) => (k === 'plain' ? plainKey : k === 'pii' ? piiKey : cappedKey);

/** Authentication variants; the valid ones weigh most so that bodies get past it. */
const authHeaders: fc.Arbitrary<(key: string) => Record<string, string>> = fc.oneof(
  { weight: 6, arbitrary: fc.constant((key: string) => ({ 'x-api-key': key })) },
  { weight: 4, arbitrary: fc.constant((key: string) => ({ authorization: `Bearer ${key}` })) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<(key: string) => Record<string, string>>(
      (key) => ({ authorization: `bearer ${key}` }),
      (key) => ({ authorization: `Bearer ${key}`, 'x-api-key': 'agk_wrong' }),
      (key) => ({ authorization: 'Bearer agk_wrong', 'x-api-key': key }),
      (key) => ({ authorization: `Basic ${key}` }),
      (key) => ({ authorization: `Bearer  ${key}` }),
      (key) => ({ authorization: `Bearer ${key} extra` }),
      (key) => ({ 'x-api-key': `Bearer ${key}` }),
      (key) => ({ 'x-api-key': `${key} ` }),
      (key) => ({ 'x-api-key': key.toUpperCase() }),
      () => ({ 'x-api-key': 'agk_' }),
      () => ({ 'x-api-key': 'x'.repeat(2000) }),
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
    'x-claude-code-session-id': headerValue,
    'anthropic-version': fc.oneof(fc.constantFrom('2023-06-01', '2023-01-01', '1999-12-31', 'latest', '', 'x'.repeat(2000), '2023-06-01, 2023-06-01'), headerValue),
    'anthropic-beta': fc.oneof(fc.constantFrom('interleaved-thinking-2025-05-14', 'bogus-beta', ',,,', 'a'.repeat(2000)), headerValue),
    'x-agent-policy': fc.constantFrom('BAD ID', 'missing-policy', 'pii-everywhere', 'capped', ''),
    'content-type': fc.constantFrom('text/plain', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/jsonx', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', ''),
  },
  { requiredKeys: [] },
);

const PATHS = ['/v1/messages', '/v1/messages?beta=true', '/v1/messages/', '/v1/messages?beta=false&x=%ZZ'];

function headersFor(key: string, auth: (key: string) => Record<string, string>, extra: Record<string, string>, hasBody: boolean): Record<string, string> {
  const out: Record<string, string> = { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...auth(key), ...extra };
  // An empty content-type stands for none.
  if (out['content-type'] === '') delete out['content-type'];
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------

describe('malformed /v1/messages bodies are 4xx in Anthropic shape, never 5xx', () => {
  const paths = [
    { name: 'native', models: NATIVE_MODELS, stream: false },
    { name: 'native, streamed', models: NATIVE_MODELS, stream: true },
    { name: 'translated', models: TRANSLATED_MODELS, stream: false },
    { name: 'translated, streamed', models: TRANSLATED_MODELS, stream: true },
  ] as const;
  test.each(paths)('$name', async ({ models, stream }) => {
    await fc.assert(
      fc.asyncProperty(badBody(models, stream), fc.constantFrom(...KEYS), fc.constantFrom(...PATHS.slice(0, 2)), async ({ body }, key, path) => {
        await check({ path, headers: { 'content-type': 'application/json', 'x-api-key': keyOf(key) }, body: JSON.stringify(body) });
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

describe('malformed headers and bodies that are no JSON object', () => {
  test.each([
    { name: 'native', model: 'claude-sonnet-4-5' },
    { name: 'translated', model: 'mocked-model' },
  ])('$name', async ({ model }) => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { weight: 1, arbitrary: rawBody(model) },
          { weight: 2, arbitrary: fc.boolean().map((stream) => JSON.stringify({ model, max_tokens: 16, stream, messages: [{ role: 'user', content: 'hi' }] })) },
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

describe('malformed /v1/messages/count_tokens requests', () => {
  test.each([
    { name: 'native', models: NATIVE_MODELS },
    { name: 'translated', models: TRANSLATED_MODELS },
  ])('$name', async ({ models }) => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 4, arbitrary: badBody(models, false).map(({ body }) => JSON.stringify(body)) }, { weight: 1, arbitrary: rawBody(models[0]!) }),
        fc.constantFrom(...KEYS),
        authHeaders,
        fc.oneof({ weight: 3, arbitrary: fc.constant<Record<string, string>>({}) }, { weight: 1, arbitrary: extraHeaders }),
        fc.constantFrom('/v1/messages/count_tokens', '/v1/messages/count_tokens?beta=true'),
        async (body, key, auth, extra, path) => {
          await check({ path, headers: headersFor(keyOf(key), auth, extra, body !== undefined), body });
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

test('the property really reaches both upstreams', () => {
  if (process.env.BAD_INPUT_TALLY) console.log([...tally].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n}\t${k}`).join('\n'));
  // Not every generated body is refused: some get through to the Anthropic upstream (the mock one answers in process).
  expect(upstream.messageRequests.length).toBeGreaterThan(0);
  expect(upstream.requests.some((r) => r.path.startsWith('/v1/messages/count_tokens'))).toBe(true);
});

describe('output limits and thinking budgets a cost cap must lower', () => {
  test('clamped or refused, never a 5xx', async () => {
    let clamped = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...NATIVE_MODELS, ...TRANSLATED_MODELS),
        fc.boolean(),
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.option(fc.record({ type: fc.constantFrom('enabled', 'adaptive', 'disabled'), budget_tokens: fc.oneof(fc.integer({ min: 1, max: 10_000_000 }), fc.constantFrom(1023, 1024, 1025)) }), { nil: undefined }),
        async (model, stream, maxTokens, thinking) => {
          const body = { model, max_tokens: maxTokens, stream, messages: [{ role: 'user', content: 'hi' }], ...(thinking ? { thinking } : {}) };
          const c = { path: '/v1/messages', headers: { 'content-type': 'application/json', 'x-api-key': cappedKey, 'x-agent-trace-id': `clamp-${maxTokens}` }, body: JSON.stringify(body) };
          const a = await send(c);
          if (a.headers['x-agentgw-clamped-max-tokens']) clamped++;
          const found = violations(c, a);
          if (found.length > 0) throw new Error(`${found.join('; ')}\nbody: ${c.body}\n-> ${a.status} ${cut(a.text)}`);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    expect(clamped).toBeGreaterThan(0);
  });
});

describe('what a translated target cannot take is a 400 naming the field; the native path passes it on', () => {
  const user = (content: Json): Json => [{ role: 'user', content }];
  const cases: Array<[string, Record<string, Json>, string]> = [
    ['an image inside a tool_result', { messages: user([{ type: 'tool_result', tool_use_id: 't1', content: [base64Image] }]) }, 'messages.0.content.0.content.0'],
    ['a tool_result without tool_use_id', { messages: user([{ type: 'tool_result', content: 'x' }]) }, 'messages.0.content.0.tool_use_id'],
    ['a tool_use without a name', { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', input: {} }] }] }, 'messages.1.content.0.name'],
    ['a document with a URL source', { messages: user([{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }]) }, 'messages.0.content.0.source'],
    ['a document whose base64 source is not a PDF', { messages: user([{ type: 'document', source: { type: 'base64', media_type: 'text/plain', data: 'eA==' } }]) }, 'messages.0.content.0.source'],
    ['a text document without data', { messages: user([{ type: 'document', source: { type: 'text' } }]) }, 'messages.0.content.0.source.data'],
    ['an image from the Files API', { messages: user([{ type: 'image', source: { type: 'file', file_id: 'file_1' } }]) }, 'messages.0.content.0.source'],
    ['a thinking block in a user turn', { messages: user([{ type: 'thinking', thinking: 'hmm' }]) }, 'messages.0.content.0'],
    ['an unknown block type', { messages: user([{ type: 'hologram' }]) }, 'messages.0.content.0'],
    ['a server tool', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools.0'],
    ['a tool whose input is not an object', { tools: [{ name: 'f', input_schema: { type: 'string' } }] }, 'tools.0.input_schema.type'],
    ['a tool schema without a type', { tools: [{ name: 'f', input_schema: {} }] }, 'tools.0.input_schema.type'],
    ['tool_choice any without tools', { tool_choice: { type: 'any' } }, 'tool_choice'],
    ['top_k', { top_k: 5 }, 'top_k'],
    ['an unknown top-level field', { frobnicate: 1 }, 'frobnicate'],
    ['five stop sequences', { stop_sequences: ['a', 'b', 'c', 'd', 'e'] }, 'stop_sequences'],
    ['an unknown output_config field', { output_config: { verbosity: 'high' } }, 'output_config.verbosity'],
  ];
  test.each(cases)('%s', async (_name, fields, param) => {
    for (const stream of [false, true]) {
      const body = { model: 'mocked-model', max_tokens: 64, messages: user('hi'), ...fields, stream };
      const translated = await send({ path: '/v1/messages', headers: { 'content-type': 'application/json', 'x-api-key': plainKey }, body: JSON.stringify(body) });
      expect(violations({ path: '/v1/messages', headers: {}, body: undefined }, translated)).toEqual([]);
      expect(translated.status, translated.text).toBe(400);
      const error = (JSON.parse(translated.text) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('validation_failed');
      expect(error.message).toContain(param);
      const native = await send({ path: '/v1/messages', headers: { 'content-type': 'application/json', 'x-api-key': plainKey }, body: JSON.stringify({ ...body, model: 'claude-sonnet-4-5' }) });
      expect(native.status, native.text).toBe(200);
    }
  });
});

// Bugs this file found outside the messages dialect, held fixed.
describe('found by generated input', () => {
  test('a field of the wrong type is called invalid, not missing', async () => {
    const a = await send({
      path: '/v1/messages',
      headers: { 'content-type': 'application/json', 'x-api-key': plainKey },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: '64', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(a.status).toBe(400);
    expect((JSON.parse(a.text) as { error: { message: string } }).error.message).not.toMatch(/^Missing required field/);
  });

  test('a request the HTTP parser refuses, on a connection that already served one, is answered', async () => {
    const oneSocket = new Agent({ keepAlive: true, maxSockets: 1 });
    const on = (c: Case) =>
      new Promise<Answer>((resolve, reject) => {
        const req = request(`${gw.url}${c.path}`, { method: 'POST', headers: c.headers, agent: oneSocket }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (d: Buffer) => parts.push(d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
        });
        req.on('error', reject);
        req.end(c.body);
      });
    try {
      const first = await on({ path: '/v1/messages', headers: { 'content-type': 'application/json', 'x-api-key': plainKey }, body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(first.status).toBe(200);
      // Headers over Node's 16 KiB: refused by the parser, which then finds bytes already written on this socket.
      const second = await on({ path: '/v1/messages', headers: { 'x-api-key': plainKey, 'anthropic-beta': 'x'.repeat(20_000) }, body: undefined });
      expect(second.status).toBe(400);
    } finally {
      oneSocket.destroy();
    }
  });

  test('a request the HTTP parser refuses on /v1/messages is answered in Anthropic shape', async () => {
    const fresh = new Agent({ keepAlive: false });
    try {
      const a = await new Promise<Answer>((resolve, reject) => {
        const req = request(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': plainKey, 'anthropic-beta': 'x'.repeat(20_000) }, agent: fresh }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (d: Buffer) => parts.push(d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(a.status).toBe(400);
      expect(violations({ path: '/v1/messages', headers: {}, body: undefined }, a)).toEqual([]);
    } finally {
      fresh.destroy();
    }
  });
});
