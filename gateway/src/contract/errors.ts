import { z } from 'zod';

/** Every error code of CONTRACT, with its HTTP status and type: the one table the whole project maps errors through. */
export const ERROR_CODES = {
  invalid_json: { status: 400, type: 'invalid_request_error' },
  validation_failed: { status: 400, type: 'invalid_request_error' },
  invalid_header: { status: 400, type: 'invalid_request_error' },
  unknown_model: { status: 400, type: 'invalid_request_error' },
  body_too_large: { status: 413, type: 'invalid_request_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  model_not_allowed: { status: 403, type: 'policy_blocked' },
  pii_detected: { status: 403, type: 'policy_blocked' },
  retry_blocked: { status: 403, type: 'policy_blocked' },
  cost_cap_exceeded: { status: 403, type: 'policy_blocked' },
  policy_not_permitted: { status: 403, type: 'policy_blocked' },
  price_unknown: { status: 403, type: 'policy_blocked' },
  trace_stopped: { status: 403, type: 'policy_blocked' },
  agent_suspended: { status: 403, type: 'policy_blocked' },
  tool_not_allowed: { status: 403, type: 'policy_blocked' },
  tool_calls_exceeded: { status: 403, type: 'policy_blocked' },
  tool_denied: { status: 403, type: 'policy_blocked' },
  // /mcp: the upstream changed the tool's definition (or, with pin strict, it is new) and no admin accepted it yet.
  tool_changed: { status: 403, type: 'policy_blocked' },
  // /mcp: a browser page of another origin, or a Host that is not the gateway's own (DNS rebinding).
  origin_not_allowed: { status: 403, type: 'policy_blocked' },
  // An OAuth access token on /mcp without the scopes mcp.authorization_servers requires.
  insufficient_scope: { status: 403, type: 'policy_blocked' },
  insufficient_role: { status: 403, type: 'permission_denied' },
  tenant_forbidden: { status: 403, type: 'permission_denied' },
  csrf_failed: { status: 403, type: 'permission_denied' },
  tenant_not_found: { status: 404, type: 'not_found' },
  agent_not_found: { status: 404, type: 'not_found' },
  policy_not_found: { status: 404, type: 'not_found' },
  trace_not_found: { status: 404, type: 'not_found' },
  admin_key_not_found: { status: 404, type: 'not_found' },
  response_not_found: { status: 404, type: 'not_found' },
  route_not_found: { status: 404, type: 'not_found' },
  approval_not_found: { status: 404, type: 'not_found' },
  // GET /mcp/servers/{name}/tools and its accept: no such server in mcp_servers, or no such tool on it.
  mcp_server_not_found: { status: 404, type: 'not_found' },
  mcp_tool_not_found: { status: 404, type: 'not_found' },
  agent_exists: { status: 409, type: 'conflict' },
  tenant_exists: { status: 409, type: 'conflict' },
  policy_in_use: { status: 409, type: 'conflict' },
  tenant_not_empty: { status: 409, type: 'conflict' },
  approval_decided: { status: 409, type: 'conflict' },
  // A route from agentgw.yaml: changed only in the file.
  route_read_only: { status: 409, type: 'conflict' },
  daily_budget_exceeded: { status: 429, type: 'budget_exceeded' },
  monthly_budget_exceeded: { status: 429, type: 'budget_exceeded' },
  trace_budget_exceeded: { status: 429, type: 'budget_exceeded' },
  tenant_daily_budget_exceeded: { status: 429, type: 'budget_exceeded' },
  tenant_monthly_budget_exceeded: { status: 429, type: 'budget_exceeded' },
  rpm_exceeded: { status: 429, type: 'rate_limited' },
  tpm_exceeded: { status: 429, type: 'rate_limited' },
  // Every target answered 429: the upstream's Retry-After is passed on.
  upstream_rate_limited: { status: 429, type: 'rate_limited' },
  upstream_unavailable: { status: 502, type: 'upstream_error' },
  upstream_bad_response: { status: 502, type: 'upstream_error' },
  upstream_timeout: { status: 504, type: 'upstream_error' },
  maintenance: { status: 503, type: 'service_unavailable' },
  // The counters or the database a request needs are unreachable: refused fast (budgets fail closed), with Retry-After.
  store_unavailable: { status: 503, type: 'service_unavailable' },
  // Recorded only: the client went away before the answer, so nobody receives it.
  client_closed: { status: 499, type: 'client_error' },
  // A bug, never an answer to bad input.
  internal_error: { status: 500, type: 'internal_error' },
} as const satisfies Record<string, { status: number; type: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
export type ErrorType = (typeof ERROR_CODES)[ErrorCode]['type'];

export const ErrorBody = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string(),
      code: z.string(),
      param: z.string().nullable(),
    }),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** The one error class of agentgw: thrown anywhere, turned into CONTRACT's error body by one Fastify error handler. */
export class AgentgwError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  private readonly retryable: boolean | undefined;

  constructor(code: ErrorCode, message: string, opts: { param?: string | null; headers?: Record<string, string>; retryable?: boolean } = {}) {
    super(message);
    this.name = 'AgentgwError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.type = ERROR_CODES[code].type;
    this.param = opts.param ?? null;
    this.retryable = opts.retryable;
    // A refusal that a retry cannot change: the OpenAI and Anthropic SDKs honour this header and do not retry.
    this.headers = this.type === 'budget_exceeded' || this.type === 'policy_blocked' ? { 'x-should-retry': 'false', ...opts.headers } : (opts.headers ?? {});
  }

  /**
   * Upstream failures worth trying the next fallback target for: unreachable, slow, rate limited, or (when the error
   * says so) answering what is no answer, such as a malformed 200. A request the upstream refused is not one.
   */
  get isRetryable(): boolean {
    return this.retryable ?? (this.code === 'upstream_unavailable' || this.code === 'upstream_timeout' || this.code === 'upstream_rate_limited');
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

/** Seconds a client is told to wait after a 503 store_unavailable. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/** CONTRACT's 503 store_unavailable with Retry-After: what is unreachable, and why the request is refused, in `why`. */
export function storeUnavailableError(why: string, cause?: unknown): AgentgwError {
  const err = new AgentgwError('store_unavailable', `${why}: retry in ${STORE_RETRY_AFTER_SECONDS} seconds.`, {
    headers: { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) },
  });
  if (cause !== undefined) (err as Error & { cause?: unknown }).cause = cause;
  return err;
}

export function isAgentgwError(e: unknown): e is AgentgwError {
  return e instanceof AgentgwError;
}
