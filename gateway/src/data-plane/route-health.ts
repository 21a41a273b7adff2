// Health of each deployment (`provider/model`) on this node: cooldowns after 429s, 5xx, timeouts and resets, one probe
// when a cooldown ends, requests in flight, recent latency and error rate. The router reads it to pick and order targets.
import { AgentgwError, isAgentgwError } from '../contract/index.js';

/** Backoff after a failure that carries no Retry-After: 5 s, doubling per consecutive failure, at most a minute. */
export const BASE_COOLDOWN_MS = 5_000;
export const MAX_COOLDOWN_MS = 60_000;
/** A Retry-After longer than this is capped: a target is tried again at least once an hour. */
const MAX_RETRY_AFTER_MS = 3_600_000;
/** Weight of the newest sample in the latency and error-rate averages. */
const EWMA = 0.2;

export type HealthState = 'healthy' | 'cooling_down' | 'probing';

/** What a node knows of one deployment. Shared by every alias that routes to it. */
export class TargetHealth {
  /** Epoch ms until which no request is sent (0: none). */
  cooldownUntil = 0;
  /** Consecutive failures, for the backoff. */
  failures = 0;
  /** A probe request is out after a cooldown: no other request goes until it answers. */
  probing = false;
  inFlight = 0;
  /** Recent time to first byte in ms (an average of the latest samples); NaN before the first. */
  latencyMs = Number.NaN;
  /** Recent share of failed attempts, 0..1. */
  errorRate = 0;
  /** Own quota: requests and tokens in the current minute. */
  minute = 0;
  requests = 0;
  tokens = 0;
  constructor(
    readonly id: string,
    private readonly board?: HealthBoard,
  ) {}

  state(now: number): HealthState {
    if (this.probing) return 'probing';
    return this.cooldownUntil > now ? 'cooling_down' : 'healthy';
  }

  /** Whether a request may go now (a cooldown that ended lets exactly one probe through). */
  available(now: number): boolean {
    return this.cooldownUntil <= now && !this.probing;
  }

  /** Whether the deployment's own rpm / tpm leave room for one more request of `tokens`. */
  withinQuota(rpm: number | undefined, tpm: number | undefined, tokens: number, now: number): boolean {
    if (rpm === undefined && tpm === undefined) return true;
    this.rollMinute(now);
    if (rpm !== undefined && this.requests >= rpm) return false;
    if (tpm !== undefined && this.tokens > 0 && this.tokens + tokens > tpm) return false;
    return true;
  }

  /** Epoch ms at which the quota's minute ends. */
  quotaResetAt(): number {
    return (this.minute + 1) * 60_000;
  }

  private rollMinute(now: number): void {
    const m = Math.floor(now / 60_000);
    if (m !== this.minute) {
      this.minute = m;
      this.requests = 0;
      this.tokens = 0;
    }
  }

  /** An attempt starts: counted in flight and against the quota; a cooled-down target that may go is probed. */
  begin(now: number, tokens: number, quota = true, probe = true): void {
    this.inFlight++;
    if (quota) {
      this.rollMinute(now);
      this.requests++;
      this.tokens += tokens;
    }
    if (probe && this.cooldownUntil !== 0) this.probing = true;
  }

  succeeded(latencyMs: number): void {
    this.inFlight--;
    this.probing = false;
    this.failures = 0;
    this.cooldownUntil = 0;
    this.latencyMs = Number.isNaN(this.latencyMs) ? latencyMs : this.latencyMs + EWMA * (latencyMs - this.latencyMs);
    this.errorRate -= EWMA * this.errorRate;
  }

  /** An attempt failed; returns the cooldown end it set, or 0 when the failure says nothing about the deployment. */
  failed(e: unknown, now: number): number {
    this.inFlight--;
    this.probing = false;
    if (!coolsDown(e)) return 0;
    this.errorRate += EWMA * (1 - this.errorRate);
    this.failures++;
    const retryAfter = retryAfterMs(e);
    const ms = retryAfter ?? Math.min(MAX_COOLDOWN_MS, BASE_COOLDOWN_MS * 2 ** Math.min(this.failures - 1, 10));
    this.cooldownUntil = Math.max(this.cooldownUntil, now + ms);
    this.board?.publish?.(this.id, this.cooldownUntil);
    return this.cooldownUntil;
  }

  /** The caller gave up before an answer (the client left): nothing learnt. */
  abandoned(): void {
    this.inFlight--;
    this.probing = false;
  }

  /** A cooldown another node set. */
  cooledElsewhere(until: number): void {
    if (until > this.cooldownUntil) this.cooldownUntil = until;
  }
}

/** 429, 5xx, timeouts and resets: the retryable upstream failures. A refused request (400, 401) is the request's fault. */
function coolsDown(e: unknown): boolean {
  return isAgentgwError(e) && e.isRetryable && e.code !== 'upstream_bad_response';
}

function retryAfterMs(e: unknown): number | undefined {
  if (!(e instanceof AgentgwError)) return undefined;
  const v = e.headers['retry-after'];
  if (v === undefined || !/^\d{1,9}$/.test(v)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Number(v) * 1000);
}

/** Every deployment's health on this node, keyed by `provider/model` (and `#key` for a key of a pool). */
export class HealthBoard {
  private readonly byId = new Map<string, TargetHealth>();
  /** Set in multi-node mode: tells the other nodes of a cooldown (see RedisCooldowns). */
  publish?: (id: string, until: number) => void;

  of(id: string): TargetHealth {
    let h = this.byId.get(id);
    if (!h) this.byId.set(id, (h = new TargetHealth(id, this)));
    return h;
  }

  /** Forgets every cooldown and failure count (tests that script an upstream's failures request by request). */
  reset(): void {
    for (const h of this.byId.values()) {
      h.cooldownUntil = 0;
      h.failures = 0;
      h.probing = false;
    }
  }

  all(): IterableIterator<TargetHealth> {
    return this.byId.values();
  }
}
