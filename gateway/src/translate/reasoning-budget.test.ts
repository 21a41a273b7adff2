import { describe, expect, it } from 'vitest';
import { anthropicThinkingBudget, claudeThinks, effortOfThinkingBudget, isEffortLevel, MIN_THINKING_BUDGET, thinkingBudgetOfEffort } from './reasoning-budget.js';

describe('reasoning budgets', () => {
  it('maps every effort level to a budget and back to its level (xhigh and max: high)', () => {
    expect(['minimal', 'low', 'medium', 'high', 'xhigh', 'max'].map((e) => effortOfThinkingBudget(thinkingBudgetOfEffort(e)!))).toEqual(['low', 'low', 'medium', 'high', 'high', 'high']);
    expect(thinkingBudgetOfEffort('none')).toBeUndefined();
    expect(thinkingBudgetOfEffort('toString')).toBeUndefined();
    expect(isEffortLevel('none')).toBe(true);
    expect(isEffortLevel('extreme')).toBe(false);
    expect(isEffortLevel('constructor')).toBe(false);
  });

  it('keeps an Anthropic budget inside max_tokens with a quarter left for the answer, and at least the minimum', () => {
    for (const max of [1000, 1365, 1366, 4096, 16000, 64000]) {
      for (const requested of [1024, 2048, 8192, 24576, 32768]) {
        const budget = anthropicThinkingBudget(requested, max);
        if (budget === undefined) {
          expect(Math.min(requested, Math.floor((max * 3) / 4))).toBeLessThan(MIN_THINKING_BUDGET);
        } else {
          expect(budget).toBeGreaterThanOrEqual(MIN_THINKING_BUDGET);
          expect(budget).toBeLessThanOrEqual(requested);
          expect(max - budget).toBeGreaterThanOrEqual(max / 4);
        }
      }
    }
  });

  it('knows which Claude models think', () => {
    for (const m of ['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929', 'claude-opus-4-1', 'claude-haiku-4-5', 'claude-3-7-sonnet-20250219', 'us.anthropic.claude-sonnet-4-20250514-v1:0', 'claude-opus-4-8']) {
      expect(claudeThinks(m), m).toBe(true);
    }
    for (const m of ['claude-3-5-haiku-20241022', 'claude-3-5-sonnet-latest', 'claude-3-opus-20240229', 'gpt-5']) expect(claudeThinks(m), m).toBe(false);
  });
});
