import { ignoreNotFound, isAdminApiError, type AdminClient } from '@agentgw/cli';
import { DEFAULT_RULES, type Policy, type PutPolicy, type Rules } from '@agentgw/gateway/contract';
import type { TfObject, TfValue } from '../dynamic-value.js';
import { HandlerError, type ResourceHandler } from './resource-handler.js';
import { asObject, unsetIfDefault } from './unset-values.js';

const RULE_KEYS = Object.keys(DEFAULT_RULES) as Array<keyof Rules>;

function rulesState(rules: Rules, prior: TfValue | undefined): TfValue {
  const priorRules = asObject(prior);
  if (!priorRules && RULE_KEYS.every((k) => unsetIfDefault(rules[k], DEFAULT_RULES[k], null) === null)) return null;
  return Object.fromEntries(RULE_KEYS.map((k) => [k, unsetIfDefault(rules[k], DEFAULT_RULES[k], priorRules?.[k])]));
}

function toState(p: Policy, prior: TfObject | null): TfObject {
  return {
    id: p.id,
    tenant_id: p.tenant_id,
    monthly_budget: p.monthly_budget,
    daily_budget: p.daily_budget,
    allowed_models: p.allowed_models,
    rules: rulesState(p.rules, prior?.rules),
    labels: unsetIfDefault(p.labels, {}, prior?.labels),
  };
}

/** The whole desired policy: unset attributes are sent as their defaults, since PUT keeps what a body leaves out. */
function putBody(planned: TfObject, create: boolean): PutPolicy {
  const rules = asObject(planned.rules) ?? {};
  return {
    ...(create ? { tenant_id: (planned.tenant_id as string | null) ?? null } : {}),
    monthly_budget: (planned.monthly_budget as number | null) ?? null,
    daily_budget: (planned.daily_budget as number | null) ?? null,
    allowed_models: (planned.allowed_models as string[] | null) ?? null,
    rules: Object.fromEntries(RULE_KEYS.map((k) => [k, rules[k] ?? DEFAULT_RULES[k]])) as Rules,
    labels: (asObject(planned.labels) ?? {}) as Record<string, string>,
  };
}

async function getOrNull(client: AdminClient, id: string): Promise<Policy | null> {
  try {
    return await client.getPolicy(id);
  } catch (e) {
    if (isAdminApiError(e) && e.status === 404) return null;
    throw e;
  }
}

export const policyResource: ResourceHandler = {
  async create(client, planned) {
    const id = String(planned.id);
    // PUT would silently take over an existing policy; terraform creates only what it does not yet manage.
    if (await getOrNull(client, id)) {
      throw new HandlerError('Policy already exists', `The policy ${id} already exists. Import it with: terraform import agentgw_policy.NAME ${id}`);
    }
    const { policy } = await client.putPolicy(id, putBody(planned, true));
    return toState(policy, planned);
  },
  async read(client, prior) {
    const p = await getOrNull(client, String(prior.id));
    return p && toState(p, prior);
  },
  async update(client, _prior, planned) {
    const { policy } = await client.putPolicy(String(planned.id), putBody(planned, false));
    return toState(policy, planned);
  },
  async delete(client, prior) {
    await ignoreNotFound(client.deletePolicy(String(prior.id)));
  },
  async importState(client, id) {
    return toState(await client.getPolicy(id), null);
  },
};
