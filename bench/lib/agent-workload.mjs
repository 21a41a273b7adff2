// Agent-sized requests: a recorded Claude Code request (about 76 KB, 24 tools) as Anthropic Messages, and the same
// conversation recast as Chat Completions, so every dialect is measured on a body of the same size; and recorded Codex
// requests (OpenAI Responses, about 38 KB, 10 tools) replayed as Codex sends them, the conversation growing step by step.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { messagesToChatRequest } from '../../gateway/dist/translate/messages-to-chat-request.js';
import { CONCURRENT_RUNS, STEPS_PER_TRACE, TRACE_MODE, headersFor } from './workload.mjs';

const FIXTURE = new URL('../../gateway/src/data-plane/dialects/messages/__fixtures__/claude-code-request.json', import.meta.url);
const CODEX_FIXTURES = new URL('../../gateway/src/data-plane/dialects/responses/__fixtures__/', import.meta.url);
/** Replaced by a request counter, so no two requests are the same (retry_block must never trip). */
const MARK = '@@BENCH_N@@';

/**
 * The native model (an Anthropic provider on the mock) and the OpenAI-format one (chat, and messages translated);
 * for Codex, the native model (an OpenAI provider, which speaks the Responses API) and Codex's own model as recorded,
 * which the bench's gateway config routes to the Anthropic provider (`models: {gpt-5.5: [anthropic/...]}`).
 */
export const AGENT_MODELS = { anthropic: 'anthropic/claude-sonnet-4-5', openai: 'openai/gpt-4o-mini', responses: 'openai/gpt-5.5', codex: 'gpt-5.5' };

/**
 * The same models on providers whose mock paths hold back everything after the first text event (`/slow-text/`), for
 * the time to the first text byte (BENCH_TOOL_RULES=compare); Codex's slow model is an alias of its own.
 */
export const SLOW_TEXT_MODELS = {
  anthropic: 'anthropic-slowtext/claude-sonnet-4-5',
  openai: 'openai-slowtext/gpt-4o-mini',
  responses: 'openai-slowtext/gpt-5.5',
  codex: 'gpt-5.5-slowtext',
};
/** A model whose mock answer is a Bash tool call the 10-rule set denies (`/tool-call/`): proves the rules are live. */
export const TOOL_CALL_MODEL = 'anthropic-toolcall/claude-sonnet-4-5';

/** The gateway configuration the Codex workloads need: the alias for Codex's model, and a price for the native one. */
export const AGENT_GATEWAY_CONFIG = {
  models: { [AGENT_MODELS.codex]: [AGENT_MODELS.anthropic] },
  // gpt-5.5 is not in the built-in table: gpt-5's price, so max_cost_per_request has a worst case to check.
  prices: { [AGENT_MODELS.responses]: { input: 1.25, output: 10, cached_input: 0.125, max_output_tokens: 128_000, context_window: 400_000 } },
};

/** What BENCH_TOOL_RULES=compare adds to the gateway config: the slow-text and tool-call providers, alias and price. */
export function toolRulesCompareConfig(mockUrl) {
  return {
    providers: {
      'openai-slowtext': { type: 'openai', base_url: `${mockUrl}/slow-text/v1`, api_key: 'sk-bench' },
      'anthropic-slowtext': { type: 'anthropic', base_url: `${mockUrl}/slow-text/v1`, api_key: 'sk-bench' },
      'anthropic-toolcall': { type: 'anthropic', base_url: `${mockUrl}/tool-call/v1`, api_key: 'sk-bench' },
    },
    models: { [SLOW_TEXT_MODELS.codex]: [SLOW_TEXT_MODELS.anthropic] },
    prices: { [SLOW_TEXT_MODELS.responses]: AGENT_GATEWAY_CONFIG.prices[AGENT_MODELS.responses] },
  };
}

function recorded() {
  const body = JSON.parse(readFileSync(FIXTURE, 'utf8'));
  const first = body.messages[0];
  const blocks = typeof first.content === 'string' ? [{ type: 'text', text: first.content }] : first.content;
  blocks[blocks.length - 1].text += ` (step ${MARK})`;
  first.content = blocks;
  return body;
}

/** Body templates split at the counter mark: a request is parts.join(counter), with no JSON work per request. */
function template(body) {
  return JSON.stringify(body).split(MARK);
}

let counter = 0;

const anthropicHeaders = (key, n) => ({ ...headersFor(key, n), 'anthropic-version': '2023-06-01' });

/**
 * A workload of one fixed body template: `parts.join(counter)`, the same size for every request.
 * `body`, `headers` and `bodyBytes` are what run.mjs uses for every agent workload.
 */
