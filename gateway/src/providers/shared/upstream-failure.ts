// Network, timeout and parse failures of an upstream call, turned into the gateway's errors (never a plain Error).
import { AgentgwError, isAgentgwError } from '../../contract/errors.js';
import type { ProviderIdentity } from './provider-identity.js';
import type { CancelSignal } from '../spec.js';

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT', 'ESOCKETTIMEDOUT']);
const TIMEOUT_WHAT: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'timed out while connecting',
  UND_ERR_HEADERS_TIMEOUT: 'timed out before sending its response headers',
  UND_ERR_BODY_TIMEOUT: 'timed out in the middle of its response body',
};

function errorCode(err: unknown): string | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown[] };
  if (typeof e.code === 'string') return e.code;
  const fromCause = errorCode(e.cause);
  if (fromCause) return fromCause;
  return Array.isArray(e.errors) ? errorCode(e.errors[0]) : undefined;
}

/**
 * The error to raise for a failed upstream call. When the caller's signal aborted, that is what happened,
 * so its reason is returned (the caller knows it cancelled).
 */
export function upstreamFailure(identity: ProviderIdentity, err: unknown, signal?: CancelSignal): unknown {
  if (signal?.aborted) return signal.reason;
  if (isAgentgwError(err)) return err;
  // A programming error is a gateway bug, not an upstream failure: it must surface as one.
  if (err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError) return err;
  const who = `Provider "${identity.name}"`;
  const code = errorCode(err);
  if (code && TIMEOUT_CODES.has(code)) {
    return new AgentgwError('upstream_timeout', `${who} ${TIMEOUT_WHAT[code] ?? 'timed out'} (${code}); try again or raise its timeout.`);
  }
  if (code?.startsWith('HPE_')) {
    return new AgentgwError('upstream_bad_response', `${who} sent a malformed HTTP response (${code}).`, { retryable: true });
  }
  if (err instanceof SyntaxError) {
    return new AgentgwError('upstream_bad_response', `${who} answered with a body that is not valid JSON.`, { retryable: true });
  }
  return new AgentgwError('upstream_unavailable', `${who} could not be reached (${code ?? 'connection failed'}); try again later or configure a fallback target.`);
}

/** An answer that is no answer (a malformed body or stream): the next fallback target may do better. */
export function badUpstreamResponse(identity: ProviderIdentity, what: string): AgentgwError {
  return new AgentgwError('upstream_bad_response', `Provider "${identity.name}" ${what}`, { retryable: true });
}

/**
 * The failure of a stream that already started. A connection that drops mid-stream cut the answer short: the upstream
 * was reachable, and what it sent is no whole answer (upstream_bad_response, as for a stream that ends without its
 * terminal event); a timeout stays a timeout, and an error the upstream reported stays what it said.
 */
export function midStreamFailure(identity: ProviderIdentity, err: unknown, signal?: CancelSignal): unknown {
  const mapped = upstreamFailure(identity, err, signal);
  if (isAgentgwError(err) || !isAgentgwError(mapped) || mapped.code !== 'upstream_unavailable') return mapped;
  return badUpstreamResponse(identity, `cut the stream short (${errorCode(err) ?? 'connection closed'}).`);
}

/** A stream that ended, the connection closed in good order, before its terminal event: an answer cut short. */
export function streamEndedEarly(identity: ProviderIdentity, terminal: string): AgentgwError {
  return badUpstreamResponse(identity, `ended the stream before ${terminal}; the answer is incomplete.`);
}

/**
 * The JSON object an event's data carries, parsed whole: a frame that is not one (cut short, broken inside, a line of
 * text) fails the stream rather than reach a client whose SDK would fail to parse it, or be billed as if it were whole.
 */
export function parseEventObject<T = Record<string, unknown>>(identity: ProviderIdentity, data: string): T {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw badUpstreamResponse(identity, 'sent a stream event that is not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badUpstreamResponse(identity, 'sent a stream event that is not a JSON object.');
  return value as T;
}

/**
 * Past this many characters, an event nobody needs to read is not parsed to prove it whole: it must open and close as
 * an object. A Responses snapshot event (`response.created`, `response.in_progress`) echoes the request's instructions
 * and tools, often 10-40 KB; parsing each whole cost more than the rest of the request. Events that are read (terminal,
 * error, usage) and every smaller event are still parsed whole.
 */
export const PARSED_EVENT_CHARS = 4096;

/** True when `data` opens with `{` and closes with `}` (whitespace aside): no line of text, no frame cut short. */
function looksLikeObject(data: string): boolean {
  let i = 0;
  let j = data.length - 1;
  while (i <= j && isSpace(data.charCodeAt(i))) i++;
  while (j >= i && isSpace(data.charCodeAt(j))) j--;
  return i < j && data.charCodeAt(i) === 0x7b && data.charCodeAt(j) === 0x7d;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * An event that is passed on but not read: parsed whole when small (see PARSED_EVENT_CHARS), else checked to open and
 * close as a JSON object; what does not fails the stream as parseEventObject does.
 */
export function checkPassedEvent(identity: ProviderIdentity, data: string): void {
  if (data.length <= PARSED_EVENT_CHARS) {
    parseEventObject(identity, data);
    return;
  }
  if (!looksLikeObject(data)) throw badUpstreamResponse(identity, 'sent a stream event that is not valid JSON.');
}
