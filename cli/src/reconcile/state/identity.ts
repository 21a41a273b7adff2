/** Agents are identified by their tenant and name, never by the server's id. */
export function agentIdentity(tenantId: string, name: string): string {
  return `${tenantId}/${name}`;
}
