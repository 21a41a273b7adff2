// The one request every target receives: the same bytes whether it goes direct, through the bare proxy or through the gateway.
import { randomUUID } from 'node:crypto';

export const MODEL = 'openai/gpt-4o-mini';
/** The provider whose upstream path streams its first chunk at once and the rest later (see mock-upstream.mjs). */
export const SLOW_MODEL = 'openai-slow/gpt-4o-mini';
/** The routing phase's aliases: one target, and four deployments weighted 4:3:2:1 (providers openai, openai-b, -c, -d). */
export const ROUTING_MODELS = {
  'bench-single': [MODEL],
  'bench-weighted-4': {
    strategy: 'weighted',
    targets: [
      { model: MODEL, weight: 4 },
      { model: 'openai-b/gpt-4o-mini', weight: 3 },
      { model: 'openai-c/gpt-4o-mini', weight: 2 },
      { model: 'openai-d/gpt-4o-mini', weight: 1 },
    ],
  },
};

/** Requests per trace id: an agent run of a few dozen steps, so trace counters grow as they would in use. */
export const STEPS_PER_TRACE = 50;

let counter = 0;

/**
 * A chat request whose text changes with every call (retry_block must never trip) and carries no PII (pii: block must pass).
 * max_tokens keeps the worst-case reservation, and so max_cost_per_request, meaningful.
 */
export function chatBody({ stream, model = MODEL }) {
  const n = counter++;
  const body = {
    model,
    messages: [
      { role: 'system', content: 'You are a concise assistant that summarises build logs for an engineering team.' },
      { role: 'user', content: `Summarise step ${n} of the nightly build in one short sentence, naming the slowest stage.` },
    ],
    max_tokens: 64,
    temperature: 0.2,
  };
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return { n, json: JSON.stringify(body) };
}

/**
 * How requests are grouped into traces (`BENCH_TRACES`):
 * - `concurrent` (default): as agents send them, `CONCURRENT_RUNS` runs in flight at once, each with a random UUID
 *   as its trace id, so usage rows of many traces interleave and their ids land anywhere in the trace index;
 * - `sequential`: one run at a time, named `bench-run-N`, so rows arrive trace after trace in index order (cheapest to write).
 */
export const TRACE_MODE = process.env.BENCH_TRACES ?? 'concurrent';
if (TRACE_MODE !== 'concurrent' && TRACE_MODE !== 'sequential') throw new Error(`BENCH_TRACES must be concurrent or sequential, not ${TRACE_MODE}`);
export const CONCURRENT_RUNS = 500;
const runIds = new Map();

export function traceIdFor(n) {
  if (TRACE_MODE === 'sequential') return `bench-run-${Math.floor(n / STEPS_PER_TRACE)}`;
  // Request n is step floor(n / RUNS) of run slot n % RUNS; a slot starts a new run every STEPS_PER_TRACE steps.
  const key = `${n % CONCURRENT_RUNS}:${Math.floor(n / CONCURRENT_RUNS / STEPS_PER_TRACE)}`;
  let id = runIds.get(key);
  if (id === undefined) {
    id = randomUUID();
    runIds.set(key, id);
    if (runIds.size > 4 * CONCURRENT_RUNS) runIds.delete(runIds.keys().next().value);
  }
  return id;
}

export function headersFor(apiKey, n) {
  return {
    'content-type': 'application/json',
    authorization: `Bearer ${apiKey}`,
    'x-agent-trace-id': traceIdFor(n),
  };
}
