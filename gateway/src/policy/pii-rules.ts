import { AgentgwError, type PiiType, type Policy } from '../contract/index.js';
import type { Check } from './admitting.js';
import { type PiiScope, redactRequestPii, scanRequestPii, type TextWalker } from './pii/index.js';

interface PiiPlan {
  active: readonly Policy[];
  types: readonly PiiType[];
  /** The parts any active policy reads (rules.pii_scope). */
  scope: PiiScope;
}

/** The policies that scan and the types they scan for, worked out once per policy list (a request plan keeps its list). */
const plans = new WeakMap<readonly Policy[], PiiPlan>();

function piiPlan(policies: readonly Policy[]): PiiPlan {
  let plan = plans.get(policies);
  if (!plan) {
    const active = policies.filter((p) => p.rules.pii !== 'off');
    plan = {
      active,
      types: Object.freeze([...new Set(active.flatMap((p) => p.rules.pii_types))]),
      scope: new Set(active.flatMap((p) => p.rules.pii_scope)),
    };
    plans.set(policies, plan);
  }
  return plan;
}

/**
 * Applies every policy's PII rule to the request: `block` answers 403 naming the types found (never the text),
 * `redact` replaces matches before forwarding. A detector failure blocks (fail closed).
 */
export function applyPiiRules(
  policies: readonly Policy[],
  body: Record<string, unknown>,
  walk?: TextWalker,
): { body: Record<string, unknown>; found: PiiType[]; blocked?: AgentgwError } {
  const { active, types, scope } = piiPlan(policies);
  if (active.length === 0) return { body, found: [] };
  let found: PiiType[];
  try {
    found = [...scanRequestPii(body, types, walk, scope)];
  } catch {
    throw new AgentgwError('pii_detected', 'PII detection could not scan this request, so it was blocked: simplify the request and retry.');
  }
  if (found.length === 0) return { body, found };
  for (const p of active) {
    if (p.rules.pii !== 'block') continue;
    const hit = found.filter((t) => p.rules.pii_types.includes(t));
    if (hit.length > 0) {
      // Returned, not thrown, so the trace still records which types were found.
      const blocked = new AgentgwError(
        'pii_detected',
        `The request contains personal data (${hit.join(', ')}), which policy ${p.id} blocks: remove it and retry.`,
      );
      return { body, found, blocked };
    }
  }
  const redactTypes = [...new Set(active.filter((p) => p.rules.pii === 'redact').flatMap((p) => p.rules.pii_types))].filter((t) => found.includes(t));
  try {
    return { body: redactRequestPii(body, redactTypes, walk, scope).body, found };
  } catch {
    throw new AgentgwError('pii_detected', 'PII redaction failed for this request, so it was blocked: simplify the request and retry.');
  }
}

/** PII: block answers 403 (the types found are still recorded), redact forwards an edited copy. */
export const piiCheck: Check = {
  name: 'pii',
  run(a) {
    const pii = applyPiiRules(a.eff.policies, a.body, a.view.visitTexts);
    a.piiTypes = pii.found;
    if (pii.blocked) throw pii.blocked;
    a.body = pii.body;
  },
};
