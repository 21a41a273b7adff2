import type { AdminClient } from '../admin-client/admin-client.js';
import { isAdminApiError } from '../admin-client/errors.js';
import type { Agent } from '../admin-client/types.js';
import { CliError } from '../errors.js';
import { KINDS } from '../kinds/index.js';
import { identityOf } from '../kinds/values.js';

/** Agents are addressed by server id (agt_...) or by `TENANT/NAME`. */
export async function resolveAgentId(client: AdminClient, ref: string): Promise<string> {
  if (!ref.includes('/')) return ref;
  return (await findAgent(client, ref)).id;
}

/** The agent a reference names; an unknown one is an error that says so (never an empty result further on). */
export async function findAgent(client: AdminClient, ref: string): Promise<Agent> {
  if (ref.includes('/')) {
    const identity = identityOf(KINDS.agent, ref);
    if (!identity) throw new CliError(`"${ref}" is not an agent: write TENANT/NAME or the agent id (agt_...)`);
    const found = (await KINDS.agent.api.find(client, ref)) as Agent | null;
    if (!found) throw new CliError(`no agent named ${String(identity.name)} in tenant ${String(identity.tenant_id)}`);
    return found;
  }
  try {
    return await client.getAgent(ref);
  } catch (e) {
    if (isAdminApiError(e) && e.status === 404) throw new CliError(`no agent with id ${ref} (name it as TENANT/NAME or by its agt_... id)`);
    throw e;
  }
}

/** Reports speak names: `tenant/name` for an agent id, learnt from the agent list (and again for an id not seen yet). */
export class AgentNames {
  private names = new Map<string, string>();
  /** Ids looked for at the last load: one still unknown is a deleted agent, not a reason to list again. */
  private looked = new Set<string>();

  constructor(
    private readonly client: Pick<AdminClient, 'listAllAgents'>,
    private readonly tenantId?: string,
  ) {}

  /** Loads the names for these ids when one is unknown; a key that may not list agents keeps the ids. */
  async learn(ids: Iterable<string>): Promise<void> {
    const wanted = [...ids];
    if (wanted.every((id) => this.names.has(id) || this.looked.has(id))) return;
    for (const id of wanted) this.looked.add(id);
    try {
      const agents = await this.client.listAllAgents(this.tenantId ? { tenant_id: this.tenantId } : {});
      this.names = new Map(agents.map((a) => [a.id, `${a.tenant_id}/${a.name}`]));
    } catch (e) {
      if (!isAdminApiError(e) || (e.status !== 403 && e.status !== 404)) throw e;
    }
  }

  /** `tenant/name`, or `tenant/agt_...` for an agent that is gone. */
  label(tenantId: string, agentId: string): string {
    return this.names.get(agentId) ?? `${tenantId}/${agentId}`;
  }

  /** `tenant/name`, or the id itself for an agent that is gone. */
  nameOf(agentId: string): string {
    return this.names.get(agentId) ?? agentId;
  }
}
