import type { TraceDetail, TraceRequest } from '../../admin-client/types.js';

const at = (ms: number) => new Date(Date.parse('2026-01-31T10:00:00.000Z') + ms).toISOString();

function step(n: number, offsetMs: number, r: Partial<TraceRequest>): TraceRequest {
  return {
    request_id: `req_${n}`,
    step: n,
    endpoint: 'chat.completions',
    model: 'openai/gpt-4o-mini',
    requested_model: 'openai/gpt-4o-mini',
    provider: 'openai',
    stream: false,
    status: 'ok',
    http_status: 200,
    error_code: null,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    reasoning_tokens: 0,
    cost: 0,
    latency_ms: 0,
    ttft_ms: null,
    started_at: at(offsetMs),
    pii_types: [],
    response_id: null,
    ...r,
  };
}

/** Five steps of one agent run: a plain call, a PII block, a streamed call, an upstream timeout, a last call. */
export const TRACE: TraceDetail = {
  trace_id: 'run-42',
  tenant_id: 'acme',
  agent_id: 'agt_0123456789abcdef',
  started_at: at(0),
  ended_at: at(4450),
  request_count: 5,
  error_count: 2,
  prompt_tokens: 1630,
  completion_tokens: 412,
  stopped: null,
  cost: 0.005831,
  requests: [
    step(1, 0, { prompt_tokens: 420, completion_tokens: 96, cost: 0.000121, latency_ms: 820.4 }),
    step(2, 900, { status: 'blocked', http_status: 403, error_code: 'pii_detected', latency_ms: 3.7, pii_types: ['email', 'phone'] }),
    step(3, 950, {
      model: 'anthropic/claude-sonnet-4-5',
      provider: 'anthropic',
      stream: true,
      prompt_tokens: 610,
      completion_tokens: 250,
      cost: 0.00558,
      latency_ms: 1650,
      ttft_ms: 310,
    }),
    step(4, 2700, { status: 'error', http_status: 504, error_code: 'upstream_timeout', latency_ms: 1200 }),
    step(5, 3950, { prompt_tokens: 600, completion_tokens: 66, cost: 0.00013, latency_ms: 500, pii_types: ['email'] }),
  ],
};
