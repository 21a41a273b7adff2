import { AgentgwError } from '../contract/index.js';
import type { Check } from './admitting.js';

const cache = new Map<string, RegExp>();

/** `openai/*`, `anthropic/claude-*`, `?` for one character; everything else literal. */
function globToRegExp(glob: string): RegExp {
  let re = cache.get(glob);
  if (!re) {
    const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
    re = new RegExp(`^${body}$`);
    if (cache.size > 10_000) cache.clear();
    cache.set(glob, re);
  }
  return re;
}

/** null = every model; [] = none. */
export function modelAllowed(allowed: readonly string[] | null, model: string): boolean {
  if (allowed === null) return true;
  for (const pattern of allowed) {
    if (pattern === model || globToRegExp(pattern).test(model)) return true;
  }
  return false;
}

export function modelNotAllowed(model: string, policyId: string): AgentgwError {
  return new AgentgwError(
    'model_not_allowed',
    `Model ${model} is not allowed by policy ${policyId}: use a model from its allowed_models, or ask an admin to add it.`,
    { param: 'model' },
  );
}

/** The model allow-list: the request plan keeps only targets every policy allows; none left is a 403. */
export const modelAllowListCheck: Check = {
  name: 'model_allow_list',
  run(a) {
    if (a.targets.length === 0) throw modelNotAllowed(a.model, a.blockingPolicy);
  },
};
