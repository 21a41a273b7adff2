import { z } from 'zod';
import { ResourceId, Timestamp } from './common.js';
import { PiiType } from './policies.js';

/** When an operator stopped the trace (POST /traces/{trace_id}/stop), and why: every later request of it is refused. */
export const TraceStopped = z
  .object({ at: Timestamp, reason: z.string().nullable() })
  .meta({ id: 'TraceStopped' });
export type TraceStopped = z.infer<typeof TraceStopped>;

export const TraceSummary = z
  .object({
    trace_id: z.string(),
    tenant_id: z.string(),
    agent_id: z.string(),
    started_at: z.string(),
    ended_at: z.string(),
    request_count: z.number().int().describe('Steps recorded, and those running now.'),
    error_count: z.number().int(),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    cost: z.number(),
    stopped: TraceStopped.nullable().describe('Set once the trace was stopped: every later request of it is 403 trace_stopped.'),
  })
  .meta({ id: 'TraceSummary' });
export type TraceSummary = z.infer<typeof TraceSummary>;

export const TraceToolCall = z
  .object({
    id: z.string().describe("The call's id as the model gave it (Chat and Responses call_id, Messages tool_use id)."),
    name: z.string().describe('The name the rules matched: the declared tool, or a built-in call by its kind.'),
    decision: z.enum(['allowed', 'denied', 'approved', 'rejected', 'timed_out', 'abandoned']),
    rule: z.object({ policy_id: z.string(), index: z.number().int() }).nullable().describe('The policy and 1-based rule that decided; null when no rule matched.'),
    reason: z.string().nullable(),
    approval_id: z.string().nullable(),
    wait_ms: z.number(),
  })
  .meta({ id: 'TraceToolCall' });
export type TraceToolCall = z.infer<typeof TraceToolCall>;

export const TraceRequest = z
  .object({
    request_id: z.string(),
    step: z.number().int(),
    /** The API the client spoke: chat.completions, embeddings, messages, responses, gemini, or mcp for a tool call. */
    endpoint: z.string(),
    // Optional in the type only, so steps built before MCP still type-check; every step read from the store has it.
    tool: z.string().nullable().optional().describe('The MCP tool a tool-call step called (`server/tool`, endpoint mcp); null on model steps.'),
    model: z.string().nullable(),
    requested_model: z.string().nullable().describe('The model the client named, an alias included; `model` is the target that answered.'),
    provider: z.string().nullable(),
    stream: z.boolean(),
    status: z.enum(['ok', 'error', 'blocked', 'running']).describe('running: a step in flight, from admission until its record (tokens and cost 0, latency_ms so far).'),
    http_status: z.number().int().describe('The status answered; 0 while the step is running.'),
    error_code: z.string().nullable(),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    cached_tokens: z.number().int(),
    reasoning_tokens: z.number().int(),
    cost: z.number(),
    latency_ms: z.number(),
    ttft_ms: z.number().nullable(),
    started_at: z.string(),
    pii_types: z.array(PiiType),
    /** The Responses API response (`resp_...`) this step answered with; null on other endpoints. */
    response_id: z.string().nullable(),
    // Optional in the type only, as `tool`: every step read from the store has it ([] when the step decided no call).
    tool_calls: z.array(TraceToolCall).optional().describe("The calls the model proposed in this step's answer, as the policies' tool rules decided them."),
    cleaned: z
      .array(z.string())
      .optional()
      .describe('What was taken out of the request for the target that served this step, which could not take it (a fallback across families): thinking_signatures, redacted_thinking, cache_control, server_tools. [] when nothing.'),
  })
  .meta({ id: 'TraceRequest' });
export type TraceRequest = z.infer<typeof TraceRequest>;

export const TraceDetail = TraceSummary.extend({ requests: z.array(TraceRequest) }).meta({ id: 'TraceDetail' });
export type TraceDetail = z.infer<typeof TraceDetail>;

/** Body of POST /traces/{trace_id}/stop; the whole body may be left out. */
export const StopTrace = z.strictObject({
  reason: z.string().min(1, { message: 'must not be empty' }).max(1000, { message: 'must be at most 1000 characters' }).nullable().optional()
    .describe('Why the trace was stopped, for the people reading the trace.'),
});
export type StopTrace = z.infer<typeof StopTrace>;

/** `?tenant_id=` picks the tenant when two tenants share the trace id. */
export const TraceTenantQuery = z.strictObject({ tenant_id: ResourceId.optional() });

/**
 * Answer of POST /traces/{trace_id}/stop. Stopping is idempotent: a trace stopped again keeps its first stop (time and
 * reason), which is answered again.
 */
export const TraceStop = z
  .object({ trace_id: z.string(), tenant_id: z.string(), stopped: TraceStopped })
  .meta({ id: 'TraceStop' });
export type TraceStop = z.infer<typeof TraceStop>;

export const TracesQuery = z.strictObject({
  tenant_id: z.string().max(64).optional(),
  agent_id: z.string().max(64).optional(),
  since: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp such as 2026-01-31T00:00:00Z' }).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).optional(),
});

export const UsageQuery = z.strictObject({
  group_by: z
    .enum(['agent', 'tenant', 'model', 'tool', 'day', 'hour'])
    .default('agent')
    .describe(
      'The key of each row: agent id, tenant id, model, MCP tool (`server/tool`; steps without a tool are left out), ' +
        'UTC day (`2026-11-25`) or the start of the UTC hour (`2026-11-25T14:00:00Z`).',
    ),
  from: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).optional(),
  to: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).optional(),
  tenant_id: z.string().max(64).optional(),
});

export const UsageRow = z
  .object({
    key: z.string(),
    requests: z.number().int(),
    errors: z.number().int().describe('Of requests, those whose status is not ok (error or blocked): counted as a trace\'s error_count is.'),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    cost: z.number(),
  })
  .meta({ id: 'UsageRow' });
export type UsageRow = z.infer<typeof UsageRow>;
