// Chat's reasoning_effort -> Gemini's thinkingConfig, within the model's limits and inside maxOutputTokens (which counts
// Gemini's thoughts): Gemini 2.5 takes a thinkingBudget in tokens, Gemini 3 a thinkingLevel.
import { AgentgwError } from '../../contract/errors.js';
import { isEffortLevel, thinkingBudgetOfEffort } from '../../translate/reasoning-budget.js';

export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  thinkingLevel?: 'low' | 'high';
  includeThoughts?: boolean;
}

interface BudgetLimits {
  min: number;
  max: number;
  /** Whether a budget of 0 turns thinking off (2.5 Pro always thinks). */
  canDisable: boolean;
}

/** Google's documented thinkingBudget ranges, most specific name first. */
const BUDGET_LIMITS: ReadonlyArray<[RegExp, BudgetLimits]> = [
  [/gemini-(2\.5-)?flash-lite/i, { min: 512, max: 24576, canDisable: true }],
  [/gemini-(2\.5-)?flash/i, { min: 1, max: 24576, canDisable: true }],
  [/gemini-(2\.5-)?pro/i, { min: 128, max: 32768, canDisable: false }],
];

/** Gemini 3 models take a level; thinking cannot be turned off on them. */
const LEVEL_MODEL = /gemini-3/i;

/**
 * The thinkingConfig for a request's reasoning_effort on this model; undefined without one, and for models with no
 * thinking (Gemini 2.0 and older, Gemma). Thoughts are asked back (includeThoughts) whenever the model thinks, so that
 * they come back as reasoning_content.
 */
export function geminiThinkingConfig(model: string, effort: unknown, maxOutputTokens: number | undefined): GeminiThinkingConfig | undefined {
  if (effort == null) return undefined;
  if (!isEffortLevel(effort)) {
    throw new AgentgwError('validation_failed', 'Field "reasoning_effort": reasoning_effort must be "none", "minimal", "low", "medium", "high", "xhigh" or "max".', { param: 'reasoning_effort' });
  }
  if (LEVEL_MODEL.test(model)) {
    return { thinkingLevel: effort === 'none' || effort === 'minimal' || effort === 'low' ? 'low' : 'high', includeThoughts: effort !== 'none' };
  }
  const limits = BUDGET_LIMITS.find(([pattern]) => pattern.test(model))?.[1];
  if (!limits) return undefined;
  let budget = effort === 'none' ? 0 : Math.min(thinkingBudgetOfEffort(effort)!, limits.max);
  // A quarter of the output limit is left for the answer, as for Claude.
  if (maxOutputTokens !== undefined) budget = Math.min(budget, Math.floor((maxOutputTokens * 3) / 4));
  if (budget < limits.min) budget = limits.canDisable ? 0 : limits.min;
  return budget === 0 || effort === 'none' ? { thinkingBudget: budget } : { thinkingBudget: budget, includeThoughts: true };
}
