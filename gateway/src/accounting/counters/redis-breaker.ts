// The Redis counters' fail-fast policy: a deadline per command that event-loop lag cannot trip, and a circuit breaker.
import { CountersUnavailableError, type CounterLog } from './spec.js';

/** Redis error replies that mean the server cannot serve now, like a lost connection. */
const UNAVAILABLE_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|MISCONF)\b/;

export interface BreakerOptions {
  /** Longest wait for one command's answer. */
  timeoutMs: number;
  /** Failures in a row (timeouts, lost connection, the server saying it cannot serve) that open the circuit. */
  failures: number;
  /** How long every call fails at once once the circuit is open, before one probe may try again. */
  cooldownMs: number;
  log?: CounterLog;
  /** Called when a call succeeds after failures (the counters may have missed writes meanwhile). */
  onRecovered?: () => void;
}

/**
 * Runs Redis calls with a deadline and a circuit breaker. Every failure comes out as CountersUnavailableError.
 *
 * The deadline is checked after the event loop has read what the sockets hold: a node whose loop was busy (a burst of
 * requests on a small machine) for longer than the deadline finds the answer that came meanwhile, instead of counting a
 * timeout that never happened. Only a Redis that does not answer within the deadline counts.
 */
export class RedisBreaker {
  private failuresInARow = 0;
  /** Until when calls fail at once (0 = closed). */
  private openUntil = 0;
  private probing = false;

  constructor(private readonly opts: BreakerOptions) {}

  get open(): boolean {
    return this.openUntil > Date.now();
  }

  /** The connection came back: no probe is needed to find out. */
  reset(): void {
    this.failuresInARow = 0;
    this.openUntil = 0;
  }

  async run<T>(op: () => Promise<T>): Promise<T> {
    const probe = this.openUntil !== 0;
    if (probe) {
      if (this.openUntil > Date.now() || this.probing) throw new CountersUnavailableError('Redis failed recently: the circuit breaker is open');
      this.probing = true;
    }
    try {
      const result = await withDeadline(op(), this.opts.timeoutMs);
      if (this.failuresInARow > 0 || probe) {
        if (probe) this.opts.log?.warn({}, 'Redis counters answer again: circuit breaker closed');
        this.reset();
        this.opts.onRecovered?.();
      }
      return result;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const replied = err instanceof Error && err.name === 'ReplyError' && !UNAVAILABLE_REPLY.test(message);
      if (replied && probe) {
        // The server answered (with an error of its own): it is reachable again.
        this.reset();
      } else if (!replied && (++this.failuresInARow >= this.opts.failures || probe)) {
        if (this.openUntil === 0) this.opts.log?.error({ err }, 'Redis counters failing: circuit breaker open, requests that need counters are refused');
        this.openUntil = Date.now() + this.opts.cooldownMs;
      }
      throw err instanceof CountersUnavailableError ? err : new CountersUnavailableError(`Redis counters: ${message}`, { cause: err });
    } finally {
      if (probe) this.probing = false;
    }
  }
}

/**
 * The promise's outcome, or a timeout error once `ms` have passed and the loop has then read its sockets once more (a
 * timer that fires late, after a busy stretch, runs before the I/O that came meanwhile: setImmediate runs after it).
 */
function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (done) return;
        done = true;
        reject(new CountersUnavailableError(`Redis did not answer within ${ms} ms`));
      });
    }, ms);
    p.then(
      (v) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
