import { MemoryCounters } from './memory.js';
import type { RedisCounterOptions } from './redis.js';
import type { CounterOptions, Counters } from './spec.js';

/** Redis only: timeouts of the fail-fast client (see RedisCounterOptions). */
type RedisTimings = Pick<RedisCounterOptions, 'commandTimeoutMs' | 'breakerFailures' | 'breakerCooldownMs' | 'rebuildWaitMs' | 'syncMs'>;

export interface CreateCountersOptions extends CounterOptions, RedisTimings {
  /** Redis URL (AGENTGW_REDIS_URL); without it, counters live in this process. */
  redisUrl?: string;
  /** Redis key prefix (default `agentgw:`). */
  prefix?: string;
}

/** Chosen once at start-up: Redis when a URL is configured (its client loaded only then), else in-process. */
export async function createCounters(options: CreateCountersOptions = {}): Promise<Counters> {
  const { redisUrl, prefix, ...rest } = options;
  if (!redisUrl) return new MemoryCounters(rest);
  const { RedisCounters } = await import('./redis.js');
  return new RedisCounters({ ...rest, url: redisUrl, prefix });
}
