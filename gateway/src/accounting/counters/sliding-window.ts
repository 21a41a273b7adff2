import type { RateLimitRequest, RateLimitResult } from './spec.js';

/**
 * Rate limits use a sliding one-minute window approximated from two fixed minutes: the previous minute's count weighted by the
 * part of it still inside the last 60 s, plus the current minute's. O(1) state per agent, and a token correction after the
 * response is a plain add to the current minute. The memory and Redis implementations evaluate exactly these formulas.
 */
export const RATE_WINDOW_MS = 60_000;

export interface RateCounts {
  prevRequests: number;
  curRequests: number;
  prevTokens: number;
  curTokens: number;
}

export function minuteOf(now: Date): { minute: number; elapsedMs: number } {
  const ms = now.getTime();
  const minute = Math.floor(ms / RATE_WINDOW_MS);
  return { minute, elapsedMs: ms - minute * RATE_WINDOW_MS };
}

const exceeds = (limit: number, prev: number, cur: number, cost: number, elapsedMs: number) =>
  prev * (1 - elapsedMs / RATE_WINDOW_MS) + cur + cost > limit;

/** Which limit the request would pass, or null when both admit it. */
export function rateLimitExceeded(req: Pick<RateLimitRequest, 'rpm' | 'tpm'>, tokens: number, c: RateCounts, elapsedMs: number): 'rpm' | 'tpm' | null {
  if (req.rpm !== null && exceeds(req.rpm, c.prevRequests, c.curRequests, 1, elapsedMs)) return 'rpm';
  if (req.tpm !== null && exceeds(req.tpm, c.prevTokens, c.curTokens, tokens, elapsedMs)) return 'tpm';
  return null;
}

/** Seconds until a request of `cost` would fit if nothing else arrived (at least 1; 60 when it can never fit). */
export function retryAfterSeconds(limit: number, prev: number, cur: number, cost: number, elapsedMs: number): number {
  const W = RATE_WINDOW_MS;
  let waitMs: number;
  if (cost > limit) {
    waitMs = W;
  } else if (cur + cost <= limit) {
    // The previous minute's weight has to shrink: prev * (1 - t / W) + cur + cost <= limit.
    waitMs = prev > 0 ? W * (1 - (limit - cur - cost) / prev) - elapsedMs : 0;
  } else {
    // Only the next minute helps, where this minute's count becomes the weighted previous one.
    waitMs = W - elapsedMs + Math.max(0, W * (1 - (limit - cost) / cur));
  }
  // Whole milliseconds first, so float dust (10000.000000000004 ms) does not add a second.
  return Math.min(120, Math.max(1, Math.ceil(Math.round(waitMs) / 1000)));
}

/** The full answer for a refused request. */
export function refusal(which: 'rpm' | 'tpm', req: Pick<RateLimitRequest, 'rpm' | 'tpm'>, tokens: number, c: RateCounts, elapsedMs: number): RateLimitResult {
  const retry =
    which === 'rpm'
      ? retryAfterSeconds(req.rpm as number, c.prevRequests, c.curRequests, 1, elapsedMs)
      : retryAfterSeconds(req.tpm as number, c.prevTokens, c.curTokens, tokens, elapsedMs);
  return { ok: false, which, retryAfterSeconds: retry };
}

/** Token estimates as the non-negative integers the counters add. */
export function tokenCount(tokens: number): number {
  return Number.isFinite(tokens) && tokens > 0 ? Math.round(tokens) : 0;
}
