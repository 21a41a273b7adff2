import type { AdminClient } from '../../admin-client/admin-client.js';
import type { LiveObjects } from '../state/normalise.js';

/** What the dump stage needs of the admin client. */
export type DumpClient = Pick<AdminClient, 'listAllTenants' | 'listAllPolicies' | 'listAllAgents'>;

/** Every live tenant, policy and agent the admin key may see, all pages. */
export async function dumpLive(client: DumpClient, opts: { tenantId?: string } = {}): Promise<LiveObjects> {
  const q = opts.tenantId ? { tenant_id: opts.tenantId } : {};
  const [tenants, policies, agents] = await Promise.all([
    client.listAllTenants(),
    client.listAllPolicies(q),
    client.listAllAgents(q),
  ]);
  return {
    tenants: opts.tenantId ? tenants.filter((t) => t.id === opts.tenantId) : tenants,
    policies: opts.tenantId ? policies.filter((p) => p.tenant_id === opts.tenantId) : policies,
    agents: opts.tenantId ? agents.filter((a) => a.tenant_id === opts.tenantId) : agents,
  };
}
