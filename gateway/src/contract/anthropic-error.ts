// Errors on /v1/messages in Anthropic's shape, with agentgw's code added, so Anthropic SDKs and Claude Code read them.
import type { AgentgwError } from './errors.js';

/** Anthropic's error type for each HTTP status of CONTRACT's errors table. */
const ANTHROPIC_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'api_error',
};

/** Paths of Anthropic's API (`/v1/messages`, `/v1/messages/...`, with or without a query): their errors use its shape. */
export function isAnthropicPath(url: string): boolean {
  return url.startsWith('/v1/messages') && (url.length === 12 || '/?#'.includes(url[12]!));
}

export function anthropicErrorType(status: number): string {
  return ANTHROPIC_TYPE[status] ?? 'api_error';
}

export function anthropicErrorBody(err: AgentgwError, requestId: string): string {
  return JSON.stringify({ type: 'error', error: { type: anthropicErrorType(err.status), message: err.message, code: err.code }, request_id: requestId });
}

/** The error event of a stream that already started. */
export function anthropicErrorEvent(err: AgentgwError): string {
  return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: anthropicErrorType(err.status), message: err.message, code: err.code } })}\n\n`;
}
