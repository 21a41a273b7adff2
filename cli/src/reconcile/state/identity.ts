import { KINDS } from '../../kinds/index.js';
import { keyOf } from '../../kinds/values.js';

/** Agents are identified by their tenant and name, never by the server's id. */
export function agentIdentity(tenantId: string, name: string): string {
  return keyOf(KINDS.agent, { tenant_id: tenantId, name });
}
