// The Responses response object agentgw answers with on a translated call (plain and streamed), its usage, its item ids.
import type { Usage } from '../providers/spec.js';
import type {
  ResponsesEcho,
  ResponsesError,
  ResponsesFunctionTool,
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
    // The sampling settings in effect: the client's, else the defaults every target applies (as OpenAI reports them).
    temperature: r.temperature ?? 1,
    text: echoedText(r.text),
    tool_choice: (r.tool_choice ?? 'auto') as ResponsesToolChoice,
    tools: echoedTools(r.tools),
    top_p: r.top_p ?? 1,
    presence_penalty: r.presence_penalty ?? 0,
    frequency_penalty: r.frequency_penalty ?? 0,
    top_logprobs: r.top_logprobs ?? 0,
    max_tool_calls: r.max_tool_calls ?? null,
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

/** The text settings as a response repeats them: always a format, a json_schema one with every field of OpenAI's (description, strict). */
function echoedText(text: ResponsesEcho['text']): ResponsesResponse['text'] {
  if (!text) return { format: { type: 'text' } };
  const format = text.format as Record<string, unknown> | null | undefined;
  // Codex sends only text.verbosity: the format in effect is plain text.
  if (format == null) return { ...text, format: { type: 'text' } };
  if (format.type !== 'json_schema') return text;
  return { ...text, format: { ...format, description: format.description ?? null, strict: format.strict ?? false } } as ResponsesResponse['text'];
}

/**
 * The request's tools as a response repeats them: a function tool with every field of OpenAI's (and the Open Responses)
 * tool object, `strict` as applied (a translated call is strict only when the client said so); other tools as sent.
 */
function echoedTools(tools: ResponsesEcho['tools']): ResponsesTool[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((tool) => {
    if (tool === null || typeof tool !== 'object' || tool.type !== 'function') return tool;
    const fn = tool as ResponsesFunctionTool;
    return { ...fn, description: fn.description ?? null, parameters: fn.parameters ?? null, strict: fn.strict ?? false };
  });
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

/** The OpenAI error type of a Responses error code (see responsesErrorCode). */
function responsesErrorType(code: string): string {
  switch (code) {
    case 'rate_limit_exceeded':
      return 'rate_limit_error';
    case 'insufficient_quota':
      return 'insufficient_quota';
    case 'context_length_exceeded':
      return 'invalid_request_error';
    default:
      return 'server_error';
  }
}

/**
 * The `error` stream event: OpenAI's fields (code, message, param) and the same as an `error` object, as the Open
 * Responses specification has it (the openai SDK rejects the stream with an APIError made from that object).
 */
export function responsesErrorEvent(sequence: number, code: string, message: string): Record<string, unknown> {
  return { type: 'error', sequence_number: sequence, code, message, param: null, error: { type: responsesErrorType(code), code, message, param: null } };
}
