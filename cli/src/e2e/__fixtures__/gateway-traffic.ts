import type { TraceDetail } from '../../admin-client/types.js';
import type { ServedGateway } from './harness.js';

/** One admin call as any HTTP client makes it; a non-2xx answer fails the test with the server's sentence. */
export async function admin<T = unknown>(gw: ServedGateway, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${gw.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${gw.adminKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export interface ChatOptions {
  content?: string;
  stream?: boolean;
}

/** A chat completion through the gateway's /v1 in the given trace; returns the HTTP status once the body is read. */
export async function chat(gw: ServedGateway, agentKey: string, traceId: string, opts: ChatOptions = {}): Promise<number> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json', 'x-agent-trace-id': traceId },
    body: JSON.stringify({
      model: 'mock/mock-1',
      messages: [{ role: 'user', content: opts.content ?? 'What is the capital of France?' }],
      ...(opts.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
  });
  await res.text();
  return res.status;
}

/** Usage records are written in batches (~250 ms): waits, within a bound, until the trace holds `requests` steps. */
export async function waitForTrace(gw: ServedGateway, traceId: string, requests: number, timeoutMs = 10_000): Promise<TraceDetail> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    const res = await fetch(`${gw.adminUrl}/traces/${encodeURIComponent(traceId)}`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
    const text = await res.text();
    last = `${res.status} ${text}`;
    if (res.ok) {
      const trace = JSON.parse(text) as TraceDetail;
      if (trace.request_count >= requests) return trace;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`trace ${traceId} did not reach ${requests} requests in ${timeoutMs} ms (last answer: ${last})`);
}