function fixedWorkload(name, path, body, model, headers) {
  const parts = {
    stream: template({ ...body, model, stream: true, ...(path.endsWith('completions') ? { stream_options: { include_usage: true } } : {}) }),
    plain: template({ ...body, model, stream: false }),
  };
  const answered = path === '/v1/messages' ? ['"type":"message"', 'event: message_stop'] : ['"object":"chat.completion"', 'data: [DONE]'];
  return {
    name,
    path,
    headers,
    /** What a complete answer holds, non-streamed and streamed. */
    answered: (stream) => answered[stream ? 1 : 0],
    body: ({ stream }) => {
      const n = counter++;
      return { n, json: (stream ? parts.stream : parts.plain).join(String(n)) };
    },
    bodyBytes: (stream) => Buffer.byteLength((stream ? parts.stream : parts.plain).join('0')),
  };
}

// ---- Codex (OpenAI Responses) -------------------------------------------------------------------------------------

const readJson = (name) => JSON.parse(readFileSync(new URL(name, CODEX_FIXTURES), 'utf8'));
/** The recording's session id (its trace id): in the session-id, thread-id, window and request-id headers and in the body. */
const RECORDED_SESSION = '01a212e9-880a-78f1-88d8-76400c93f835';
const ITEMS = '@@BENCH_ITEMS@@';
const RECORDED_INPUT_ITEMS = 4;

/**
 * A template split at the recorded session id and at ITEMS: [literal, slot, literal, slot, ...] where a slot is
 * 'session' or 'items'. Rendering is string concatenation only.
 */
function compile(text) {
  const out = [];
  for (const [i, piece] of text.split(ITEMS).entries()) {
    if (i > 0) out.push('items');
    for (const [j, literal] of piece.split(RECORDED_SESSION).entries()) {
      if (j > 0) out.push('session');
      out.push(literal);
    }
  }
  return out;
}

function render(compiled, values) {
  let s = '';
  for (let i = 0; i < compiled.length; i++) s += i % 2 === 0 ? compiled[i] : values[compiled[i]];
  return s;
}

/**
 * The function_call Codex echoes and the function_call_output it adds at step k (1-based) of a run, as in the
 * recording (codex-tool-output-request.json), with their own ids and command: the items' JSON, each led by a comma.
 */
function stepItems(call, output, steps) {
  const items = [''];
  for (let k = 1; k < steps; k++) {
    const callId = `call_bench_${k}`;
    // Step 1 is the recording's own pair; later ones the same shapes with their own ids and file name.
    const fc = k === 1 ? call : { ...call, id: `fc_bench${String(k).padStart(19, '0')}`, arguments: JSON.stringify({ cmd: `echo hi > note${k}.txt && cat note${k}.txt` }), call_id: callId };
    const fco = k === 1 ? output : { ...output, id: `fco_01a212e9-88b7-7f50-b0eb-${String(k).padStart(12, '0')}`, call_id: callId };
    items.push(`${items[k - 1]},${JSON.stringify(fc)},${JSON.stringify(fco)}`);
  }
  return items;
}

/**
 * Where request n of a Codex workload is: its run's trace id (Codex's session-id) and step. As agents send them,
 * CONCURRENT_RUNS runs are in flight, each STEPS_PER_TRACE steps long, one step per request of its slot; the slots are
 * staggered (slot s starts at step s), so any CONCURRENT_RUNS consecutive requests hold every step equally often and
 * the proxy and the gateway get bodies of the same sizes whatever their place in the run.
 * BENCH_TRACES=sequential: one run at a time.
 */
const codexRuns = new Map();
function codexStep(n) {
  if (TRACE_MODE === 'sequential') return { step: n % STEPS_PER_TRACE, session: `bench-codex-run-${Math.floor(n / STEPS_PER_TRACE)}` };
  const slot = n % CONCURRENT_RUNS;
  const g = Math.floor(n / CONCURRENT_RUNS) + slot;
  const key = `${slot}:${Math.floor(g / STEPS_PER_TRACE)}`;
  let session = codexRuns.get(key);
  if (session === undefined) {
    session = randomUUID();
    codexRuns.set(key, session);
    if (codexRuns.size > 4 * CONCURRENT_RUNS) codexRuns.delete(codexRuns.keys().next().value);
  }
  return { step: g % STEPS_PER_TRACE, session };
}

/** Codex's recorded headers (codex-headers.json) with the run's session id; the bearer is the target's key. */
function codexHeaderTemplate(recorded, stream) {
  const entries = [];
  for (const [k, v] of Object.entries(recorded)) {
    if (k === 'host' || k === 'content-length' || k === 'authorization') continue;
    entries.push([k, compile(k === 'accept' && !stream ? 'application/json' : v)]);
  }
  return entries;
}

