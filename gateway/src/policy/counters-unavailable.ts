// A check that needs the counters (budgets, rate limits, retry_block) when they cannot answer: fail closed, fast (CONTRACT).
import { CountersUnavailableError } from '../accounting/counters/spec.js';
import { AgentgwError } from '../contract/index.js';

/** Seconds a client is told to wait before retrying a request the counters could not check. */
export const STORE_RETRY_AFTER_SECONDS = 5;

export function storeUnavailable(cause?: unknown): AgentgwError {
  const err = new AgentgwError(
    'store_unavailable',
    'The budget and rate-limit counters cannot be reached right now, so this request cannot be checked against its limits (budgets fail closed): retry in a few seconds.',
    { headers: { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) } },
  );
  if (cause !== undefined) (err as Error & { cause?: unknown }).cause = cause;
  return err;
}

/** Awaits a counter operation; a counter store that cannot answer becomes 503 store_unavailable with Retry-After. */
export async function needCounters<T>(op: Promise<T>): Promise<T> {
  try {
    return await op;
  } catch (err) {
    if (err instanceof CountersUnavailableError) throw storeUnavailable(err);
    throw err;
  }
}
