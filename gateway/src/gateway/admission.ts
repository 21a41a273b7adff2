import { hash } from 'node:crypto';
import { costOf, maxOutputTokensFor, worstCaseCost } from '../accounting/cost.js';
import { effectiveDailyLimit } from '../accounting/budget-window.js';
import type { Counters } from '../accounting/counters/spec.js';
import type { ModelPrice, PriceTable } from '../accounting/prices.js';
import { promptTokensUpperBound, requestedMaxOutputTokens } from '../accounting/tokens.js';
import { AgentgwError, isAgentgwError } from '../contract/index.js';
import type { Usage } from '../providers/spec.js';
import { type EffectivePolicy, effectivePolicy } from '../policy/effective-policy.js';
import { modelAllowed, modelNotAllowed } from '../policy/model-allowlist.js';
import { currentAgent } from '../policy/auth.js';
import { applyPiiRules } from '../policy/pii-rules.js';
import type { GenerationCache, Snapshot } from '../storage/snapshot.js';
import type { RequestContext } from './request-context.js';
import type { Router, Target } from './router.js';

export interface DataPlaneDeps {
  snapshot: Snapshot;
  /** Request plans of the current snapshot generation (see planFor). */
  plans: GenerationCache<Plan>;
  router: Router;
  prices: PriceTable;
  counters: Counters;
}

export interface PricedTarget extends Target {
  price: ModelPrice | undefined;
}

/** A request that passed every check: what to send, where, and the budget hold to settle. */
export interface Admission {
  body: Record<string, unknown>;
  targets: PricedTarget[];
  reservationId: string | null;
  /** Tokens counted against tpm at admission, corrected once the real usage is known. */
  tpmTokens: number;
}

const BYTES_PER_TOKEN_ESTIMATE = 4;

