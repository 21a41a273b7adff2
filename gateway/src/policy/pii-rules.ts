import { AgentgwError, PII_TYPES, type PiiType, type Policy } from '../contract/index.js';
import type { Admitting, Check } from './admitting.js';
import { type PiiAllow, type PiiScope, redactRequestPii, scanRequestPii, type TextWalker } from './pii/index.js';
import { DEFAULT_PII_SCAN_BYTES } from './pii/scan-budget.js';
import { ScanBudgetExceeded, redactRequestPiiAsync, scanRequestPiiAsync } from './pii/scan-request.js';
import { allowFromLists } from './pii/scan-text.js';

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
      const allow = allowFromLists([p.rules.pii_allow ?? []]);
      byAllow.set(allow, [...(byAllow.get(allow) ?? []), p]);
    }
    plan = {
      active,
      groups: [...byAllow].map(([allow, members]) => ({ allow, policies: members, types: typesOfPolicies(members) })),
      scope: new Set(active.flatMap((p) => p.rules.pii_scope)),
      redactAllow: allowFromLists(active.filter((p) => p.rules.pii === 'redact').map((p) => p.rules.pii_allow ?? [])),
    };
    plans.set(policies, plan);
  }
  return plan;
}

type PiiOutcome = { body: Record<string, unknown>; found: PiiType[]; blocked?: AgentgwError };

/** The first policy of the group that blocks a type found, as the refusal (returned, not thrown, so the trace still records the types). */
function blockOf(group: AllowGroup, inGroup: readonly PiiType[]): AgentgwError | undefined {
  for (const p of group.policies) {
    if (p.rules.pii !== 'block') continue;
    const hit = inGroup.filter((t) => p.rules.pii_types.includes(t));
    if (hit.length > 0) return new AgentgwError('pii_detected', `The request contains personal data (${hit.join(', ')}), which policy ${p.id} blocks: remove it and retry.`);
  }
  return undefined;
}

/** The types redaction replaces: those a redacting policy looks for, among those found. */
function redactTypesOf(active: readonly Policy[], found: readonly PiiType[]): PiiType[] {
  return [...new Set(active.filter((p) => p.rules.pii === 'redact').flatMap((p) => p.rules.pii_types))].filter((t) => found.includes(t));
}

const scanFailed = () => new AgentgwError('pii_detected', 'PII detection could not scan this request, so it was blocked: simplify the request and retry.');
const redactFailed = () => new AgentgwError('pii_detected', 'PII redaction failed for this request, so it was blocked: simplify the request and retry.');

function budgetExceeded(e: ScanBudgetExceeded): AgentgwError {
  return new AgentgwError(
    'body_too_large',
    `The request holds ${e.bytes} bytes of text for the PII rules to read, more than limits.pii_scan_bytes (${e.limit} bytes) allows: send less text, or raise limits.pii_scan_bytes in the server config.`,
  );
}

/**
 * Applies every policy's PII rule to the request: `block` answers 403 naming the types found (never the text),
 * `redact` replaces matches before forwarding. A detector failure blocks (fail closed). Scans on this thread: for
 * requests on their way, applyPiiRulesAsync.
 */
export function applyPiiRules(policies: readonly Policy[], body: Record<string, unknown>, walk?: TextWalker): PiiOutcome {
  const { active, groups, scope, redactAllow } = piiPlan(policies);
  if (active.length === 0) return { body, found: [] };
  const seen = new Set<PiiType>();
  let blocked: AgentgwError | undefined;
  try {
    for (const group of groups) {
      const inGroup = scanRequestPii(body, group.types, walk, scope, group.allow);
      for (const t of inGroup) seen.add(t);
      blocked ??= blockOf(group, inGroup);
    }
  } catch {
    throw scanFailed();
  }
  const found = PII_TYPES.filter((t) => seen.has(t));
  if (found.length === 0 || blocked) return { body, found, ...(blocked ? { blocked } : {}) };
  try {
    return { body: redactRequestPii(body, redactTypesOf(active, found), walk, scope, redactAllow).body, found };
  } catch {
    throw redactFailed();
  }
}