/**
 * A Codex workload: step 0 is the recorded first request (codex-request.json), step k the recorded second request
 * (codex-tool-output-request.json) with k function_call + function_call_output pairs after the 4 recorded input items.
 * Every body is distinct: the run's session id is in prompt_cache_key and client_metadata, the step in the items.
 */
function codexWorkload(name, model, native) {
  const first = readJson('codex-request.json');
  const next = readJson('codex-tool-output-request.json');
  const [headers0, headers1] = readJson('codex-headers.json').map((r) => r.headers);
  const recordedItems = next.input.slice(RECORDED_INPUT_ITEMS);
  const call = recordedItems.find((i) => i.type === 'function_call');
  const output = recordedItems.find((i) => i.type === 'function_call_output');
  const items = stepItems(call, output, STEPS_PER_TRACE);
  // Step k's body: the recorded second request with its two step items replaced by ITEMS (k pairs, or none).
  const growing = { ...next, input: [...next.input.slice(0, RECORDED_INPUT_ITEMS), ITEMS] };
  const build = (body, stream) => compile(JSON.stringify({ ...body, model, stream }).replace(`,"${ITEMS}"`, ITEMS));
  const templates = { stream: [build(first, true), build(growing, true)], plain: [build(first, false), build(growing, false)] };
  const headerTemplates = {
    stream: [codexHeaderTemplate(headers0, true), codexHeaderTemplate(headers1, true)],
    plain: [codexHeaderTemplate(headers0, false), codexHeaderTemplate(headers1, false)],
  };
  /** The request whose body was made last: load() asks for its headers right after. */
  let last = { n: -1, step: 0, session: '', stream: true };
  const jsonOf = (stream, step, session) => render(templates[stream ? 'stream' : 'plain'][step === 0 ? 0 : 1], { session, items: items[step] });
  return {
    name,
    path: '/v1/responses',
    // The mock's own item id: a native workload's answer is the mock's Responses answer, passed on.
    answered: (stream) => (stream ? 'event: response.completed' : '"status":"completed"'),
    native: native ? '"msg_bench_responses"' : null,
    body: ({ stream }) => {
      const n = counter++;
      last = { n, stream, ...codexStep(n) };
      return { n, json: jsonOf(stream, last.step, last.session) };
    },
    headers: (key, n) => {
      const { step, session, stream } = last.n === n ? last : { ...codexStep(n), stream: true };
      const out = { authorization: `Bearer ${key}` };
      for (const [k, v] of headerTemplates[stream ? 'stream' : 'plain'][step === 0 ? 0 : 1]) out[k] = v.length === 1 ? v[0] : render(v, { session });
      return out;
    },
    /** The mean body over a run's steps (what each window of requests averages to). */
    bodyBytes: (stream) => {
      let total = 0;
      for (let step = 0; step < STEPS_PER_TRACE; step++) total += Buffer.byteLength(jsonOf(stream, step, RECORDED_SESSION));
      return total / STEPS_PER_TRACE;
    },
  };
}

/**
 * The agent workloads, each streamed or not: Chat Completions on the recast conversation, Messages native
 * (Anthropic upstream) and Messages translated (OpenAI-format upstream), on the recorded Claude Code request; Responses
 * native (OpenAI upstream) and translated (Codex's model routed to the Anthropic upstream), on the recorded Codex requests.
 */
export function agentWorkloads({ models = AGENT_MODELS } = {}) {
  const messages = recorded();
  const chat = messagesToChatRequest(messages, { model: models.openai, maxTokensField: 'max_tokens', reasons: false });
  return [
    fixedWorkload('chat.completions', '/v1/chat/completions', chat, models.openai, headersFor),
    fixedWorkload('messages native', '/v1/messages', messages, models.anthropic, anthropicHeaders),
    fixedWorkload('messages translated', '/v1/messages', messages, models.openai, anthropicHeaders),
    codexWorkload('responses native', models.responses, true),
    codexWorkload('responses translated', models.codex, false),
  ];
}

/**
 * BENCH_TOOL_RULES=1 (or compare): a rule set a platform team would write for Claude Code and Codex (10 rules:
 * destructive shell commands, writes outside the workspace, network), so every answer passes through the tool-rules path.
 */
