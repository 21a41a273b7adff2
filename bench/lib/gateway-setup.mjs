// Configures the gateway over its admin API: one tenant, one policy with every check switched on, one agent.
// Then proves each check is live with a request it must block, so the numbers are never those of an idle pipeline.
import { MODEL, SLOW_MODEL, headersFor } from './workload.mjs';

export const POLICY = {
  tenant_id: 'bench',
  monthly_budget: 1_000_000,
  daily_budget: 100_000,
  allowed_models: ['openai/gpt-4o*', 'openai-slow/gpt-4o*', 'openai-b/gpt-4o*', 'openai-c/gpt-4o*', 'openai-d/gpt-4o*'],
  rules: {
    pii: 'block',
    retry_block: { max_repeats: 3, window_seconds: 300 },
    // The bench request's worst case is about $0.00005 (max_tokens 64); one asking for 16k tokens is above the cap.
    max_cost_per_request: 0.001,
    max_cost_per_trace: 1_000_000,
    rpm: 1_000_000_000,
    tpm: 1_000_000_000_000,
  },
};

async function call(base, adminKey, method, path, body) {
  const res = await fetch(`${base}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} /api${path} answered ${res.status}: ${text}`);
  return JSON.parse(text);
}

/** Creates tenant, policy and agent; returns the agent's key. */
export async function provisionAgent(base, adminKey, { policyId = 'bench-all-checks', policy = POLICY, name = 'bench-agent' } = {}) {
  const tenants = await call(base, adminKey, 'GET', '/tenants');
  if (!tenants.data.some((t) => t.id === 'bench')) await call(base, adminKey, 'POST', '/tenants', { id: 'bench', name: 'Benchmark' });
  await call(base, adminKey, 'PUT', `/policies/${policyId}`, policy);
  const agent = await call(base, adminKey, 'POST', '/agents', { tenant_id: 'bench', name, policy_id: policyId });
  return agent.api_key;
}

async function chat(base, apiKey, body, traceId) {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...headersFor(apiKey, 0), 'x-agent-trace-id': traceId },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let code = null;
  try {
    code = JSON.parse(text).error?.code ?? null;
  } catch {
    // a stream, not JSON
  }
  return { status: res.status, code, text };
}

/** One allowed request of each kind, then one request per check that the policy must block. Throws on any surprise. */
export async function proveChecksAreOn(base, apiKey) {
  const user = (content) => ({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content }] });
  const expect = (what, got, status, code) => {
    if (got.status !== status || got.code !== code) {
      throw new Error(`sanity check "${what}": expected ${status} ${code ?? ''}, got ${got.status}: ${got.text.slice(0, 300)}`);
    }
  };
  expect('plain request', await chat(base, apiKey, user('Say hello.'), 'bench-sanity-1'), 200, null);
  const streamed = await chat(base, apiKey, { ...user('Say hello.'), model: SLOW_MODEL, stream: true, stream_options: { include_usage: true } }, 'bench-sanity-2');
  expect('streamed request', streamed, 200, null);
  if (!streamed.text.includes('"usage":{') || !streamed.text.includes('data: [DONE]')) throw new Error(`sanity check "streamed request": no usage or [DONE]: ${streamed.text}`);
  expect('allowed_models', await chat(base, apiKey, { ...user('Say hello.'), model: 'openai/gpt-5' }, 'bench-sanity-3'), 403, 'model_not_allowed');
  expect('pii: block', await chat(base, apiKey, user('Mail the summary to jane.doe@example.com please.'), 'bench-sanity-4'), 403, 'pii_detected');
  expect('max_cost_per_request', await chat(base, apiKey, { ...user('Write a novel.'), max_tokens: 16_000 }, 'bench-sanity-5'), 403, 'cost_cap_exceeded');
  const repeated = user('Retry me.');
  for (let i = 0; i < POLICY.rules.retry_block.max_repeats; i++) expect('retry_block (allowed repeats)', await chat(base, apiKey, repeated, 'bench-sanity-6'), 200, null);
  expect('retry_block', await chat(base, apiKey, repeated, 'bench-sanity-6'), 403, 'retry_blocked');
}

/** Requests the gateway has recorded for the bench tenant (usage rows are written in batches, so this may trail slightly). */
export async function recordedRequests(base, adminKey) {
  const usage = await call(base, adminKey, 'GET', '/usage?group_by=tenant&tenant_id=bench');
  return usage.data.reduce((n, row) => n + row.requests, 0);
}
