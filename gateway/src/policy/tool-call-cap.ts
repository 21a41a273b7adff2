// rules.max_tool_calls_per_trace: the MCP tool calls one trace may make (the tightest of the policies that apply).
import { AgentgwError } from '../contract/index.js';
import type { Check } from './admitting.js';
import { needCounters } from './counters-unavailable.js';

/**
 * Calls are counted in the counters' repeat windows (atomic, shared by every node through Redis) over this long: the
 * longest window the in-memory counters keep compactly; agent traces last minutes to hours.
 */
export const TOOL_CALL_WINDOW_SECONDS = 3 * 86_400;

export function maxToolCallsPerTrace(policies: ReadonlyArray<{ rules: { max_tool_calls_per_trace?: number | null } }>): number | null {
  let limit: number | null = null;
  for (const p of policies) {
    const n = p.rules.max_tool_calls_per_trace ?? null;
    if (n !== null && (limit === null || n < limit)) limit = n;
  }
  return limit;
}

/** Counts the call against its trace (a call refused further on still counts: the trace tried it). */
export const toolCallCapCheck: Check = {
  name: 'tool_call_cap',
  async run(a) {
    const limit = maxToolCallsPerTrace(a.eff.policies);
    if (limit === null) return;
    const key = `tools:${a.traceKey ?? a.repeatScope}`;
    const calls = await needCounters(a.counters.countRepeat({ key, windowSeconds: TOOL_CALL_WINDOW_SECONDS, now: a.now }));
    if (calls > limit) {
      throw new AgentgwError(
        'tool_calls_exceeded',
        `This trace has made its ${limit} tool calls (max_tool_calls_per_trace): finish the task without more tools, or start a new trace.`,
      );
    }
  },
};
