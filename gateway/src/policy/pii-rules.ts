import { AgentgwError, PII_TYPES, type PiiType, type Policy } from '../contract/index.js';
import type { Check } from './admitting.js';
import { allowedByAll, compileAllow, type PiiAllow, type PiiScope, redactRequestPii, scanRequestPii, type TextWalker } from './pii/index.js';

/** Policies that share an allow-list (rules.pii_allow) scan together: what one allows, another may not. */
interface AllowGroup {
  allow: PiiAllow;
  policies: readonly Policy[];
  types: readonly PiiType[];
}

interface PiiPlan {
  active: readonly Policy[];
  groups: readonly AllowGroup[];
  /** The parts any active policy reads (rules.pii_scope). */
  scope: PiiScope;
  /** What redaction leaves: only what every redacting policy allows. */
  redactAllow: PiiAllow;
}

const typesOfPolicies = (policies: readonly Policy[]): readonly PiiType[] => Object.freeze([...new Set(policies.flatMap((p) => p.rules.pii_types))]);

/** The policies that scan, grouped by allow-list, worked out once per policy list (a request plan keeps its list). */
const plans = new WeakMap<readonly Policy[], PiiPlan>();

function piiPlan(policies: readonly Policy[]): PiiPlan {
  let plan = plans.get(policies);
  if (!plan) {
    const active = policies.filter((p) => p.rules.pii !== 'off');
    const byAllow = new Map<PiiAllow, Policy[]>();
    for (const p of active) {
      const allow = compileAllow(p.rules.pii_allow ?? []);
      byAllow.set(allow, [...(byAllow.get(allow) ?? []), p]);
    }
    plan = {
      active,
      groups: [...byAllow].map(([allow, members]) => ({ allow, policies: members, types: typesOfPolicies(members) })),
      scope: new Set(active.flatMap((p) => p.rules.pii_scope)),
      redactAllow: allowedByAll(active.filter((p) => p.rules.pii === 'redact').map((p) => compileAllow(p.rules.pii_allow ?? []))),
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
  const { active, groups, scope, redactAllow } = piiPlan(policies);
  if (active.length === 0) return { body, found: [] };
  const seen = new Set<PiiType>();
  let blocked: AgentgwError | undefined;
  try {
    for (const group of groups) {
      const inGroup = scanRequestPii(body, group.types, walk, scope, group.allow);
      for (const t of inGroup) seen.add(t);
      for (const p of group.policies) {
        if (blocked || p.rules.pii !== 'block') continue;
        const hit = inGroup.filter((t) => p.rules.pii_types.includes(t));
        // Returned, not thrown, so the trace still records which types were found.
        if (hit.length > 0) {
          blocked = new AgentgwError('pii_detected', `The request contains personal data (${hit.join(', ')}), which policy ${p.id} blocks: remove it and retry.`);
        }
      }
    }
  } catch {
    throw new AgentgwError('pii_detected', 'PII detection could not scan this request, so it was blocked: simplify the request and retry.');
  }
  const found = PII_TYPES.filter((t) => seen.has(t));
  if (found.length === 0 || blocked) return { body, found, ...(blocked ? { blocked } : {}) };
  const redactTypes = [...new Set(active.filter((p) => p.rules.pii === 'redact').flatMap((p) => p.rules.pii_types))].filter((t) => found.includes(t));
  try {
    return { body: redactRequestPii(body, redactTypes, walk, scope, redactAllow).body, found };
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
