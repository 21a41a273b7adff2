// rules.rpm and rules.tpm: a sliding minute per agent.
import { AgentgwError } from '../contract/index.js';
import type { Admitting, Check } from './admitting.js';
import { needCounters } from './counters-unavailable.js';
import { promptUpperOf } from './worst-case.js';

/** About 4 bytes a token: the tpm estimate from the byte bound already computed, corrected by the real usage after. */
const BYTES_PER_TOKEN_ESTIMATE = 4;

/** No target reads a prompt longer than its context window (a file by URL counts as long as one). */
function largestContext(a: Admitting): number {
  let most = 0;
  for (const t of a.targets) most = Math.max(most, t.price?.context_window ?? Infinity);
  return most === 0 ? Infinity : most;
}

/** The tokens a request is counted for against a per-minute token quota (the agent's tpm, a route target's own). */
export function tokenEstimateOf(a: Admitting): number {
  return Math.ceil(Math.min(promptUpperOf(a), largestContext(a)) / BYTES_PER_TOKEN_ESTIMATE);
}

export const rateLimitCheck: Check = {
  name: 'rate_limit',
  async run(a) {
    const { rpm, tpm } = a.eff;
    if (rpm === null && tpm === null) return;
    a.tpmTokens = tpm !== null ? tokenEstimateOf(a) : 0;
    const rl = await needCounters(a.counters.rateLimit({ agentId: a.agentId, rpm, tpm, tokens: a.tpmTokens, now: a.now }));
    if (rl.ok) return;
    const code = rl.which === 'rpm' ? 'rpm_exceeded' : 'tpm_exceeded';
    const limit = rl.which === 'rpm' ? rpm : tpm;
    throw new AgentgwError(code, `Rate limit of ${limit} ${rl.which === 'rpm' ? 'requests' : 'tokens'} per minute reached: retry after ${rl.retryAfterSeconds} s.`, {
      headers: { 'retry-after': String(rl.retryAfterSeconds) },
    });
  },
};
