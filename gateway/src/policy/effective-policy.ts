import { effectiveDailyLimit } from '../accounting/budget-window.js';
import { AgentgwError, type Policy, type Rules } from '../contract/index.js';
import type { StoredAgent } from '../storage/store.js';

/** The policies that apply to one request: the agent's own and the X-Agent-Policy one; each must pass. */
export interface EffectivePolicy {
  policies: Policy[];
  monthlyBudget: number | null;
  maxCostPerRequest: number | null;
  maxCostPerTrace: number | null;
  rpm: number | null;
  tpm: number | null;
  retryBlocks: Array<NonNullable<Rules['retry_block']>>;
  captureBodies: boolean;
  /** Some policy sets a daily limit (its own, or its monthly budget spread over the month). */
  dailyBudgeted: boolean;
  /** Some policy lowers output limits to fit instead of refusing (rules.clamp_output). */
  clampOutput: boolean;
  /** The agent's tenant and its budgets: one pool shared by all its agents, applied whatever the policies say. */
  tenant: { id: string; monthly_budget: number | null; daily_budget: number | null };
}

/** The tenant has a budget (daily, or monthly spread over the month): every target needs a price, and spend must be recorded. */
export function tenantBudgeted(eff: EffectivePolicy): boolean {
  return eff.tenant.monthly_budget !== null || eff.tenant.daily_budget !== null;
}

/** The daily limit that applies: each policy's own (explicit, or its monthly budget / days in month), the tightest. */
export function tightestDailyLimit(eff: EffectivePolicy, now: Date): number | null {
  let limit: number | null = null;
  for (const p of eff.policies) {
    const d = effectiveDailyLimit(p, now);
    if (d !== null && (limit === null || d < limit)) limit = d;
  }
  return limit;
}

function minOf(values: Array<number | null>): number | null {
  let out: number | null = null;
  for (const v of values) if (v !== null && (out === null || v < out)) out = v;
  return out;
}

/** One rule per window (the lowest max_repeats), so a request is counted once per window however many policies name it. */
function tightestPerWindow(rules: Array<NonNullable<Rules['retry_block']>>): Array<NonNullable<Rules['retry_block']>> {
  const byWindow = new Map<number, number>();
  for (const r of rules) byWindow.set(r.window_seconds, Math.min(r.max_repeats, byWindow.get(r.window_seconds) ?? Infinity));
  return [...byWindow].map(([window_seconds, max_repeats]) => ({ window_seconds, max_repeats }));
}

export function effectivePolicy(
  agent: StoredAgent,
  lookup: (id: string) => Policy | undefined,
  headerPolicyId: string | undefined,
): EffectivePolicy {
  const policies: Policy[] = [];
  const own = agent.policy_id ? lookup(agent.policy_id) : undefined;
  if (own) policies.push(own);
  if (headerPolicyId !== undefined) {
    const extra = lookup(headerPolicyId);
    if (!extra || (extra.tenant_id !== null && extra.tenant_id !== agent.tenant_id)) {
      // Unknown and foreign policies answer alike, so the header cannot probe other tenants' policy ids.
      throw new AgentgwError(
        'policy_not_permitted',
        `X-Agent-Policy ${headerPolicyId} is not a global policy or a policy of tenant ${agent.tenant_id}: name one of those.`,
        { param: 'x-agent-policy' },
      );
    }
    if (extra.id !== own?.id) policies.push(extra);
  }
  return {
    policies,
    monthlyBudget: minOf(policies.map((p) => p.monthly_budget)),
    maxCostPerRequest: minOf(policies.map((p) => p.rules.max_cost_per_request)),
    maxCostPerTrace: minOf(policies.map((p) => p.rules.max_cost_per_trace)),
    rpm: minOf(policies.map((p) => p.rules.rpm)),
    tpm: minOf(policies.map((p) => p.rules.tpm)),
    retryBlocks: tightestPerWindow(policies.flatMap((p) => (p.rules.retry_block ? [p.rules.retry_block] : []))),
    captureBodies: policies.some((p) => p.labels.capture_bodies === 'true'),
    dailyBudgeted: policies.some((p) => p.daily_budget !== null || p.monthly_budget !== null),
    clampOutput: policies.some((p) => p.rules.clamp_output),
    tenant: { id: agent.tenant_id, monthly_budget: agent.tenant_budget?.monthly_budget ?? null, daily_budget: agent.tenant_budget?.daily_budget ?? null },
  };
}
