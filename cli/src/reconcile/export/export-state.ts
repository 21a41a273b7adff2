import { DEFAULT_RULES, type DeclarativeFile, type RulesInput } from '@agentgw/gateway/contract';
import { fieldChanges } from '../diff/field-changes.js';
import type { LiveObjects } from '../state/normalise.js';
import { agentAttrs, policyAttrs, tenantAttrs } from '../state/normalise.js';

type DeclaredPolicy = DeclarativeFile['policies'][number];

function nonEmpty<T extends object>(labels: T): T | undefined {
  return Object.keys(labels).length > 0 ? labels : undefined;
}

/** Drops undefined fields so the YAML shows only what was set. */
function compact<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

/** Only the rules that differ from the defaults: the file stays short and still plans no changes. */
function rulesDiff(rules: typeof DEFAULT_RULES): RulesInput | undefined {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rules)) {
    if (fieldChanges((DEFAULT_RULES as Record<string, unknown>)[k], v, `rules.${k}`).length > 0) out[k] = v;
  }
  return Object.keys(out).length > 0 ? (out as RulesInput) : undefined;
}

/**
 * Live state as a declarative file that plans no changes when applied back.
 * Ownership labels are left out (apply manages them) and agents' keys never exist in live state.
 */
export function exportDeclarative(live: LiveObjects): DeclarativeFile {
  const byId = <T extends { id: string }>(a: T, b: T) => a.id.localeCompare(b.id);
  const tenants = live.tenants
    .map((t) => tenantAttrs(t))
    .sort(byId)
    .map((t) => compact({ id: t.id, name: t.name, labels: nonEmpty(t.labels) }));
  const policies: DeclaredPolicy[] = live.policies
    .map((p) => policyAttrs(p.id, p))
    .sort(byId)
    .map((p) =>
      compact({
        id: p.id,
        tenant_id: p.tenant_id ?? undefined,
        monthly_budget: p.monthly_budget ?? undefined,
        daily_budget: p.daily_budget ?? undefined,
        allowed_models: p.allowed_models ?? undefined,
        rules: rulesDiff(p.rules),
        labels: nonEmpty(p.labels),
      }),
    );
  const agents = live.agents
    .map((a) => agentAttrs(a))
    .sort((a, b) => a.tenant_id.localeCompare(b.tenant_id) || a.name.localeCompare(b.name))
    .map((a) => compact({ name: a.name, tenant_id: a.tenant_id, policy_id: a.policy_id ?? undefined, labels: nonEmpty(a.labels) }));
  return { version: 1, tenants, policies, agents };
}
