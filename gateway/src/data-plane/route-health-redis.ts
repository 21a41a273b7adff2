// Multi-node mode: a cooldown one node sets is seen by the others within a second. Each cooldown end is written to one
// Redis hash (field: the deployment, value: epoch ms), and every node reads the hash twice a second.
import type { Redis } from 'ioredis';
import { bestEffortRedis } from '../storage/redis-client.js';
import type { HealthBoard } from './route-health.js';

/** How often a node reads the cooldowns the others set. */
export const COOLDOWN_SYNC_MS = 500;

export class RedisCooldowns {
  private readonly redis: Redis;
  private readonly key: string;
  private readonly timer: NodeJS.Timeout;
  private reading = false;

  constructor(
    private readonly board: HealthBoard,
    url: string,
    prefix: string,
  ) {
    this.key = `${prefix}route-cooldowns`;
    // Cooldowns stay per node while Redis is away.
    this.redis = bestEffortRedis(url);
    board.publish = (id, until) => this.publish(id, until);
    this.timer = setInterval(() => void this.read(), COOLDOWN_SYNC_MS);
    this.timer.unref();
  }

  private publish(id: string, until: number): void {
    this.redis
      .multi()
      .hset(this.key, id, String(until))
      // Longer than any cooldown (Retry-After is capped at an hour): ended ones are skipped when read.
      .pexpire(this.key, 2 * 3_600_000)
      .exec()
      .catch(() => undefined);
  }

  /** Reads every node's cooldowns into this node's board (the ones still running). */
  async read(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const all = await this.redis.hgetall(this.key);
      const now = Date.now();
      for (const [id, value] of Object.entries(all)) {
        const until = Number(value);
        if (until > now) this.board.of(id).cooledElsewhere(until);
      }
    } catch {
      // Redis away: the next read tries again.
    } finally {
      this.reading = false;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.board.publish = undefined;
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
