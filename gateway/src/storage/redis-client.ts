// Redis clients. ioredis is loaded with the first client a node makes, so one node on SQLite (the default) never loads
// it: its modules hold about 20 MB that such a node would carry for nothing.
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';

const require = createRequire(import.meta.url);
let RedisClass: typeof Redis | undefined;

/** A client of `url`. */
export function newRedis(url: string, options: RedisOptions): Redis {
  RedisClass ??= (require('ioredis') as typeof import('ioredis')).Redis;
  return new RedisClass(url, options);
}

/**
 * A client for what is best effort across nodes (pub/sub, shared hints, listings): while Redis is away a command fails
 * at once rather than waiting in a queue, the client reconnects every 2 s at most, and its errors are not logged (the
 * counters report Redis's health). `options` adds to or overrides these.
 */
export function bestEffortRedis(url: string, options: RedisOptions = {}): Redis {
  const client = newRedis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: (n) => Math.min(100 * n, 2_000), ...options });
  client.on('error', () => undefined);
  return client;
}
