import { AgentgwError } from '../contract/index.js';

/** The 404 for a write that names a tenant which does not exist (or was deleted while the write ran). */
export const tenantNamedNotFound = (id: string) => new AgentgwError('tenant_not_found', `Tenant ${id} does not exist: create it first.`, { param: 'tenant_id' });

/** The 404 for a write that names a policy which does not exist (or was deleted while the write ran). */
export const policyNamedNotFound = (id: string) =>
  new AgentgwError('policy_not_found', `Policy ${id} does not exist: create it first or check the id.`, { param: 'policy_id' });
