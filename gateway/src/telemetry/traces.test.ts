import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ErrorBody } from '../contract/index.js';
import { adminClient } from '../test-support/admin.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test-support/fake-openai.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { otelTraceId } from './otel.js';

interface OtlpSpan {
  traceId: string;
  name: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

let upstream: FakeOpenAI;
let gw: TestGateway;
let admin: ReturnType<typeof adminClient>;
let agent: { id: string; api_key: string };
const otlpBodies: any[] = [];
const otlp = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    otlpBodies.push({ url: req.url, type: req.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString()) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => otlp.listen(0, '127.0.0.1', r));
  upstream = await startFakeOpenAI();
  gw = await startTestGateway({
    config: { providers: { openai: { type: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-secret-upstream' } } },
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(otlp.address() as AddressInfo).port}` },
  });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  await admin.policy('std', { tenant_id: 'acme', allowed_models: ['openai/gpt-4o-mini'], monthly_budget: 10 });
  agent = await admin.agent('acme', 'planner', 'std');
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  otlp.close();
});

function spans(): OtlpSpan[] {
  return otlpBodies.flatMap((b) => b.body.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans)));
}
const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v ? Object.values(v)[0] : undefined;
};

describe('traces, usage and telemetry', () => {
  test('a 5-step workflow with one trace header is one trace of 5 ordered steps with the right totals', async () => {
    const traceId = 'wf-trip-planner-1';
    const client = new OpenAI({ apiKey: agent.api_key, baseURL: gw.baseUrl, maxRetries: 0, defaultHeaders: { 'X-Agent-Trace-Id': traceId } });
    const usages: OpenAI.CompletionUsage[] = [];
    const ids: string[] = [];
    for (const step of [1, 2, 3, 5]) {
      if (step === 5) {
        // step 4: a model the policy does not allow, blocked
        const err = await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'step 4' }] }).catch((e) => e);
        expect(err.code).toBe('model_not_allowed');
        ids.push(err.headers.get('x-request-id'));
      }
      const { data, response } = await client.chat.completions
        .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `step ${step} of the plan` }] })
        .withResponse();
      usages.push(data.usage!);
      ids.push(response.headers.get('x-request-id')!);
    }
    await gw.runtime.dataPlane.usage.flush();
    const trace = await admin.call('GET', `/traces/${traceId}`);
    expect(trace.request_count).toBe(5);
    expect(trace.error_count).toBe(1);
    expect(trace.agent_id).toBe(agent.id);
    expect(trace.tenant_id).toBe('acme');
    expect(trace.requests.map((r: any) => r.step)).toEqual([1, 2, 3, 4, 5]);
    expect(trace.requests.map((r: any) => r.request_id)).toEqual(ids);
    expect(trace.requests[3]).toMatchObject({ status: 'blocked', http_status: 403, error_code: 'model_not_allowed', cost: 0 });
    expect(trace.prompt_tokens).toBe(usages.reduce((s, u) => s + u.prompt_tokens, 0));
    expect(trace.completion_tokens).toBe(usages.reduce((s, u) => s + u.completion_tokens, 0));
    // gpt-4o-mini: $0.15 / $0.60 per million tokens
    const expected = usages.reduce((s, u) => s + (u.prompt_tokens * 0.15 + u.completion_tokens * 0.6) / 1e6, 0);
    expect(trace.cost).toBeCloseTo(expected, 12);
    for (const r of trace.requests) expect(r.latency_ms).toBeGreaterThan(0);

    const list = await admin.call('GET', `/traces?agent_id=${agent.id}`);
    expect(list.data.find((t: any) => t.trace_id === traceId)).toMatchObject({ request_count: 5, error_count: 1 });
    const usage = await admin.call('GET', '/usage?group_by=model');
    expect(usage.data.find((r: any) => r.key === 'openai/gpt-4o-mini').requests).toBeGreaterThanOrEqual(4);
    const missing = await fetch(`${gw.adminUrl}/traces/nope`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as ErrorBody).error.code).toBe('trace_not_found');
  });

  test('OTLP export: GenAI attributes and one trace id shared by the steps of a trace', async () => {
    const client = new OpenAI({ apiKey: agent.api_key, baseURL: gw.baseUrl, defaultHeaders: { 'X-Agent-Trace-Id': 'otel-trace' } });
    await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'one' }] });
    const stream = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'two' }] });
    for await (const _ of stream);
    let ours: OtlpSpan[] = [];
    for (let i = 0; i < 100 && ours.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      ours = spans().filter((s) => attr(s, 'agentgw.trace_id') === 'otel-trace');
    }
    expect(otlpBodies[0].url).toBe('/v1/traces');
    expect(ours).toHaveLength(2);
    expect(new Set(ours.map((s) => s.traceId)).size).toBe(1);
    expect(ours[0]!.traceId).toBe(otelTraceId('acme', 'otel-trace'));
    for (const s of ours) {
      expect(s.name).toBe('chat gpt-4o-mini');
      expect(attr(s, 'gen_ai.operation.name')).toBe('chat');
      expect(attr(s, 'gen_ai.provider.name')).toBe('openai');
      expect(attr(s, 'gen_ai.request.model')).toBe('openai/gpt-4o-mini');
      expect(Number(attr(s, 'gen_ai.usage.input_tokens'))).toBeGreaterThan(0);
      expect(Number(attr(s, 'gen_ai.usage.output_tokens'))).toBe(7);
    }
    expect(JSON.stringify(otlpBodies)).not.toContain('sk-secret-upstream');
    expect(JSON.stringify(otlpBodies)).not.toContain(agent.api_key);
  });

  test('/metrics parses as Prometheus text and moves with requests', async () => {
    const read = async () => {
      const families = parsePrometheusTextFormat(await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.adminKey}` } })).text());
      const requests = families.find((f) => f.name === 'agentgw_requests_total');
      const ok = (requests?.metrics ?? []).filter((m) => m.labels?.status === 'ok').reduce((s, m) => s + Number(m.value), 0);
      const cost = families.find((f) => f.name === 'agentgw_cost_usd_total')?.metrics.reduce((s, m) => s + Number(m.value), 0) ?? 0;
      return { families, ok, cost };
    };
    const before = await read();
    const client = new OpenAI({ apiKey: agent.api_key, baseURL: gw.baseUrl, maxRetries: 0 });
    await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'metrics' }] });
    await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'blocked' }] }).catch(() => undefined);
    const after = await read();
    expect(after.ok).toBe(before.ok + 1);
    expect(after.cost).toBeGreaterThan(before.cost);
    const names = after.families.map((f) => f.name);
    for (const n of ['agentgw_request_duration_seconds', 'agentgw_time_to_first_token_seconds', 'agentgw_tokens_total', 'agentgw_budget_blocks_total', 'agentgw_upstream_errors_total']) {
      expect(names).toContain(n);
    }
    const blocked = after.families.find((f) => f.name === 'agentgw_requests_total')!.metrics.find((m) => m.labels?.code === 'model_not_allowed');
    expect(Number(blocked!.value)).toBeGreaterThanOrEqual(1);
  });
});
