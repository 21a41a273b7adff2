// One table from an upstream's non-2xx status to the gateway's error code: the retryable ones let the caller fall back.
import { AgentgwError } from '../../contract/errors.js';
import type { ProviderIdentity } from './provider-identity.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from './sanitize-upstream-message.js';

// Upstream sentences that mean "no such model/deployment" even when the status is 400.
const UNKNOWN_MODEL = /\b(model|deployment)\b[^.]*\b(not found|does not exist|not exist|identifier is invalid|is not valid|unknown)\b|\bmodel_not_found\b|\bDeploymentNotFound\b/i;

// Google answers a wrong API key with 400 INVALID_ARGUMENT, not 401.
const KEY_REJECTED = /\bAPI_KEY_INVALID\b|API key not valid/;

/** How much of a failed call's body is read, for its error message; the rest is dropped with the connection. */
export const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * The start of a failed call's body, kept as bytes and decoded once, so a character split between two network chunks
 * stays whole. Every way of calling upstream reads its error bodies through one of these.
 */
export class ErrorBody {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  /** Adds a chunk of the body; true once ERROR_BODY_LIMIT bytes are in, when the caller stops reading and drops the call. */
  add(chunk: Buffer): boolean {
    if (this.size < ERROR_BODY_LIMIT) {
      this.chunks.push(chunk);
      this.size += chunk.length;
    }
    return this.size >= ERROR_BODY_LIMIT;
  }

  /** At most ERROR_BODY_LIMIT bytes of the body, as text. */
  text(): string {
    const end = Math.min(this.size, ERROR_BODY_LIMIT);
    return this.chunks.length === 1 ? this.chunks[0]!.toString('utf8', 0, end) : Buffer.concat(this.chunks, this.size).toString('utf8', 0, end);
  }
}

/**
 * The Retry-After of an upstream's answer, in seconds, from its headers (an object, or undici's raw name/value list);
 * an HTTP date becomes the seconds until it. Undefined when absent or unreadable.
 */
export function retryAfterOf(headers: unknown, now = Date.now()): string | undefined {
  let value: unknown;
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) if (String(headers[i]).toLowerCase() === 'retry-after') value = String(headers[i + 1]);
  } else if (headers !== null && typeof headers === 'object') {
    const v = (headers as Record<string, unknown>)['retry-after'];
    value = Array.isArray(v) ? v[0] : v;
  }
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return text;
  const at = Date.parse(text);
  return Number.isFinite(at) ? String(Math.max(0, Math.ceil((at - now) / 1000))) : undefined;
}

export function upstreamStatusError(identity: ProviderIdentity, status: number, bodyText: string, retryAfter?: string): AgentgwError {
  const who = `Provider "${identity.name}"`;
  const extracted = extractUpstreamMessage(bodyText);
  const detail = sanitizeUpstreamMessage(identity, extracted.message);
  const said = detail ? `: ${detail}` : '.';

  if (status === 401 || status === 403 || (status === 400 && KEY_REJECTED.test(bodyText))) {
    // Credentials are the gateway's, not the client's: never echo the upstream text, it may quote part of the key.
    return new AgentgwError(
      'upstream_bad_response',
      `${who} rejected the gateway's credentials (HTTP ${status}); check ${identity.credentialHint} in the gateway configuration.`,
    );
  }
  if (status === 404 || ((status === 400 || status === 422) && (UNKNOWN_MODEL.test(extracted.message) || UNKNOWN_MODEL.test(extracted.code ?? '')))) {
    return new AgentgwError('unknown_model', `${who} does not serve the requested model (HTTP ${status})${said}`, { param: 'model' });
  }
  if (status === 400 || status === 413 || status === 422) {
    return new AgentgwError('validation_failed', `${who} rejected the request (HTTP ${status})${said}`, { param: extracted.param });
  }
  if (status === 408) {
    return new AgentgwError('upstream_timeout', `${who} timed out (HTTP 408)${said}`);
  }
  if (status === 429) {
    // Retryable on the next target; when every target answers 429, the client is told when to come back.
    return new AgentgwError('upstream_rate_limited', `${who} is rate limiting the gateway (HTTP 429)${said}`, { headers: { 'retry-after': retryAfter ?? '1' } });
  }
  if (status >= 500 || status === 409 || status === 425) {
    return new AgentgwError('upstream_unavailable', `${who} failed (HTTP ${status})${said}`);
  }
  return new AgentgwError('upstream_bad_response', `${who} answered with unexpected HTTP ${status}${said}`);
}
