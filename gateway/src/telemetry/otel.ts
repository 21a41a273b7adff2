import { createHash } from 'node:crypto';
import { randomHex } from '../http/random-hex.js';
import { ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type IdGenerator } from '@opentelemetry/sdk-trace-base';
import type { UsageRecord } from '../storage/store.js';

/** Lets one span take the trace id derived from the agent trace, so every step of a workflow shares it. */
class DerivedIdGenerator implements IdGenerator {
  next: string | undefined;
  generateTraceId(): string {
    const id = this.next ?? randomHex(16);
    this.next = undefined;
    return id;
  }
  generateSpanId(): string {
    return randomHex(8);
  }
}

/** The OpenTelemetry trace id of an agent trace: stable across nodes and restarts. */
export function otelTraceId(tenantId: string, traceId: string): string {
  return createHash('sha256').update(`${tenantId}\u0000${traceId}`).digest('hex').slice(0, 32);
}

/** An MCP tool call as its span names it: the tool as the agent called it (`server__tool`), its server and session. */
export interface ToolCallInfo {
  tool: string;
  server: string;
  /** The MCP session of the call; undefined for a request of 2026-07-28, which has none. */
  sessionId: string | undefined;
  /** The protocol revision of the client's request, when it says so in the request (2026-07-28). */
  protocolVersion?: string;
}

/** One span per data-plane request, with OpenTelemetry GenAI semantic-convention attributes, exported over OTLP/HTTP. */
export class GenAiSpans {
  private readonly ids = new DerivedIdGenerator();
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;

  constructor(env: NodeJS.ProcessEnv, version: string) {
    const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').replace(/\/$/, '')}/v1/traces`;
    this.provider = new BasicTracerProvider({
      idGenerator: this.ids,
      resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? 'agentgw', 'service.version': version }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }), { scheduledDelayMillis: 500 })],
    });
    this.tracer = this.provider.getTracer('agentgw', version);
  }

  record(r: UsageRecord, operation: 'chat' | 'embeddings', requestModel: string | null): void {
    const start = Date.parse(r.started_at);
    const model = r.model?.includes('/') ? r.model.slice(r.model.indexOf('/') + 1) : r.model;
    this.ids.next = otelTraceId(r.tenant_id, r.trace_id);
    const span = this.tracer.startSpan(
      `${operation} ${model ?? ''}`.trim(),
      {
        kind: SpanKind.CLIENT,
        startTime: start,
        attributes: {
          'gen_ai.operation.name': operation,
          'gen_ai.provider.name': r.provider ?? 'unknown',
          'gen_ai.system': r.provider ?? 'unknown',
          'gen_ai.request.model': requestModel ?? model ?? '',
          'gen_ai.response.model': model ?? '',
          'gen_ai.usage.input_tokens': r.prompt_tokens,
          'gen_ai.usage.output_tokens': r.completion_tokens,
          'gen_ai.conversation.id': r.trace_id,
          'agentgw.request_id': r.request_id,
          'agentgw.trace_id': r.trace_id,
          'agentgw.tenant_id': r.tenant_id,
          'agentgw.agent_id': r.agent_id,
          'agentgw.cost_usd': r.cost,
          'agentgw.stream': r.stream,
          'http.response.status_code': r.http_status,
          ...(r.ttft_ms !== null ? { 'agentgw.ttft_ms': r.ttft_ms } : {}),
          ...(r.error_code ? { 'error.type': r.error_code } : {}),
          ...(r.pii_types.length ? { 'agentgw.pii_types': r.pii_types } : {}),
        },
      },
      ROOT_CONTEXT,
    );
    toolCallEvents(span, r, start + r.latency_ms);
    if (r.error_code) span.setStatus({ code: SpanStatusCode.ERROR, message: r.error_code });
    span.end(start + r.latency_ms);
  }

  /** One `execute_tool` span per MCP tool call, in the agent trace's OpenTelemetry trace like its model calls. */
  recordToolCall(r: UsageRecord, call: ToolCallInfo): void {
    const start = Date.parse(r.started_at);
    this.ids.next = otelTraceId(r.tenant_id, r.trace_id);
    const span = this.tracer.startSpan(
      `execute_tool ${call.tool}`,
      {
        kind: SpanKind.CLIENT,
        startTime: start,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': call.tool,
          'gen_ai.tool.type': 'extension',
          'gen_ai.conversation.id': r.trace_id,
          'mcp.method.name': 'tools/call',
          ...(call.sessionId !== undefined ? { 'mcp.session.id': call.sessionId } : {}),
          ...(call.protocolVersion !== undefined ? { 'mcp.protocol.version': call.protocolVersion } : {}),
          'agentgw.mcp.server': call.server,
          'agentgw.request_id': r.request_id,
          'agentgw.trace_id': r.trace_id,
          'agentgw.tenant_id': r.tenant_id,
          'agentgw.agent_id': r.agent_id,
          'agentgw.cost_usd': r.cost,
          ...(r.error_code ? { 'error.type': r.error_code } : {}),
          ...(r.pii_types.length ? { 'agentgw.pii_types': r.pii_types } : {}),
        },
      },
      ROOT_CONTEXT,
    );
    // How the tool rules decided the call, as a model step's calls are told.
    toolCallEvents(span, r, start + r.latency_ms);
    if (r.error_code) span.setStatus({ code: SpanStatusCode.ERROR, message: r.error_code });
    span.end(start + r.latency_ms);
  }

  async close(): Promise<void> {
    await this.provider.shutdown();
  }
}

/** The calls a step's tool rules decided (a model's proposed calls, or an MCP call): one `agentgw.tool_call` event each. */
function toolCallEvents(span: Span, r: UsageRecord, at: number): void {
  for (const c of r.tool_calls ?? []) {
    span.addEvent(
      'agentgw.tool_call',
      {
        'gen_ai.tool.call.id': c.id,
        'gen_ai.tool.name': c.name,
        'agentgw.tool.decision': c.decision,
        ...(c.rule ? { 'agentgw.tool.rule.policy_id': c.rule.policy_id, 'agentgw.tool.rule.index': c.rule.index } : {}),
        ...(c.reason !== null ? { 'agentgw.tool.reason': c.reason } : {}),
        ...(c.approval_id ? { 'agentgw.tool.approval_id': c.approval_id } : {}),
        'agentgw.tool.wait_ms': c.wait_ms,
      },
      at,
    );
  }
}
