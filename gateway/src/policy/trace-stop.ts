// A trace an operator stopped (POST /api/traces/{trace_id}/stop): every later request of it is refused, for good.
import { AgentgwError } from '../contract/index.js';
import type { Check } from './admitting.js';

/** CONTRACT's 403 for a request of a stopped trace: the agent must start a new trace to go on. */
export function traceStoppedError(traceId: string): AgentgwError {
  return new AgentgwError(
    'trace_stopped',
    `Trace ${traceId} was stopped by an operator and takes no more requests: start a new trace (a new X-Agent-Trace-Id or session) to go on.`,
  );
}

/**
 * In the table for a request whose body was still arriving when its trace was stopped: the /v1 front refuses the
 * trace's later requests before their body is read (CONTRACT's order: headers, trace stopped, body), this catches the
 * ones already past it. A set lookup in the snapshot, no database.
 */
export const traceStopCheck: Check = {
  name: 'trace-stop',
  run(a) {
    if (a.traceKey !== null && a.stoppedTraces?.has(a.traceKey)) throw traceStoppedError(a.traceKey.slice(a.traceKey.indexOf(':') + 1));
  },
};
