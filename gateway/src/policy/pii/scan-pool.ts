// Scan workers: large fresh texts are read off the main thread, so one request's PII scan never holds the event loop
// that every other request needs. Started on first use, one per core (at least two); jobs of long texts never take the
// last free one, so an agent's next 50 KB tool output is never queued behind another tenant's 4 MB. A worker that dies
// is replaced, and the jobs it held fail (the request is refused, never waved through).
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { PiiType } from '../../contract/policies.js';
import type { TextKind, TextVerdict } from './scan-text.js';

export interface ScanJob {
  id: number;
  texts: readonly string[];
  kinds: readonly TextKind[];
  types: readonly PiiType[];
  /** The allow-list as its lists of patterns (see allowFromLists). */
  allow: readonly (readonly string[])[];
  redact: boolean;
}

export type ScanJobAnswer = { id: number; verdicts: TextVerdict[]; error?: undefined } | { id: number; error: string; verdicts?: undefined };

/** How long a job may take before its worker is stopped and the job fails: far above any linear scan of its text. */
const jobTimeoutMs = (chars: number) => 10_000 + chars / 100;

/** A job of more characters than this is long (up to seconds on dense digits): it never takes the pool's last worker. */
export const LONG_JOB_CHARS = 256 * 1024;

interface Queued {
  job: ScanJob;
  chars: number;
  long: boolean;
  started: boolean;
  resolve(verdicts: TextVerdict[]): void;
  reject(error: Error): void;
}

/** The worker's module: the compiled one beside this file, or (from the TypeScript sources, in tests) the source with type-stripping hooks. */
function workerEntry(): { url: URL; execArgv?: string[] } {
  const js = new URL('./scan-worker.js', import.meta.url);
  if (existsSync(js)) return { url: js };
  const hooks = new URL('./scan-worker-hooks.mjs', import.meta.url).href;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(hooks)});`;
  return { url: new URL('./scan-worker.ts', import.meta.url), execArgv: ['--import', `data:text/javascript,${encodeURIComponent(register)}`] };
}

class PoolWorker {
  readonly worker: Worker;
  current: Queued | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Stopped for taking too long: answers no more jobs. */
  private stopped = false;

  constructor(
    entry: { url: URL; execArgv?: string[] },
    private readonly onFree: (w: PoolWorker) => void,
    private readonly onGone: (w: PoolWorker) => void,
  ) {
    this.worker = new Worker(entry.url, entry.execArgv ? { execArgv: entry.execArgv } : {});
    this.worker.on('message', (answer: ScanJobAnswer) => {
      if (this.stopped) return;
      const done = this.finish();
      if (done && answer.error !== undefined) done.reject(new Error(`PII scan worker failed: ${answer.error}`));
      else done?.resolve(answer.verdicts!);
      this.onFree(this);
    });
    this.worker.on('error', (e) => this.finish()?.reject(e instanceof Error ? e : new Error(String(e))));
    this.worker.on('exit', (code) => {
      this.finish()?.reject(new Error(`PII scan worker exited (${code}) before it answered`));
      this.onGone(this);
    });
    // An idle worker never keeps the process alive (after the listeners, which would take the reference again).
    this.worker.unref();
  }

  start(q: Queued): void {
    this.current = q;
    this.worker.ref();
    this.timer = setTimeout(() => {
      this.stopped = true;
      this.finish()?.reject(new Error('PII scan worker took too long and was stopped'));
      void this.worker.terminate();
    }, jobTimeoutMs(q.chars));
    this.timer.unref();
    this.worker.postMessage(q.job);
  }

  private finish(): Queued | undefined {
    const q = this.current;
    this.current = undefined;
    this.worker.unref();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    return q;
  }
}

export class ScanPool {
  private readonly workers = new Set<PoolWorker>();
  private readonly idle: PoolWorker[] = [];
  private readonly queue: Queued[] = [];
  private entry: { url: URL; execArgv?: string[] } | undefined;
  private nextId = 0;
  /** Long jobs running now. */
  private longRunning = 0;

  /** `size`: the most workers at once; with two or more, one is kept from long jobs. */
  constructor(readonly size: number) {}

  /** The verdicts of the job's texts, read by a worker; rejects when the worker fails, dies or runs out of time. */
  run(job: Omit<ScanJob, 'id'>): Promise<TextVerdict[]> {
    let chars = 0;
    for (const t of job.texts) chars += t.length;
    const long = chars > LONG_JOB_CHARS;
    return new Promise((resolve, reject) => {
      const q: Queued = {
        job: { ...job, id: ++this.nextId },
        chars,
        long,
        started: false,
        resolve: (v) => (this.ended(q), resolve(v)),
        reject: (e) => (this.ended(q), reject(e)),
      };
      this.queue.push(q);
      this.dispatch();
    });
  }

  private ended(q: Queued): void {
    if (q.started && q.long) this.longRunning--;
  }

  /** The first queued job that may start now: a long one only while another worker is left for the rest. */
  private nextJob(): number {
    const longMax = Math.max(1, this.size - 1);
    for (let i = 0; i < this.queue.length; i++) if (!this.queue[i]!.long || this.longRunning < longMax) return i;
    return -1;
  }

  private dispatch(): void {
    for (let i = this.nextJob(); i >= 0; i = this.nextJob()) {
      let w = this.idle.pop();
      if (!w && this.workers.size < this.size) {
        try {
          w = this.spawn();
        } catch (e) {
          this.queue.splice(i, 1)[0]!.reject(e instanceof Error ? e : new Error(String(e)));
          continue;
        }
      }
      if (!w) return;
      const q = this.queue.splice(i, 1)[0]!;
      q.started = true;
      if (q.long) this.longRunning++;
      w.start(q);
    }
  }

  private spawn(): PoolWorker {
    this.entry ??= workerEntry();
    const w = new PoolWorker(
      this.entry,
      (free) => {
        this.idle.push(free);
        this.dispatch();
      },
      (gone) => {
        this.workers.delete(gone);
        const at = this.idle.indexOf(gone);
        if (at >= 0) this.idle.splice(at, 1);
        // A replacement starts when a job needs one.
        this.dispatch();
      },
    );
    this.workers.add(w);
    return w;
  }

  /** Stops every worker (jobs in flight fail). */
  async close(): Promise<void> {
    await Promise.all([...this.workers].map((w) => w.worker.terminate()));
  }

  /** The workers running now (tests). */
  get started(): readonly Worker[] {
    return [...this.workers].map((w) => w.worker);
  }
}

let shared: ScanPool | undefined;

/** The process's scan pool, created on first use. */
export function scanPool(): ScanPool {
  return (shared ??= new ScanPool(Math.max(2, availableParallelism())));
}
