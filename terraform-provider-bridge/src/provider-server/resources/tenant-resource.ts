import { ignoreNotFound, isAdminApiError, type AdminClient } from '@agentgw/cli';
import type { Tenant } from '@agentgw/gateway/contract';
import type { TfObject } from '../dynamic-value.js';
import { HandlerError, type ResourceHandler } from './resource-handler.js';
import { asObject, unsetIfDefault } from './unset-values.js';

function toState(t: Tenant, prior: TfObject | null): TfObject {
  return { id: t.id, name: t.name, labels: unsetIfDefault(t.labels, {}, prior?.labels) };
}

function labels(state: TfObject): Record<string, string> {
  return (asObject(state.labels) ?? {}) as Record<string, string>;
}

async function getOrNull(client: AdminClient, id: string): Promise<Tenant | null> {
  try {
    return await client.getTenant(id);
  } catch (e) {
    if (isAdminApiError(e) && e.status === 404) return null;
    throw e;
  }
}

export const tenantResource: ResourceHandler = {
  async create(client, planned) {
    try {
      const t = await client.createTenant({ id: String(planned.id), name: String(planned.name), labels: labels(planned) });
      return toState(t, planned);
    } catch (e) {
      if (isAdminApiError(e, 'tenant_exists')) {
        throw new HandlerError('Tenant already exists', `${e.message} Import it with: terraform import agentgw_tenant.NAME ${String(planned.id)}`);
      }
      throw e;
    }
  },
  async read(client, prior) {
    const t = await getOrNull(client, String(prior.id));
    return t && toState(t, prior);
  },
  async update(client, _prior, planned) {
    const t = await client.updateTenant(String(planned.id), { name: String(planned.name), labels: labels(planned) });
    return toState(t, planned);
  },
  async delete(client, prior) {
    await ignoreNotFound(client.deleteTenant(String(prior.id)));
  },
  async importState(client, id) {
    return toState(await client.getTenant(id), null);
  },
};
