// Reasoning effort levels <-> thinking budgets in tokens, shared by every family: OpenAI's reasoning_effort and
// reasoning.effort, Anthropic's thinking.budget_tokens, Gemini's thinkingConfig (thinkingBudget, thinkingLevel).

/** The effort levels a client may ask for (Responses and Chat Completions), lowest first. */
export type EffortLevel = 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/** Anthropic's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

/** The budget each level asks for; effortOfThinkingBudget maps every one of them back to its level (xhigh, max: high). */
const BUDGET_OF_EFFORT: Readonly<Record<EffortLevel, number>> = {
  minimal: MIN_THINKING_BUDGET,
  low: 2048,
  medium: 8192,
  high: 24576,
  xhigh: 32768,
  max: 32768,
};

/** A thinking budget for an effort level; undefined for "none" and for a value that is no level. */
export function thinkingBudgetOfEffort(effort: unknown): number | undefined {
  return typeof effort === 'string' && Object.prototype.hasOwnProperty.call(BUDGET_OF_EFFORT, effort) ? BUDGET_OF_EFFORT[effort as EffortLevel] : undefined;
}

/** Whether a value is an effort level (or "none", which asks for no reasoning). */
export function isEffortLevel(effort: unknown): effort is EffortLevel | 'none' {
  return effort === 'none' || thinkingBudgetOfEffort(effort) !== undefined;
}

/** The effort level of a thinking budget (Anthropic's budget_tokens, Gemini's thinkingBudget), for targets that take a level. */
export function effortOfThinkingBudget(budget: number): 'low' | 'medium' | 'high' {
  return budget < 4096 ? 'low' : budget < 16384 ? 'medium' : 'high';
}

/**
 * Anthropic's budget_tokens for a requested budget, inside the request's max_tokens (which counts thinking): at most
 * three quarters of it, so that a quarter is left for the answer. Undefined when not even Anthropic's minimum fits.
 */
export function anthropicThinkingBudget(requested: number, maxTokens: number): number | undefined {
  const budget = Math.min(Math.floor(requested), Math.floor((maxTokens * 3) / 4));
  return budget >= MIN_THINKING_BUDGET ? budget : undefined;
}

/** Claude models with extended thinking: Claude 3.7 Sonnet and every Claude 4 model (opus, sonnet, haiku) and later. */
const THINKING_CLAUDE = /claude-(3-7-|(opus|sonnet|haiku)-[4-9]|[4-9][-.])/i;

export function claudeThinks(model: string): boolean {
  return THINKING_CLAUDE.test(model);
}
