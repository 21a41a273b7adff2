// A check that needs the counters (budgets, rate limits, retry_block) when they cannot answer: fail closed, fast (CONTRACT).
import { CountersUnavailableError } from '../accounting/counters/spec.js';
import { type AgentgwError, storeUnavailableError } from '../contract/index.js';

export function storeUnavailable(cause?: unknown): AgentgwError {
  return storeUnavailableError(
    'The budget and rate-limit counters cannot be reached right now, so this request cannot be checked against its limits (budgets fail closed)',
    cause,
  );
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