const TOOL_RULES = [
  { tools: ['Bash', 'exec_command', 'shell', 'local_shell'], when: { command: ['rm -rf *', 'rm -fr *', '*git push --force*', 're:(^|\\s)sudo\\s'] }, action: 'deny', reason: 'destructive command' },
  { tools: ['Bash'], when: { command: 're:curl\\s+.*https?://' }, action: 'deny', reason: 'no network from the shell' },
  { tools: ['Write', 'Edit', 'MultiEdit'], when: { file_path: ['/etc/*', '/usr/*', '~/.ssh/*'] }, action: 'deny', reason: 'outside the workspace' },
  { tools: ['apply_patch'], when: { input: ['*/etc/*', '*.ssh/*'] }, action: 'deny', reason: 'outside the workspace' },
  { tools: ['WebFetch'], when: { url: 're:^https?://(localhost|127\\.)' }, action: 'deny', reason: 'no local addresses' },
  { tools: ['mcp__github__delete_*'], action: 'deny', reason: 'no deletions on GitHub' },
  { tools: ['Read', 'Glob', 'Grep', 'LS'], action: 'allow' },
  { tools: ['web_search'], when: { '/query': '*password*' }, action: 'deny' },
  { tools: ['mcp/*/drop_*'], action: 'deny' },
  { tools: ['NotebookEdit'], when: { notebook_path: '/etc/*' }, action: 'deny' },
];

/**
 * The agent phase's policy: every check on; with `toolRules`, the 10 rules; with `compareModels`, the slow-text and
 * tool-call providers of BENCH_TOOL_RULES=compare allowed too (on both of its gateways alike).
 */
export function agentPolicy({ toolRules = false, compareModels = false } = {}) {
  const allowed = ['openai/gpt-4o*', 'openai/gpt-5*', 'anthropic/claude-*'];
  if (compareModels) allowed.push('openai-slowtext/gpt-4o*', 'openai-slowtext/gpt-5*', 'anthropic-slowtext/claude-*', 'anthropic-toolcall/claude-*');
  return { ...(toolRules ? { tool_rules: TOOL_RULES } : {}), ...AGENT_POLICY_BASE, allowed_models: allowed };
}

/** Whether answers from a gateway whose policy has the 10 rules drop a call the rules deny (and only then). */
export async function proveToolRules(url, apiKey, { expectDenied }) {
  const body = {
    model: TOOL_CALL_MODEL,
    max_tokens: 64,
    tools: [{ name: 'Bash', description: 'Run a shell command', input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } }],
    messages: [{ role: 'user', content: `Clean up the project folder (check ${Date.now()}).` }],
  };
  const res = await fetch(`${url}/v1/messages`, { method: 'POST', headers: anthropicHeaders(apiKey, counter++), body: JSON.stringify(body) });
  const text = await res.text();
  const denied = text.includes('agentgw refused the call to Bash') && !text.includes('"tool_use"');
  const passed = text.includes('"tool_use"') && text.includes('rm -rf /tmp/bench-project');
  if (res.status !== 200 || (expectDenied ? !denied : !passed)) {
    throw new Error(`sanity check "tool rules ${expectDenied ? 'on' : 'off'}": expected the Bash call ${expectDenied ? 'refused' : 'passed on'}, got ${res.status}: ${text.slice(0, 400)}`);
  }
}

const AGENT_POLICY_BASE = {
  tenant_id: 'bench',
  monthly_budget: 1_000_000,
  daily_budget: 100_000,
  rules: {
    pii: 'block',
    retry_block: { max_repeats: 3, window_seconds: 300 },
    // An agent-sized request's worst case is about $1.5 (77k prompt tokens, 64k output; a Codex request at gpt-5's
    // price about $1.4, 60k prompt tokens, 128k output); the cap stays on, above it.
    max_cost_per_request: 10,
    max_cost_per_trace: 1_000_000,
    rpm: 1_000_000_000,
    tpm: 1_000_000_000_000,
  },
};

export const AGENT_POLICY = agentPolicy({ toolRules: process.env.BENCH_TOOL_RULES === '1' });

/**
 * One request of each workload and mode through `url`: a 200 with a complete answer (a stream that reaches its end
 * event), so no agent figure is ever that of a path that fails. Throws on the first that does not.
 */
export async function proveAgentAnswers(url, apiKey, workloads) {
  for (const w of workloads) {
    for (const stream of [false, true]) {
      const { n, json } = w.body({ stream });
      const res = await fetch(`${url}${w.path}`, { method: 'POST', headers: w.headers(apiKey, n), body: json });
      const text = await res.text();
      const what = `${w.name}${stream ? ' streaming' : ''}`;
      if (res.status !== 200 || !text.includes(w.answered(stream))) {
        throw new Error(`sanity check "${what}": expected 200 with ${w.answered(stream)}, got ${res.status}: ${text.slice(0, 400)}`);
      }
      if (w.native && !text.includes(w.native)) throw new Error(`sanity check "${what}": not the upstream's own Responses answer (not native?): ${text.slice(0, 400)}`);
    }
  }
}
