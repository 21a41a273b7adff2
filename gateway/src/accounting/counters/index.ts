import { MemoryCounters } from './memory.js';
import { RedisCounters } from './redis.js';
import type { CounterOptions, Counters } from './spec.js';

export * from './spec.js';
export { MemoryCounters } from './memory.js';
export { RedisCounters, type RedisCounterOptions } from './redis.js';

export interface CreateCountersOptions extends CounterOptions {
  /** Redis URL (AGENTGW_REDIS_URL); without it, counters live in this process. */
  redisUrl?: string;
  /** Redis key prefix (default `agentgw:`). */
  prefix?: string;
}

/** Chosen once at start-up: Redis when a URL is configured, else in-process. */
export function createCounters(options: CreateCountersOptions = {}): Counters {
  const { redisUrl, prefix, ...rest } = options;
  return redisUrl ? new RedisCounters({ ...rest, url: redisUrl, prefix }) : new MemoryCounters(rest);
}
