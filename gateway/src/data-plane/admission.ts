import { costOf } from '../accounting/cost.js';
import type { Counters } from '../accounting/counters/spec.js';
import type { PriceTable } from '../accounting/prices.js';
import { AgentgwError, isAgentgwError } from '../contract/index.js';
import type { Usage } from '../providers/spec.js';
import type { Admitting, PricedModel } from '../policy/admitting.js';
import { CHECKS } from '../policy/checks.js';
import { type EffectivePolicy, effectivePolicy } from '../policy/effective-policy.js';
import { modelAllowed } from '../policy/model-allowlist.js';
import { currentAgent } from '../policy/auth.js';
import { tokenEstimateOf } from '../policy/rate-limit.js';
import type { PolicyView } from '../policy/policy-view.js';
import { type GenerationCache, type Snapshot, stoppedTraceKey } from '../storage/snapshot.js';
import { checkModelId } from './model-id.js';
import { type RequestContext, releaseHeldTarget } from './request-context.js';
import { type Router, type Target, attemptOrder } from './router.js';
import type { RunningSteps } from './running-steps.js';

export interface DataPlaneDeps {
  snapshot: Snapshot;
  /** Request plans of the current snapshot generation (see planFor). */
  plans: GenerationCache<Plan>;
  router: Router;
  prices: PriceTable;
  counters: Counters;
  /** Whether the usage journal is full (see UsageWriter.full). */
  usage: { readonly full: boolean };
  /** limits.pii_scan_bytes (absent: its default). */
  readonly piiScanBytes?: number;
  /** Steps in flight: an admitted request is listed as running until recorded. */
  readonly running?: Pick<RunningSteps, 'begin'>;
}

export interface PricedTarget extends Target, PricedModel {}

/** A request that passed every check: what to send, where, and the budget hold to settle. */
export interface Admission<B extends object = Record<string, unknown>> {
  /** The body to forward: the client's, or a copy a check edited (PII redaction, a clamped output limit), same shape. */
  body: B;
  targets: PricedTarget[];
  reservationId: string | null;
  /** Tokens counted against tpm at admission, corrected once the real usage is known. */
  tpmTokens: number;
  /** The output limit rules.clamp_output lowered the request to (answered in x-agentgw-clamped-max-tokens), else null. */
  clampedMaxTokens: number | null;
}

const BYTES_PER_TOKEN_ESTIMATE = 4;

/**
 * Admits a request: its plan (targets and effective policy, cached per snapshot generation), then every check of the
 * table in CONTRACT's order, the last one reserving the worst case against the budgets.
 */