/** Runs CONTRACT's checks in order: effective policy, allow-list, PII, retry block, rpm/tpm, cost cap, budget reservation. */
export async function admit(
  deps: DataPlaneDeps,
  ctx: RequestContext,
  rawBody: Record<string, unknown> & { model: string },
  kind: 'chat' | 'embeddings',
): Promise<Admission> {
  const now = new Date();
  ctx.model = rawBody.model;
  const plan = planFor(deps, ctx, rawBody.model);
  ctx.provider = plan.provider;
  const eff = plan.eff;
  ctx.policy = eff;
  if (plan.priced.length === 0) throw modelNotAllowed(rawBody.model, plan.blockingPolicy);
  const priced = plan.priced;

  const pii = applyPiiRules(eff.policies, rawBody);
  ctx.piiTypes = pii.found;
  if (pii.blocked) throw pii.blocked;
  const body = pii.body;
  if (eff.captureBodies) ctx.capturedBody = JSON.stringify(body).slice(0, 64 * 1024);

  // The request is hashed once, whatever the number of windows.
  const requestHash = eff.retryBlocks.length > 0 ? normalisedRequestHash(body) : '';
  for (const rule of eff.retryBlocks) {
    const scope = ctx.traceFromClient ? `t:${ctx.agent.id}:${ctx.traceId}` : `a:${ctx.agent.id}`;
    const key = `${scope}:${rule.window_seconds}:${requestHash}`;
    const seen = await deps.counters.countRepeat({ key, windowSeconds: rule.window_seconds, now });
    if (seen > rule.max_repeats) {
      throw new AgentgwError(
        'retry_blocked',
        `This request was repeated ${seen} times within ${rule.window_seconds} s (limit ${rule.max_repeats}): change the request or stop retrying; the agent looks stuck in a loop.`,
      );
    }
  }

  const promptUpper = promptTokensUpperBound(body as never);
  // A tpm estimate from the byte bound already computed (about 4 bytes a token), corrected by the real usage after.
  const tpmTokens = eff.tpm !== null ? Math.ceil(promptUpper / BYTES_PER_TOKEN_ESTIMATE) : 0;
  if (eff.rpm !== null || eff.tpm !== null) {
    const rl = await deps.counters.rateLimit({ agentId: ctx.agent.id, rpm: eff.rpm, tpm: eff.tpm, tokens: tpmTokens, now });
    if (!rl.ok) {
      const code = rl.which === 'rpm' ? 'rpm_exceeded' : 'tpm_exceeded';
      const limit = rl.which === 'rpm' ? eff.rpm : eff.tpm;
      throw new AgentgwError(code, `Rate limit of ${limit} ${rl.which === 'rpm' ? 'requests' : 'tokens'} per minute reached: retry after ${rl.retryAfterSeconds} s.`, {
        headers: { 'retry-after': String(rl.retryAfterSeconds) },
      });
    }
  }

  // Each policy's own daily limit (explicit, or its monthly budget / days in month); the tightest applies.
  let dailyLimit: number | null = null;
  for (const p of eff.policies) {
    const d = effectiveDailyLimit(p, now);
    if (d !== null && (dailyLimit === null || d < dailyLimit)) dailyLimit = d;
  }
  const limited = eff.monthlyBudget !== null || dailyLimit !== null || eff.maxCostPerRequest !== null || eff.maxCostPerTrace !== null;
  let worst = 0;
  const maxOut = kind === 'chat' ? requestedMaxOutputTokens(body as never) : 0;
  // Every one of n choices may run to max_tokens.
  const choices = typeof body.n === 'number' && body.n > 1 ? body.n : 1;
  for (const t of priced) {
    if (!t.price) {
      if (limited) {
        throw new AgentgwError(
          'price_unknown',
          `Model ${t.id} has no price, so its budget or cost cap cannot be enforced: add it under "prices" in the server config, or use a priced model.`,
          { param: 'model' },
        );
      }
      continue;
    }
    worst = Math.max(worst, worstCaseCost(t.price, promptUpper, kind === 'chat' ? maxOutputTokensFor(t.price, maxOut) * choices : 0));
  }
  if (eff.maxCostPerRequest !== null && worst > eff.maxCostPerRequest) {
    throw new AgentgwError(
      'cost_cap_exceeded',
      `This request could cost up to $${worst.toFixed(6)}, above the per-request cap of $${eff.maxCostPerRequest}: lower max_tokens, shorten the prompt, or use a cheaper model.`,
    );
  }

  const res = await deps.counters.reserve({
    agentId: ctx.agent.id,
    // A trace of one has nothing to accumulate; its trace limit still applies to this request alone.
    traceId: ctx.traceFromClient ? traceKey(ctx) : null,
    amount: worst,
    dailyLimit,
    monthlyLimit: eff.monthlyBudget,
    traceLimit: eff.maxCostPerTrace,
    now,
  });
  if (!res.ok) throw budgetError(res.which, res.limit, res.resetAt, now);
  return { body, targets: priced, reservationId: res.reservationId, tpmTokens };
}

/** What admission derives from the policies and the model alone: the same for every request until a policy changes. */
export interface Plan {
  eff: EffectivePolicy;
  provider: string;
  /** Targets every policy allows, with their prices, in fallback order; empty when none is allowed. */
  priced: PricedTarget[];
  /** The policy that refuses the model when none is allowed. */
  blockingPolicy: string;
}

