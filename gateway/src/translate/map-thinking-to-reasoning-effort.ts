// Anthropic's thinking budget or output effort -> OpenAI's reasoning_effort, for targets that reason.
import { invalidField, isObject } from './invalid-field.js';
import { effortOfThinkingBudget } from './reasoning-budget.js';

export type ReasoningEffort = 'low' | 'medium' | 'high';

/** output_config.effort wins over thinking: it is the explicit effort knob; both absent leaves the target's default. */
export function reasoningEffortOf(thinking: unknown, effort: unknown): ReasoningEffort | undefined {
  // Both are read first so that a wrong value is a 400 even when the other one decides.
  const fromEffort = mapEffort(effort);
  const fromThinking = mapThinking(thinking);
  return fromEffort ?? fromThinking;
}

function mapEffort(effort: unknown): ReasoningEffort | undefined {
  switch (effort) {
    case undefined:
    case null:
      return undefined;
    case 'low':
    case 'medium':
    case 'high':
      return effort;
    case 'xhigh':
    case 'max':
      return 'high';
    default:
      throw invalidField('output_config.effort', 'output_config.effort must be "low", "medium", "high", "xhigh" or "max".');
  }
}

function mapThinking(thinking: unknown): ReasoningEffort | undefined {
  if (thinking == null) return undefined;
  if (!isObject(thinking)) throw invalidField('thinking', 'thinking must be an object such as {"type": "enabled", "budget_tokens": 4096}.');
  switch (thinking.type) {
    case 'disabled':
      return undefined;
    case 'enabled': {
      const budget = thinking.budget_tokens;
      if (typeof budget !== 'number' || !Number.isFinite(budget)) {
        throw invalidField('thinking.budget_tokens', 'thinking.budget_tokens must be a number of tokens when thinking is enabled.');
      }
      return effortOfThinkingBudget(budget);
    }
    case 'adaptive':
    case 'between_tools':
      return 'medium';
    default:
      throw invalidField('thinking.type', 'thinking.type must be "enabled", "adaptive" or "disabled".');
  }
}
