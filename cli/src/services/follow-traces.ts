import { setTimeout as delay } from 'node:timers/promises';
import type { TraceSummary, TracesQuery } from '../admin-client/types.js';

export interface FollowClient {
  listAllTraces(q: Omit<TracesQuery, 'limit' | 'cursor'>): Promise<TraceSummary[]>;
}

export interface FollowOptions {
  tenant_id?: string;
  agent_id?: string;
  intervalMs: number;
  /** Stop after this many polls (scripts and tests); unbounded when absent. */
  maxPolls?: number;
  signal?: AbortSignal;
  now?: () => number;
  /** A trace idle for longer than this is no longer followed, so each poll stays small. */
  idleWindowMs?: number;
}

export const DEFAULT_IDLE_WINDOW_MS = 10 * 60_000;
/** Server and client clocks differ a little: activity this close to the start still counts as new. */
const CLOCK_GRACE_MS = 1_000;

interface Seen {
  fingerprint: string;
  startedMs: number;
  endedMs: number;
}

const keyOf = (t: TraceSummary) => JSON.stringify([t.tenant_id, t.trace_id]);
const fingerprintOf = (t: TraceSummary) =>
  JSON.stringify([t.request_count, t.error_count, t.prompt_tokens, t.completion_tokens, t.cost, t.ended_at]);
const byActivity = (a: TraceSummary, b: TraceSummary) => a.ended_at.localeCompare(b.ended_at) || a.trace_id.localeCompare(b.trace_id);

/**
 * Polls `GET /traces?since=` and yields, after each poll, the traces that are new or changed since the previous one.
 * `since` filters on a trace's start, so it stays at the start of the oldest trace still active within the idle window.
 */
export async function* followTraces(client: FollowClient, opts: FollowOptions): AsyncGenerator<TraceSummary[]> {
  const now = opts.now ?? Date.now;
  const window = opts.idleWindowMs ?? DEFAULT_IDLE_WINDOW_MS;
  const begun = now();
  const seen = new Map<string, Seen>();
  let since = begun - window;

  for (let poll = 1; ; poll++) {
    const listed = await unlessAborted(
      client.listAllTraces({ tenant_id: opts.tenant_id, agent_id: opts.agent_id, since: new Date(since).toISOString() }),
      opts.signal,
    );
    if (!listed) return;

    const changed: TraceSummary[] = [];
    for (const t of listed.value) {
      const key = keyOf(t);
      const fingerprint = fingerprintOf(t);
      const before = seen.get(key);
      const endedMs = Date.parse(t.ended_at);
      seen.set(key, { fingerprint, startedMs: Date.parse(t.started_at), endedMs });
      if (before?.fingerprint === fingerprint) continue;
      // what last happened before the tail began is history, not news
      if (!before && endedMs < begun - CLOCK_GRACE_MS) continue;
      changed.push(t);
    }
    if (changed.length > 0) yield changed.sort(byActivity);

    since = nextSince(seen, since, now() - window);
    for (const [key, s] of seen) if (s.startedMs < since) seen.delete(key);

    if (opts.maxPolls !== undefined && poll >= opts.maxPolls) return;
    if (!(await sleep(opts.intervalMs, opts.signal))) return;
  }
}

/** The start of the oldest trace active since `cutoff`, never earlier than before and never later than `cutoff`. */
function nextSince(seen: Map<string, Seen>, previous: number, cutoff: number): number {
  let next = cutoff;
  for (const s of seen.values()) if (s.endedMs >= cutoff && s.startedMs < next) next = s.startedMs;
  return Math.max(previous, next);
}

export async function unlessAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<{ value: T } | null> {
  if (!signal) return { value: await p };
  if (signal.aborted) return null;
  let onAbort!: () => void;
  const aborted = new Promise<null>((resolve) => {
    onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([p.then((value) => ({ value })), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
    // a request still in flight when the user stopped us: its outcome no longer matters
    p.catch(() => {});
  }
}

/** false when stopped while waiting. */
export async function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    await delay(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