/**
 * applyPiiRules for a request on its way: large fresh texts are scanned (and redacted) by the scan workers, never
 * holding the event loop; the outcome is a promise only then. The text the policies read may not pass `scanBytes`
 * (limits.pii_scan_bytes): past it, 413 `body_too_large`, before any scanning.
 */
export function applyPiiRulesAsync(
  policies: readonly Policy[],
  body: Record<string, unknown>,
  walk?: TextWalker,
  scanBytes = DEFAULT_PII_SCAN_BYTES,
): PiiOutcome | Promise<PiiOutcome> {
  const { active, groups, scope, redactAllow } = piiPlan(policies);
  if (active.length === 0) return { body, found: [] };
  const scanError = (e: unknown) => (e instanceof ScanBudgetExceeded ? budgetExceeded(e) : scanFailed());
  let scans: Array<PiiType[] | Promise<PiiType[]>>;
  try {
    scans = groups.map((group) => scanRequestPiiAsync(body, group.types, walk, scope, group.allow, scanBytes));
  } catch (e) {
    throw scanError(e);
  }
  const decide = (inGroups: readonly PiiType[][]): PiiOutcome | Promise<PiiOutcome> => {
    const seen = new Set<PiiType>();
    let blocked: AgentgwError | undefined;
    groups.forEach((group, i) => {
      for (const t of inGroups[i]!) seen.add(t);
      blocked ??= blockOf(group, inGroups[i]!);
    });
    const found = PII_TYPES.filter((t) => seen.has(t));
    if (found.length === 0 || blocked) return { body, found, ...(blocked ? { blocked } : {}) };
    let redacted: ReturnType<typeof redactRequestPiiAsync>;
    try {
      redacted = redactRequestPiiAsync(body, redactTypesOf(active, found), walk, scope, redactAllow);
    } catch {
      throw redactFailed();
    }
    if (!(redacted instanceof Promise)) return { body: redacted.body, found };
    return redacted.then(
      (r) => ({ body: r.body, found }),
      () => Promise.reject(redactFailed()),
    );
  };
  if (!scans.some((s) => s instanceof Promise)) return decide(scans as PiiType[][]);
  return Promise.all(scans).then(decide, (e: unknown) => Promise.reject(scanError(e)));
}

/**
 * A 400 naming the field when an active PII rule would have to read text it cannot (see PolicyView.unreadableText):
 * such a request is never forwarded unread.
 */
function unreadableByPolicies(
  policies: readonly Policy[],
  body: Record<string, unknown>,
  unreadableText: NonNullable<Admitting['view']['unreadableText']>,
): AgentgwError | undefined {
  const { active, scope } = piiPlan(policies);
  if (active.length === 0) return undefined;
  const at = unreadableText(body, scope);
  if (at === undefined) return undefined;
  const p = active.find((x) => x.rules.pii_scope.includes('user')) ?? active[0]!;
  return new AgentgwError(
    'validation_failed',
    `${at.what} cannot be read by the PII rules of policy ${p.id} (rules.pii: ${p.rules.pii}), and is not forwarded unread: send it as text.`,
    { param: at.param },
  );
}

function admitPii(a: Admitting, pii: PiiOutcome): void {
  a.piiTypes = pii.found;
  if (pii.blocked) throw pii.blocked;
  a.body = pii.body;
}

/** PII: block answers 403 (the types found are still recorded), redact forwards an edited copy. */
export const piiCheck: Check = {
  name: 'pii',
  run(a) {
    const unreadable = a.view.unreadableText === undefined ? undefined : unreadableByPolicies(a.eff.policies, a.body, a.view.unreadableText);
    if (unreadable) throw unreadable;
    const pii = applyPiiRulesAsync(a.eff.policies, a.body, a.view.visitTexts, a.piiScanBytes);
    if (!(pii instanceof Promise)) return admitPii(a, pii);
    return pii.then((outcome) => admitPii(a, outcome));
  },
};
