// The request-side checks of two builds on the same request bodies, in one process, request after request in turn:
// parsing the body as received, the case rule, the PII check (its entry, every type in every part), the prompt bound
// and the retry subject, as the policy view of each dialect runs them. Where a whole gateway's CPU per request moves
// several percent between two runs of one build on a shared machine, this pairs each body's measurement on both
// builds, so what the checks themselves cost is told apart from the machine's noise. Run by bench/run.mjs (phase
// `checks`, with BENCH_BASELINE); by hand:
//   node bench/checks-pair.mjs <before gateway/dist> <after gateway/dist> [requests per workload]
// Prints one JSON object: per workload, microseconds per request of each step for `before` and `after`.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { agentWorkloads } from './lib/agent-workload.mjs';
import { chatBody } from './lib/workload.mjs';

const [beforeDist, afterDist, requestsArg] = process.argv.slice(2);
if (!beforeDist || !afterDist) {
  process.stderr.write('usage: node bench/checks-pair.mjs <before gateway/dist> <after gateway/dist> [requests per workload]\n');
  process.exit(2);
}
const REQUESTS = Number(requestsArg ?? 6000);

/** The policy view each workload's body is read with, by dialect. */
const VIEWS = {
  chat: ['data-plane/dialects/chat-completions/chat-policy-view.js', 'chatPolicyView'],
  messages: ['data-plane/dialects/messages/messages-policy-view.js', 'messagesPolicyView'],
  responses: ['data-plane/dialects/responses/responses-policy-view.js', 'responsesPolicyView'],
};

const STEPS = ['parse', 'keyCase', 'pii', 'bound', 'retry'];

/** One build's checks. A revision without the case rule skips it; one without the async PII scan uses the sync one. */
async function checksOf(dist) {
  const url = (p) => new URL(p, pathToFileURL(`${resolve(dist)}/`)).href;
  const { parseReceivedJson } = await import(url('json/parse-received.js'));
  const pii = await import(url('policy/pii/scan-request.js'));
  const { PII_TYPES } = await import(url('contract/policies.js'));
  let keyCase = () => undefined;
  try {
    keyCase = (await import(url('data-plane/key-case.js'))).checkKeyCase;
  } catch {
    // Not in this revision.
  }
  const views = {};
  for (const [dialect, [file, name]] of Object.entries(VIEWS)) views[dialect] = (await import(url(file)))[name];
  const direct = pii.scanRequestPiiAsync ?? pii.scanRequestPii;
  // Through the PII check's own entry where the revision has it (grouping, block decision), with every type read in
  // every part; else the scan alone.
  let scan = (body, types, walk) => direct(body, types, walk);
  try {
    const rules = await import(url('policy/pii-rules.js'));
    const apply = rules.applyPiiRulesAsync ?? rules.applyPiiRules;
    const policies = [{ id: 'checks-pair', tenant_id: 'bench', rules: { pii: 'block', pii_types: [...PII_TYPES], pii_scope: ['user', 'assistant', 'system', 'tools'] } }];
    if (apply) scan = (body, _types, walk) => apply(policies, body, walk);
  } catch {
    // Not in this revision.
  }
  return { parseReceivedJson, keyCase, scan, views, types: PII_TYPES };
}

/** Runs the checks on `bytes`, adding each step's nanoseconds to `into` when given. */
async function run(c, dialect, bytes, into) {
  const view = c.views[dialect];
  const t0 = process.hrtime.bigint();
  const body = c.parseReceivedJson(bytes);
  const t1 = process.hrtime.bigint();
  c.keyCase(body);
  const t2 = process.hrtime.bigint();
  const found = c.scan(body, c.types, view.visitTexts);
  if (found instanceof Promise) await found;
  const t3 = process.hrtime.bigint();
  view.promptTokensUpperBound(body);
  const t4 = process.hrtime.bigint();
  view.retrySubject(body);
  const t5 = process.hrtime.bigint();
  if (!into) return;
  into.parse += t1 - t0;
  into.keyCase += t2 - t1;
  into.pii += t3 - t2;
  into.bound += t4 - t3;
  into.retry += t5 - t4;
}

const before = await checksOf(beforeDist);
const after = await checksOf(afterDist);
const agent = agentWorkloads();
const workloads = [
  { name: 'load (small chat body)', dialect: 'chat', body: () => chatBody({ stream: false }).json, requests: REQUESTS * 4 },
  ...['chat.completions', 'messages native', 'responses native'].map((name) => {
    const w = agent.find((x) => x.name === name);
    return { name, dialect: name === 'chat.completions' ? 'chat' : name.split(' ')[0], body: () => w.body({ stream: false }).json, requests: REQUESTS };
  }),
];

const out = {};
for (const w of workloads) {
  const zero = () => Object.fromEntries(STEPS.map((s) => [s, 0n]));
  const sums = { before: zero(), after: zero() };
  // The first half warms both builds' code and part memories up; the second is measured. Which build goes first
  // alternates, so neither always meets a cold cache.
  for (let i = 0; i < w.requests; i++) {
    const bytes = Buffer.from(w.body());
    const measured = i >= w.requests / 2;
    const order = i % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    for (const side of order) await run(side === 'before' ? before : after, w.dialect, bytes, measured ? sums[side] : undefined);
  }
  const n = w.requests / 2;
  const perRequest = (s) => {
    const steps = Object.fromEntries(STEPS.map((k) => [k, Number(s[k]) / n / 1000]));
    return { ...steps, total: STEPS.reduce((t, k) => t + steps[k], 0) };
  };
  out[w.name] = { requests: n, before: perRequest(sums.before), after: perRequest(sums.after) };
}
process.stdout.write(`${JSON.stringify(out)}\n`);
