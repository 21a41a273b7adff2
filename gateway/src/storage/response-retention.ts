import type { Store } from './store.js';

/** How often stored responses past their retention are deleted. */
export const RESPONSE_SWEEP_INTERVAL_MS = 3_600_000;

const DAY_MS = 86_400_000;

/** Where a sweep reports what it deleted and why it failed (a pino logger fits). */
export interface RetentionLog {
  error(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
}

export interface ResponseRetentionOptions {
  /** `responses.retention_days` of the server config. */
  retentionDays: number;
  intervalMs?: number;
  /** The clock, in epoch milliseconds (tests pass their own). */
  now?: () => number;
  log?: RetentionLog;
}

export interface ResponseRetention {
  /** Runs a sweep now, or waits for the one in progress; never rejects. */
  sweep(): Promise<void>;
  /** Stops the timer and waits for a sweep in progress, so the store can close after it. */
  stop(): Promise<void>;
}

/**
 * Deletes stored responses older than the retention: once at start, then every interval. A failed sweep (the database
 * away) is one log line and is tried again at the next interval; it never throws into the process.
 */
export function startResponseRetention(store: Pick<Store, 'sweepResponses'>, opts: ResponseRetentionOptions): ResponseRetention {
  const now = opts.now ?? Date.now;
  let running: Promise<void> | undefined;
  let stopped = false;
  const sweep = (): Promise<void> => {
    // A sweep still deleting a large backlog when the next is due is not run twice.
    if (running) return running;
    if (stopped) return Promise.resolve();
    const before = new Date(now() - opts.retentionDays * DAY_MS).toISOString();
    running = sweepOnce(store, before, opts.log).finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(sweep, opts.intervalMs ?? RESPONSE_SWEEP_INTERVAL_MS);
  // The sweep alone never keeps the process alive.
  timer.unref();
  void sweep();
  return {
    sweep,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

async function sweepOnce(store: Pick<Store, 'sweepResponses'>, before: string, log: RetentionLog | undefined): Promise<void> {
  try {
    const deleted = await store.sweepResponses(before);
    if (deleted > 0) log?.info?.({ deleted, before }, 'deleted stored responses past their retention');
  } catch (err) {
    log?.error({ err, before }, 'deleting stored responses past their retention failed; the next sweep tries again');
  }
}