export async function admit<B extends Record<string, unknown> & { model: string }>(deps: DataPlaneDeps, ctx: RequestContext, body: B, view: PolicyView): Promise<Admission<B>> {
  ctx.model = body.model;
  ctx.requestedModel = body.model;
  ctx.endpoint = view.endpoint;
  const plan = planFor(deps, ctx, body.model);
  ctx.provider = plan.provider;
  ctx.policy = plan.eff;
  const a: Admitting = {
    view,
    body,
    model: body.model,
    eff: plan.eff,
    targets: plan.priced,
    blockingPolicy: plan.blockingPolicy,
    agentId: ctx.agent.id,
    requestId: ctx.requestId,
    traceKey: ctx.traceFromClient ? traceKey(ctx) : null,
    stoppedTraces: deps.snapshot.stoppedTraces,
    repeatScope: ctx.traceFromClient ? `t:${ctx.agent.id}:${ctx.traceId}` : `a:${ctx.agent.id}`,
    now: new Date(),
    counters: deps.counters,
    usageFull: deps.usage.full,
    piiScanBytes: deps.piiScanBytes,
    piiTypes: [],
    promptUpper: null,
    tpmTokens: 0,
    worst: null,
    clampedMaxTokens: null,
    reservationId: null,
  };
  try {
    for (const check of CHECKS) await check.run(a);
  } finally {
    ctx.piiTypes = a.piiTypes;
  }
  // A target's own tpm counts the request's tokens whether or not the agent has a tpm of its own.
  ctx.routeTokens = a.tpmTokens || (plan.priced.some((t) => t.tpm !== undefined) ? tokenEstimateOf(a) : 0);
  if (plan.eff.captureBodies) ctx.capturedBody = JSON.stringify(a.body).slice(0, 64 * 1024);
  // Listed as running from here until dp.record, whatever the outcome.
  deps.running?.begin(ctx);
  // Checks edit copies of the body's texts and limits, never its shape.
  return { body: a.body as B, targets: plan.priced, reservationId: a.reservationId, tpmTokens: a.tpmTokens, clampedMaxTokens: a.clampedMaxTokens };
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
export function planFor(deps: DataPlaneDeps, ctx: RequestContext, model: string): Plan {
  // The agent as this generation knows it: its policy may have changed, or its key been revoked, since the headers came.
  const current = currentAgent(ctx.agent, deps.snapshot);
  ctx.agent = current;
  // Keyed by what the plan is made of, never by who asked: two agents with the same policy share a plan.
  const key = `${current.tenant_id}\u0000${current.policy_id ?? ''}\u0000${ctx.headerPolicyId ?? ''}\u0000${model}`;
  const hit = deps.plans.get(key);
  if (hit) return hit;
  // Bad model ids, unknown models and foreign policies throw here, and are never cached.
  checkModelId(model);
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

/**
 * Tries the allowed targets in the route's order (see attemptOrder); only retryable upstream failures (see
 * AgentgwError.isRetryable) move on to the next, and they cool the failed target down. For a stream, `call` resolves
 * once the upstream answered with its headers: a stream fails over only before its first byte reaches the client.
 */
export async function withFallback<T>(ctx: RequestContext, targets: PricedTarget[], call: (t: PricedTarget) => Promise<T>): Promise<{ result: T; target: PricedTarget }> {
  let now = Date.now();
  const tokens = ctx.routeTokens ?? 0;
  // One target without a quota or key pool (the common case) is always called: with nowhere else to go, a cooldown would
  // only turn the upstream's answer into the gateway's refusal. It is not cooled down either, and needs no ordering.
  const sole = targets.length === 1 && targets[0]!.rpm === undefined && targets[0]!.tpm === undefined && targets[0]!.keys === undefined;
  const order = sole ? targets : attemptOrder(targets, now, tokens);
  let last: unknown;
  for (let i = 0; i < order.length; i++) {
    const t = order[i]!;
    const h = t.health;
    // Another request may have started probing it, or cooled it down, since the order was made.
    if (i > 0 && ((now = Date.now()), !h.available(now) || !h.withinQuota(t.rpm, t.tpm, tokens, now))) continue;
    // A step that fails is recorded with the target that failed it, never the alias the client named.
    ctx.model = t.id;
    ctx.provider = t.provider.name;
    h.begin(now, tokens, t.rpm !== undefined || t.tpm !== undefined, !sole);
    let result: T;
    try {
      result = t.keys === undefined ? await call(t) : await withPoolKey(t, now, call);
    } catch (e) {
      last = e;
      if (!(isAgentgwError(e) && e.isRetryable)) {
        h.abandoned();
        throw e;
      }
      // Every key of a pool answered 429: the keys rest, each on its own Retry-After, not the deployment.
      if (sole || (t.keys !== undefined && e.code === 'upstream_rate_limited')) h.abandoned();
      else h.failed(e, Date.now());
      continue;
    }
    h.succeeded(Date.now() - now);
    if (ctx.stream) {
      // A stream stays in flight until it is relayed to its end.
      releaseHeldTarget(ctx);
      h.inFlight++;
      ctx.heldTarget = h;
    }
    return { result, target: t };
  }
  throw last;
}

/** A key pool: the keys in turn, skipping the resting ones; a key answering 429 rests and the next key is tried. */
async function withPoolKey<T>(t: PricedTarget, now: number, call: (t: PricedTarget) => Promise<T>): Promise<T> {
  const keys = t.keys!;
  let last: unknown;
  for (let j = 0; j < keys.length; j++) {
    const k = keys[t.keyTurn!.next++ % keys.length]!;
    if (!k.health.available(now)) continue;
    k.health.begin(now, 0);
    try {
      const result = await call({ ...t, provider: k.provider });
      k.health.succeeded(Date.now() - now);
      return result;
    } catch (e) {
      if (isAgentgwError(e) && e.code === 'upstream_rate_limited') {
        k.health.failed(e, (now = Date.now()));
        last = e;
        continue;
      }
      k.health.abandoned();
      throw e;
    }
  }
  throw last ?? new AgentgwError('upstream_rate_limited', `Every key of provider "${t.provider.name}" is resting after a 429.`, { headers: { 'retry-after': '1' } });
}

/** Trace ids come from clients, so they are qualified with the tenant to keep tenants' traces apart (as stopped traces are). */
export function traceKey(ctx: RequestContext): string {
  return stoppedTraceKey(ctx.agent.tenant_id, ctx.traceId);
}

export function actualCost(target: PricedTarget | undefined, usage: Usage): number {
  if (!target?.price) return 0;
  return costOf(target.price, {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cached_tokens: usage.cached_prompt_tokens,
    cache_write_tokens: usage.cache_write_prompt_tokens,
    cache_write_1h_tokens: usage.cache_write_1h_prompt_tokens,
    web_search_calls: usage.web_search_calls,
  });
}
