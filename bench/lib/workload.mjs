// The one request every target receives: the same bytes whether it goes direct, through the bare proxy or through the gateway.

export const MODEL = 'openai/gpt-4o-mini';
/** The provider whose upstream path streams its first chunk at once and the rest later (see mock-upstream.mjs). */
export const SLOW_MODEL = 'openai-slow/gpt-4o-mini';

/** Requests per trace id: an agent run of a few dozen steps, so trace counters grow as they would in use. */
const STEPS_PER_TRACE = 50;

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

export function traceIdFor(n) {
  return `bench-run-${Math.floor(n / STEPS_PER_TRACE)}`;
}

export function headersFor(apiKey, n) {
  return {
    'content-type': 'application/json',
    authorization: `Bearer ${apiKey}`,
    'x-agent-trace-id': traceIdFor(n),
  };
}
