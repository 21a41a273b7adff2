// Errors on the Gemini routes in Google's shape (google.rpc.Status), with agentgw's code as an ErrorInfo reason, so
// Gemini CLI and the @google/genai SDK read them.
import type { AgentgwError } from './errors.js';

/** Google's canonical status for each HTTP status of CONTRACT's errors table. */
const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function googleStatus(status: number): string {
  return GOOGLE_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

/** `/v1beta/...` and the Gemini forms of `/v1/models/{model}:method`: their errors use Google's shape. */
export function isGeminiPath(url: string): boolean {
  if (url.startsWith('/v1beta') && (url.length === 7 || '/?#'.includes(url[7]!))) return true;
  if (!url.startsWith('/v1/models/')) return false;
  const q = url.indexOf('?');
  return (q === -1 ? url : url.slice(0, q)).includes(':');
}

export function geminiError(err: AgentgwError): Record<string, unknown> {
  const details: Array<Record<string, unknown>> = [
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: err.code, domain: 'agentgw', ...(err.param ? { metadata: { param: err.param } } : {}) },
  ];
  // Google's clients time their retry by RetryInfo (Gemini CLI gives up at once past 300 s: a spent daily budget).
  const retryAfter = Number(err.headers['retry-after']);
  if (Number.isInteger(retryAfter) && retryAfter > 0) details.push({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfter}s` });
  return { error: { code: err.status, message: err.message, status: googleStatus(err.status), details } };
}

export function geminiErrorBody(err: AgentgwError): string {
  return JSON.stringify(geminiError(err));
}

/** The error of a stream that already started: one more event, as Google ends a failed stream. */
export function geminiErrorEvent(err: AgentgwError): string {
  return `data: ${geminiErrorBody(err)}\n\n`;
}
