import type { AdminClient } from '../admin-client/admin-client.js';
import { CliError } from '../errors.js';

/** Agents are addressed by server id (agt_...) or by `tenant/name`. */
export async function resolveAgentId(client: AdminClient, ref: string): Promise<string> {
  const slash = ref.indexOf('/');
  if (slash === -1) return ref;
  const tenant = ref.slice(0, slash);
  const name = ref.slice(slash + 1);
  const agents = await client.listAllAgents({ tenant_id: tenant });
  const found = agents.find((a) => a.tenant_id === tenant && a.name === name);
  if (!found) throw new CliError(`no agent named ${name} in tenant ${tenant}`);
  return found.id;
}
