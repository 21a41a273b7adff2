// Budgets: the worst case is reserved against the agent's daily, monthly and trace limits and its tenant's daily and
// monthly pool, in one atomic step, before the upstream call.
import type { BudgetWindow, ReserveResult } from '../accounting/counters/spec.js';
import { AgentgwError } from '../contract/index.js';
import type { Admitting, Check } from './admitting.js';
import { journalFullError } from '../accounting/usage-journal.js';
import { needCounters } from './counters-unavailable.js';
import { effectiveDailyLimit } from '../accounting/budget-window.js';
import { tenantBudgeted, tightestDailyLimit } from './effective-policy.js';
import { clampToFit, worstCaseOf } from './worst-case.js';

export function budgetError(which: BudgetWindow, limit: number, resetAt: Date | null, now: Date): AgentgwError {
  const reset = resetAt ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
  const retryAfter = Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000));
  const headers = { 'retry-after': String(retryAfter), 'x-agentgw-budget-reset': reset.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  if (which === 'trace') {
    return new AgentgwError('trace_budget_exceeded', `This trace has spent its limit of $${limit}: start a new trace (a new X-Agent-Trace-Id) or raise max_cost_per_trace.`, { headers });
  }
  if (which === 'tenant_daily' || which === 'tenant_monthly') {
    const period = which === 'tenant_daily' ? 'daily' : 'monthly';
    return new AgentgwError(
      which === 'tenant_daily' ? 'tenant_daily_budget_exceeded' : 'tenant_monthly_budget_exceeded',
      `Your tenant's ${period} budget of $${limit}, shared by all its agents, is spent: it resets at ${headers['x-agentgw-budget-reset']}, or ask an admin to raise it.`,
      { headers },
    );
  }
  const code = which === 'daily' ? 'daily_budget_exceeded' : 'monthly_budget_exceeded';
  return new AgentgwError(code, `The ${which} budget of $${limit} is spent: it resets at ${headers['x-agentgw-budget-reset']}, or ask an admin to raise it.`, { headers });
}

/** Each window that refuses may lower the output limit once more (daily, monthly, trace, tenant daily, tenant monthly). */
const MAX_CLAMPS = 5;

interface DailyLimits {
  agent: number | null;
  tenant: number | null;
}

function reserve(a: Admitting, daily: DailyLimits): Promise<ReserveResult> {
  // Counters that cannot answer: 503 store_unavailable (a request no limit applies to reserves nothing in Redis).
  return needCounters(
    a.counters.reserve({
      agentId: a.agentId,
      // A trace of one has nothing to accumulate; its trace limit still applies to this request alone.
      traceId: a.traceKey,
      amount: worstCaseOf(a),
      dailyLimit: daily.agent,
      monthlyLimit: a.eff.monthlyBudget,
      traceLimit: a.eff.maxCostPerTrace,
      // The tenant's pool, shared by all its agents: its spend is recorded even when it has no budget.
      tenant: { tenantId: a.eff.tenant.id, dailyLimit: daily.tenant, monthlyLimit: a.eff.tenant.monthly_budget },
      now: a.now,
      requestId: a.requestId,
    }),
  );
}

/** The reservation: the last check, so concurrent requests can never take an agent over a budget. */
export const budgetCheck: Check = {
  name: 'budget',
  async run(a) {
    // Spend a budget counts must be recorded: with the journal full, a budgeted request waits for the database (fail closed).
    const e = a.eff;
    if (a.usageFull && (e.monthlyBudget !== null || e.dailyBudgeted || e.maxCostPerTrace !== null || tenantBudgeted(e))) throw journalFullError();
    // A tenant without a daily budget gets its monthly one spread over the month, as a policy does.
    const daily: DailyLimits = { agent: tightestDailyLimit(a.eff, a.now), tenant: effectiveDailyLimit(a.eff.tenant, a.now) };
    let res = await reserve(a, daily);
    // With clamp_output, a request that would pass what is left is lowered to fit it, and reserved again.
    for (let i = 0; !res.ok && i < MAX_CLAMPS && clampToFit(a, res.limit - res.used); i++) res = await reserve(a, daily);
    if (!res.ok) throw budgetError(res.which, res.limit, res.resetAt, a.now);
    a.reservationId = res.reservationId;
  },
};
