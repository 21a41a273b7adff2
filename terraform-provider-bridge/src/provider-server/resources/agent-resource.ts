import { ignoreNotFound, isAdminApiError, type AdminClient } from '@agentgw/cli';
import type { Agent } from '@agentgw/gateway/contract';
import type { TfObject, TfValue } from '../dynamic-value.js';
import { HandlerError, type ResourceHandler } from './resource-handler.js';
import { asObject, asString, unsetIfDefault } from './unset-values.js';

/** The key is shown by the server once, on create: afterwards the state keeps what it had. */
function toState(a: Agent, prior: TfObject | null, apiKey: TfValue = prior?.api_key ?? null): TfObject {
  return {
    id: a.id,
    name: a.name,
    tenant_id: a.tenant_id,
    policy_id: a.policy_id,
    labels: unsetIfDefault(a.labels, {}, prior?.labels),
    key_prefix: a.key_prefix,
    api_key: apiKey,
  };
}

function labels(state: TfObject): Record<string, string> {
  return (asObject(state.labels) ?? {}) as Record<string, string>;
}

async function getOrNull(client: AdminClient, id: string): Promise<Agent | null> {
  try {
    return await client.getAgent(id);
  } catch (e) {
    if (isAdminApiError(e) && e.status === 404) return null;
    throw e;
  }
}

/** Import takes the agent id or `TENANT/NAME` (the identity the declarative file uses). */
async function findAgent(client: AdminClient, id: string): Promise<Agent> {
  const slash = id.indexOf('/');
  if (slash < 0) return client.getAgent(id);
  const [tenantId, name] = [id.slice(0, slash), id.slice(slash + 1)];
  const found = (await client.listAllAgents({ tenant_id: tenantId })).find((a) => a.name === name);
  if (!found) throw new HandlerError('Agent not found', `No agent named ${name} in tenant ${tenantId}.`);
  return found;
}

export const agentResource: ResourceHandler = {
  async create(client, planned) {
    try {
      const a = await client.createAgent({
        name: String(planned.name),
        tenant_id: String(planned.tenant_id),
        policy_id: asString(planned.policy_id) ?? null,
        labels: labels(planned),
      });
      return toState(a, planned, a.api_key);
    } catch (e) {
      if (isAdminApiError(e, 'agent_exists')) {
        const ref = `${String(planned.tenant_id)}/${String(planned.name)}`;
        throw new HandlerError('Agent already exists', `${e.message} Import it with: terraform import agentgw_agent.NAME ${ref}`);
      }
      throw e;
    }
  },
  async read(client, prior) {
    const a = await getOrNull(client, String(prior.id));
    return a && toState(a, prior);
  },
  async update(client, prior, planned) {
    const a = await client.updateAgent(String(prior.id), {
      name: String(planned.name),
      policy_id: asString(planned.policy_id) ?? null,
      labels: labels(planned),
    });
    return toState(a, planned, prior.api_key ?? null);
  },
  async delete(client, prior) {
    await ignoreNotFound(client.deleteAgent(String(prior.id)));
  },
  async importState(client, id) {
    return toState(await findAgent(client, id), null, null);
  },
};
