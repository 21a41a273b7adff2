export * from './spec.js';
export { MemoryCounters } from './memory.js';
export { RedisCounters, type RedisCounterOptions } from './redis.js';

export { createCounters, type CreateCountersOptions } from './create-counters.js';
