// The Responses response object agentgw answers with on a translated call (plain and streamed), its usage, its item ids.
import type { Usage } from '../providers/spec.js';
import type {
  ResponsesEcho,
  ResponsesError,
  ResponsesOutputItem,
  ResponsesReasoningEffort,
  ResponsesResponse,
  ResponsesStatus,
  ResponsesTool,
  ResponsesToolChoice,
  ResponsesUsage,
} from './responses-api.js';

export interface ResponsesObjectOptions {
  /** The id agentgw minted (`resp_...`). */
  id: string;
  /** The model the client asked for. */
  model: string;
  /** Unix seconds. */
  createdAt: number;
  /** The request's fields that the response repeats. */
  request: ResponsesEcho;
}

export interface ResponsesObjectState {
  status: ResponsesStatus;
  output: ResponsesOutputItem[];
  usage: ResponsesUsage | null;
  completedAt?: number | null;
  error?: ResponsesError | null;
  incompleteReason?: 'max_output_tokens' | 'content_filter' | null;
}

/** The gateway's Usage -> Responses usage: input_tokens include cached ones, output_tokens reasoning ones (as in chat). */
export function responsesUsage(usage: Usage): ResponsesUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.cached_prompt_tokens ?? 0, cache_write_tokens: usage.cache_write_prompt_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
}

/** `<prefix>_<response id without resp_>_<n>`: unique with the response id, stable for one response. */
export function itemId(prefix: 'msg' | 'fc' | 'ctc' | 'rs', responseId: string, n: number): string {
  const base = responseId.startsWith('resp_') ? responseId.slice('resp_'.length) : responseId;
  return `${prefix}_${base}_${n}`;
}

/** The call id of a tool call the upstream gave none. */
export function callId(responseId: string, n: number): string {
  const base = responseId.startsWith('resp_') ? responseId.slice('resp_'.length) : responseId;
  return `call_${base}_${n}`;
}

/** The response object, with the request's settings as OpenAI repeats them (its defaults where the client sent none). */
export function responsesObject(opts: ResponsesObjectOptions, state: ResponsesObjectState): ResponsesResponse {
  const r = opts.request;
  return {
    id: opts.id,
    object: 'response',
    created_at: opts.createdAt,
    status: state.status,
    completed_at: state.completedAt ?? null,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason ? { reason: state.incompleteReason } : null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    model: opts.model,
    output: state.output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    reasoning: { effort: (r.reasoning?.effort ?? null) as ResponsesReasoningEffort | null, summary: r.reasoning?.summary ?? r.reasoning?.generate_summary ?? null },
    store: r.store ?? true,
    temperature: r.temperature ?? null,
    text: r.text ?? { format: { type: 'text' } },
    tool_choice: (r.tool_choice ?? 'auto') as ResponsesToolChoice,
    tools: (r.tools ?? []) as ResponsesTool[],
    top_p: r.top_p ?? null,
    truncation: r.truncation ?? 'disabled',
    usage: state.usage,
    user: r.user ?? null,
    metadata: r.metadata ?? {},
    background: false,
    service_tier: 'default',
    prompt_cache_key: r.prompt_cache_key ?? null,
    safety_identifier: r.safety_identifier ?? null,
  };
}

/**
 * An agentgw error code -> the `code` of a Responses error (response.failed, error event). Codex reads
 * rate_limit_exceeded (retries), insufficient_quota (stops: budgets) and context_length_exceeded (compacts).
 */
export function responsesErrorCode(code: string): string {
  switch (code) {
    case 'rpm_exceeded':
    case 'tpm_exceeded':
    case 'upstream_rate_limited':
      return 'rate_limit_exceeded';
    case 'daily_budget_exceeded':
    case 'monthly_budget_exceeded':
    case 'trace_budget_exceeded':
    case 'tenant_daily_budget_exceeded':
    case 'tenant_monthly_budget_exceeded':
      return 'insufficient_quota';
    case 'context_length_exceeded':
      return code;
    default:
      return 'server_error';
  }
}
