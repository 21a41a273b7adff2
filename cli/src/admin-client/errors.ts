/** A refusal from the admin interface: the CONTRACT error body, kept whole so callers can branch on `code`. */
export class AdminApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly type: string;
  readonly param: string | null;

  constructor(status: number, code: string, message: string, opts: { type?: string; param?: string | null } = {}) {
    super(message);
    this.name = 'AdminApiError';
    this.status = status;
    this.code = code;
    this.type = opts.type ?? 'unknown';
    this.param = opts.param ?? null;
  }
}

/** The admin interface could not be reached at all (nothing listening, unknown host, timeout). */
export class AdminConnectionError extends Error {
  readonly url: string;
  readonly reason: string;

  constructor(url: string, reason: string) {
    super(`cannot reach the agentgw admin interface at ${url}: ${reason}`);
    this.name = 'AdminConnectionError';
    this.url = url;
    this.reason = reason;
  }
}

export function isAdminApiError(e: unknown, code?: string): e is AdminApiError {
  return e instanceof AdminApiError && (code === undefined || e.code === code);
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  UND_ERR_BODY_TIMEOUT: 'no answer in time',
  ECONNRESET: 'connection reset',
  UND_ERR_SOCKET: 'connection closed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPROTO: 'protocol error (is it https?)',
};

/** Maps a socket-level failure to a short reason; Node may wrap it in an AggregateError (IPv4 and IPv6 attempts). */
export function connectionReason(e: unknown): string {
  const seen: unknown[] = [e];
  while (seen.length > 0) {
    const err = seen.shift() as { code?: string; cause?: unknown; errors?: unknown[]; message?: string } | undefined;
    if (!err || typeof err !== 'object') continue;
    if (err.code && REASONS[err.code]) return REASONS[err.code];
    if (err.cause) seen.push(err.cause);
    if (Array.isArray(err.errors)) seen.push(...err.errors);
  }
  const first = e as { code?: string; message?: string };
  return first?.code ?? first?.message ?? 'unknown network error';
}
