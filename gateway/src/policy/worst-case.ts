// The most a request can cost, and the output limit that keeps it under an amount (rules.clamp_output).
import { maxOutputTokensFor, roundUsd, webSearchCost, worstCaseCost } from '../accounting/cost.js';
import { AgentgwError } from '../contract/index.js';
import type { Admitting, PricedModel } from './admitting.js';
import { tenantBudgeted } from './effective-policy.js';
import { webSearchesUpperBound } from './web-search-bound.js';

/** rules.clamp_output never lowers an output limit below this: a shorter answer is of little use to an agent. */
export const MIN_CLAMPED_OUTPUT_TOKENS = 256;

export function promptUpperOf(a: Admitting): number {
  return (a.promptUpper ??= a.view.promptTokensUpperBound(a.body));
}

/** True when some budget (the agent's or its tenant's) or cost cap applies, so every target needs a price. */
function limited(a: Admitting): boolean {
  const e = a.eff;
  return e.monthlyBudget !== null || e.dailyBudgeted || e.maxCostPerRequest !== null || e.maxCostPerTrace !== null || tenantBudgeted(e);
}

function priceUnknown(t: PricedModel): AgentgwError {
  return new AgentgwError(
    'price_unknown',
    `Model ${t.id} has no price, so its budget or cost cap cannot be enforced: add it under "prices" in the server config, or use a priced model.`,
    { param: 'model' },
  );
}

/**
 * Worst case over every target: prompt bound at the highest prompt rate, every answer running to the output limit, and
 * every web search the request's tools allow.
 */
export function worstCaseOf(a: Admitting): number {
  if (a.worst !== null) return a.worst;
  const isLimited = limited(a);
  const prompt = promptUpperOf(a);
  const requested = a.view.producesOutput ? a.view.requestedMaxOutputTokens(a.body) : 0;
  const answers = a.view.producesOutput ? a.view.answers(a.body) : 0;
  const searches = webSearchesUpperBound(a.view.endpoint, a.body);
  let worst = 0;
  for (const t of a.targets) {
    if (!t.price) {
      if (isLimited) throw priceUnknown(t);
      continue;
    }
    const tokens = worstCaseCost(t.price, prompt, answers === 0 ? 0 : maxOutputTokensFor(t.price, requested) * answers);
    worst = Math.max(worst, roundUsd(tokens + webSearchCost(t.price, searches)));
  }
  return (a.worst = worst);
}

/** The most output tokens per answer that keep the worst case within `usd` on every priced target. */
function outputTokensWithin(a: Admitting, usd: number): number {
  const prompt = promptUpperOf(a);
  const answers = a.view.answers(a.body);
  const searches = webSearchesUpperBound(a.view.endpoint, a.body);
  let fit = Infinity;
  for (const t of a.targets) {
    if (!t.price) continue;
    // The searches cost the same whatever the output limit: what is left after them is for tokens.
    const searchCost = webSearchCost(t.price, searches);
    const base = worstCaseCost(t.price, prompt, 0);
    const perMillion = worstCaseCost(t.price, prompt, 1_000_000) - base;
    let n = perMillion <= 0 ? maxOutputTokensFor(t.price) : Math.floor(((usd - searchCost - base) / perMillion) * 1e6 / answers);
    n = Math.min(n, maxOutputTokensFor(t.price));
    // Rounding of the cost to 1e-10 USD may put the last token over: step back until it fits.
    while (n > 0 && roundUsd(worstCaseCost(t.price, prompt, n * answers) + searchCost) > usd) n--;
    fit = Math.min(fit, n);
  }
  return fit === Infinity ? 0 : fit;
}

/**
 * Lowers the request's output limit so its worst case fits `usd`, when rules.clamp_output allows and the result is at
 * least MIN_CLAMPED_OUTPUT_TOKENS; true when it did.
 */
export function clampToFit(a: Admitting, usd: number): boolean {
  if (!a.eff.clampOutput || !a.view.producesOutput) return false;
  const n = outputTokensWithin(a, usd);
  if (n < MIN_CLAMPED_OUTPUT_TOKENS) return false;
  const requested = a.view.requestedMaxOutputTokens(a.body);
  if (requested !== null && n >= requested) return false;
  const body = a.view.withMaxOutputTokens(a.body, n);
  if (body === null) return false;
  a.body = body;
  a.worst = null;
  a.clampedMaxTokens = n;
  return true;
}
