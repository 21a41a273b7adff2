// rules.max_cost_per_request: the request's worst case may not pass the cap (or, with clamp_output, is lowered to fit).
import { AgentgwError } from '../contract/index.js';
import type { Check } from './admitting.js';
import { clampToFit, worstCaseOf } from './worst-case.js';

export const costCapCheck: Check = {
  name: 'cost_cap',
  run(a) {
    // Worked out here even without a cap: a target without a price under a budget is refused in this place of the order.
    const worst = worstCaseOf(a);
    const cap = a.eff.maxCostPerRequest;
    if (cap === null || worst <= cap || clampToFit(a, cap)) return;
    throw new AgentgwError(
      'cost_cap_exceeded',
      `This request could cost up to $${worst.toFixed(6)}, above the per-request cap of $${cap}: lower max_tokens, shorten the prompt, or use a cheaper model.`,
    );
  },
};
