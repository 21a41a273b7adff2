import { z } from 'zod';
import { PiiType } from './policies.js';

export const TraceSummary = z
  .object({
    trace_id: z.string(),
    tenant_id: z.string(),
    agent_id: z.string(),
    started_at: z.string(),
    ended_at: z.string(),
    request_count: z.number().int(),
    error_count: z.number().int(),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    cost: z.number(),
  })
  .meta({ id: 'TraceSummary' });
export type TraceSummary = z.infer<typeof TraceSummary>;

export const TraceRequest = z
  .object({
    request_id: z.string(),
    step: z.number().int(),
    /** The API the client spoke: chat.completions, embeddings, messages. */
    endpoint: z.string(),
    model: z.string().nullable(),
    provider: z.string().nullable(),
    stream: z.boolean(),
    status: z.enum(['ok', 'error', 'blocked']),
    http_status: z.number().int(),
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
  })
  .meta({ id: 'TraceRequest' });
export type TraceRequest = z.infer<typeof TraceRequest>;

export const TraceDetail = TraceSummary.extend({ requests: z.array(TraceRequest) }).meta({ id: 'TraceDetail' });

export const TracesQuery = z.strictObject({
  tenant_id: z.string().max(64).optional(),
  agent_id: z.string().max(64).optional(),
  since: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp such as 2026-01-31T00:00:00Z' }).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).optional(),
});

export const UsageQuery = z.strictObject({
  group_by: z.enum(['agent', 'tenant', 'model', 'day']).default('agent'),
  from: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).optional(),
  to: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).optional(),
  tenant_id: z.string().max(64).optional(),
});

export const UsageRow = z
  .object({ key: z.string(), requests: z.number().int(), prompt_tokens: z.number().int(), completion_tokens: z.number().int(), cost: z.number() })
  .meta({ id: 'UsageRow' });
export type UsageRow = z.infer<typeof UsageRow>;
