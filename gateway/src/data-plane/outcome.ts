import type { AgentgwError } from '../contract/index.js';
import type { Usage } from '../providers/spec.js';
import type { UsageRecord } from '../storage/store.js';
import type { RequestContext } from './request-context.js';
import type { ToolCallRecord } from './tool-calls/gate.js';

/** How one data-plane request ended, turned into its usage record. */
export interface Outcome {
  httpStatus: number;
  error?: AgentgwError;
  usage?: Usage;
  cost?: number;
  ttftMs?: number | null;
  /** The target that served it (after fallbacks). */
  provider?: string;
  model?: string;
  /** The Responses API response id it answered with (`resp_...`): its trace step links to the stored response. */
  responseId?: string;
  /** The MCP tool a tool call called (`server/tool`): its step records endpoint mcp and this tool. */
  tool?: string;
  /** The calls the answer proposed, as the tool rules decided them (only when some policy has tool rules). */
  toolCalls?: ToolCallRecord[];
}

/** The model as recorded: a client's text (at most 256 characters, as validated) without NUL characters, which PostgreSQL text cannot hold. */
function recordedModel(model: string | null): string | null {
  return model === null || !model.includes('\0') ? model : model.replaceAll('\0', '\uFFFD');
}

const BLOCKING_TYPES = new Set(['policy_blocked', 'budget_exceeded', 'rate_limited', 'service_unavailable']);

export function toUsageRecord(ctx: RequestContext, o: Outcome): UsageRecord {
  const latency = performance.now() - ctx.startedAt;
  return {
    request_id: ctx.requestId,
    trace_id: ctx.traceId,
    tenant_id: ctx.agent.tenant_id,
    agent_id: ctx.agent.id,
    model: recordedModel(o.model ?? ctx.model),
    requested_model: recordedModel(ctx.requestedModel ?? null),
    provider: o.provider ?? ctx.provider,
    stream: ctx.stream,
    // A refusal of the gateway's is "blocked"; an upstream's own 429 is a failure of the call, an "error".
    status: o.error ? (BLOCKING_TYPES.has(o.error.type) && o.error.code !== 'upstream_rate_limited' ? 'blocked' : 'error') : 'ok',
    http_status: o.httpStatus,
    error_code: o.error?.code ?? null,
    prompt_tokens: o.usage?.prompt_tokens ?? 0,
    completion_tokens: o.usage?.completion_tokens ?? 0,
    cost: o.cost ?? 0,
    estimated: o.usage?.estimated ?? false,
    latency_ms: Math.round(latency * 1000) / 1000,
    ttft_ms: o.ttftMs ?? null,
    started_at: ctx.startedAtIso,
    pii_types: ctx.piiTypes,
    body: ctx.capturedBody ?? null,
    endpoint: ctx.endpoint,
    cached_tokens: o.usage?.cached_prompt_tokens ?? 0,
    reasoning_tokens: o.usage?.reasoning_tokens ?? 0,
    response_id: o.responseId ?? null,
    tool: o.tool ?? null,
    // Left undefined (absent in the journal's JSON) when there are none; one shape for every record either way.
    tool_calls: o.toolCalls,
    cleaned: ctx.cleaned,
  };
}
