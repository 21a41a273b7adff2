// Budgets: the worst case is reserved against the agent's daily, monthly and trace limits before the upstream call.
import type { BudgetWindow, ReserveResult } from '../accounting/counters/spec.js';
import { AgentgwError } from '../contract/index.js';
import type { Admitting, Check } from './admitting.js';
import { journalFullError } from '../accounting/usage-journal.js';
import { needCounters } from './counters-unavailable.js';
import { tightestDailyLimit } from './effective-policy.js';
import { clampToFit, worstCaseOf } from './worst-case.js';

export function budgetError(which: BudgetWindow, limit: number, resetAt: Date | null, now: Date): AgentgwError {
  const reset = resetAt ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
  const retryAfter = Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000));
  const headers = { 'retry-after': String(retryAfter), 'x-agentgw-budget-reset': reset.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  if (which === 'trace') {
    return new AgentgwError('trace_budget_exceeded', `This trace has spent its limit of $${limit}: start a new trace (a new X-Agent-Trace-Id) or raise max_cost_per_trace.`, { headers });
  }
  const code = which === 'daily' ? 'daily_budget_exceeded' : 'monthly_budget_exceeded';
  return new AgentgwError(code, `The ${which} budget of $${limit} is spent: it resets at ${headers['x-agentgw-budget-reset']}, or ask an admin to raise it.`, { headers });
}

/** Each window that refuses may lower the output limit once more (daily, monthly, trace). */
const MAX_CLAMPS = 3;

function reserve(a: Admitting, dailyLimit: number | null): Promise<ReserveResult> {
  // Counters that cannot answer: 503 store_unavailable (a request no limit applies to reserves nothing in Redis).
  return needCounters(
    a.counters.reserve({
      agentId: a.agentId,
      // A trace of one has nothing to accumulate; its trace limit still applies to this request alone.
      traceId: a.traceKey,
      amount: worstCaseOf(a),
      dailyLimit,
      monthlyLimit: a.eff.monthlyBudget,
      traceLimit: a.eff.maxCostPerTrace,
      now: a.now,
    }),
  );
}

/** The reservation: the last check, so concurrent requests can never take an agent over a budget. */
export const budgetCheck: Check = {
  name: 'budget',
  async run(a) {
    // Spend a budget counts must be recorded: with the journal full, a budgeted request waits for the database (fail closed).
    const e = a.eff;
    if (a.usageFull && (e.monthlyBudget !== null || e.dailyBudgeted || e.maxCostPerTrace !== null)) throw journalFullError();
    const dailyLimit = tightestDailyLimit(a.eff, a.now);
    let res = await reserve(a, dailyLimit);
    // With clamp_output, a request that would pass what is left is lowered to fit it, and reserved again.
    for (let i = 0; !res.ok && i < MAX_CLAMPS && clampToFit(a, res.limit - res.used); i++) res = await reserve(a, dailyLimit);
    if (!res.ok) throw budgetError(res.which, res.limit, res.resetAt, a.now);
    a.reservationId = res.reservationId;
  },
};