/** The request's plan, from a cache that lives for one snapshot generation (any admin write starts a new one). */
function planFor(deps: DataPlaneDeps, ctx: RequestContext, model: string): Plan {
  // The agent as this generation knows it: its policy may have changed, or its key been revoked, since the headers came.
  const current = currentAgent(ctx.agent, deps.snapshot);
  ctx.agent = current;
  // Keyed by what the plan is made of, never by who asked: two agents with the same policy share a plan.
  const key = `${current.tenant_id}\u0000${current.policy_id ?? ''}\u0000${ctx.headerPolicyId ?? ''}\u0000${model}`;
  const hit = deps.plans.get(key);
  if (hit) return hit;
  // Unknown models and foreign policies throw here, and are never cached.
  const targets = deps.router.resolve(model);
  const eff = effectivePolicy(ctx.agent, (id) => deps.snapshot.policy(id), ctx.headerPolicyId);
  // Allow-list: each policy must allow the target; alias fallbacks that are not allowed are skipped.
  const allowed = targets.filter((t) => eff.policies.every((p) => modelAllowed(p.allowed_models, t.id) || modelAllowed(p.allowed_models, model)));
  const blocking = eff.policies.find((p) => !targets.some((t) => modelAllowed(p.allowed_models, t.id)));
  const plan: Plan = {
    eff,
    provider: targets[0]!.provider.name,
    priced: allowed.map((t) => ({ ...t, price: deps.prices.lookup(t.provider.name, t.model) })),
    blockingPolicy: blocking?.id ?? eff.policies[0]?.id ?? '',
  };
  deps.plans.set(key, plan);
  return plan;
}

/** Tries each allowed target in order; only retryable upstream failures move on to the next. */
export async function withFallback<T>(targets: PricedTarget[], call: (t: PricedTarget) => Promise<T>): Promise<{ result: T; target: PricedTarget }> {
  let last: unknown;
  for (const t of targets) {
    try {
      return { result: await call(t), target: t };
    } catch (e) {
      last = e;
      if (!(isAgentgwError(e) && e.isRetryable)) throw e;
    }
  }
  throw last;
}

/** Trace ids come from clients, so they are qualified with the tenant to keep tenants' traces apart. */
export function traceKey(ctx: RequestContext): string {
  return `${ctx.agent.tenant_id}:${ctx.traceId}`;
}

function budgetError(which: 'daily' | 'monthly' | 'trace', limit: number, resetAt: Date | null, now: Date): AgentgwError {
  const reset = resetAt ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
  const retryAfter = Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000));
  const headers = { 'retry-after': String(retryAfter), 'x-agentgw-budget-reset': reset.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  if (which === 'trace') {
    return new AgentgwError('trace_budget_exceeded', `This trace has spent its limit of $${limit}: start a new trace (a new X-Agent-Trace-Id) or raise max_cost_per_trace.`, { headers });
  }
  const code = which === 'daily' ? 'daily_budget_exceeded' : 'monthly_budget_exceeded';
  return new AgentgwError(code, `The ${which} budget of $${limit} is spent: it resets at ${headers['x-agentgw-budget-reset']}, or ask an admin to raise it.`, { headers });
}

/**
 * Whether the JSON text may hold whitespace other than single spaces inside its strings: raw blanks (JSON leaves most
 * Unicode spaces as they are), two spaces, or the escapes JSON writes for tabs, line breaks and other control blanks.
 * A false alarm (a literal backslash before an n) only costs the slower exact path.
 */
const MAYBE_UNNORMALISED = /[^\S ]| {2}|\\[nrtf]|\\u000[bB]/;
const normaliseStrings = (_key: string, value: unknown) => (typeof value === 'string' ? value.replace(/\s+/g, ' ') : value);

/** The same request: same model and messages (or input), with every run of whitespace in their texts read as one space. */
function normalisedRequestHash(body: Record<string, unknown>): string {
  const subject = [body.model, body.messages ?? body.input ?? null];
  let material = JSON.stringify(subject);
  if (MAYBE_UNNORMALISED.test(material)) material = JSON.stringify(subject, normaliseStrings);
  return hash('sha256', material, 'base64url').slice(0, 32);
}

export function actualCost(target: PricedTarget | undefined, usage: Usage): number {
  if (!target?.price) return 0;
  return costOf(target.price, {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cached_tokens: usage.cached_prompt_tokens,
    cache_write_tokens: usage.cache_write_prompt_tokens,
    cache_write_1h_tokens: usage.cache_write_1h_prompt_tokens,
  });
}
