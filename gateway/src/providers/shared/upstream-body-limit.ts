// limits.upstream_body_mb: how much of a successful upstream answer the gateway holds at once. A body past it, or one
// event of a stream past it, is not the upstream's answer but a fault: the call ends with 502 upstream_bad_response
// and the connection is dropped, rather than the gateway's memory growing with whatever the upstream sends.
import type { Readable } from 'node:stream';
import { AgentgwError } from '../../contract/errors.js';
import type { ProviderIdentity } from './provider-identity.js';

const MB = 1024 * 1024;

/** The default of limits.upstream_body_mb (32), in bytes. */
export const DEFAULT_UPSTREAM_BODY_BYTES = 32 * MB;

/**
 * Not retryable (no fallback target is tried): the call reached the upstream, which may bill it, and another target
 * asked the same is likely to answer as much.
 */
export function upstreamBodyTooLarge(identity: ProviderIdentity, limit: number, what: 'body' | 'event'): AgentgwError {
  const size = `${Number((limit / MB).toFixed(3))} MB`;
  const part = what === 'body' ? 'a response body' : 'a stream event';
  return new AgentgwError(
    'upstream_bad_response',
    `Provider "${identity.name}" sent ${part} larger than ${size}, the gateway's limit (limits.upstream_body_mb); the answer was dropped. Ask for less output, or raise the limit in the gateway configuration.`,
    // SDKs retry a 502 by themselves: each retry would be billed and likely as large.
    { headers: { 'x-should-retry': 'false' } },
  );
}

/**
 * Bytes after the last line end of a chunk in which an event ended: the start of the next event, which the SSE parser
 * holds until its blank line comes. A backward scan, over a few bytes when the chunk ends with a line.
 */
export function bytesAfterLastLine(chunk: Buffer | string): number {
  let i = chunk.length;
  if (typeof chunk === 'string') {
    while (i > 0 && chunk.charCodeAt(i - 1) !== 10 && chunk.charCodeAt(i - 1) !== 13) i--;
  } else {
    while (i > 0 && chunk[i - 1] !== 10 && chunk[i - 1] !== 13) i--;
  }
  return chunk.length - i;
}

/** The limit of each body send() hands out unread, for whoever reads it later (sseEvents, readJson). */
const limits = new WeakMap<Readable, number>();

export function limitBody(body: Readable, bytes: number): void {
  limits.set(body, bytes);
}

export function bodyLimitOf(body: Readable): number {
  return limits.get(body) ?? DEFAULT_UPSTREAM_BODY_BYTES;
}
