import { useMemo } from 'react';
import { query } from './api/client';
import type { Agent, Tenant } from './api/types';
import { useSession } from './session';
import { usePoll } from './use-poll';

export interface Directory {
  tenants: Tenant[];
  agents: Agent[];
  agentName(id: string): string;
  agent(id: string): Agent | undefined;
}

/** Tenants and agents the key may see, for names and filters; refreshed every 30 s. */
export function useDirectory(tenantId?: string): Directory & { ready: boolean } {
  const { api } = useSession();
  const tenants = usePoll(() => api.all<Tenant>('/tenants'), [api], () => 30_000);
  const agents = usePoll(() => api.all<Agent>(`/agents${query({ tenant_id: tenantId })}`), [api, tenantId], () => 30_000);
  return useMemo(() => {
    const byId = new Map((agents.data ?? []).map((a) => [a.id, a]));
    return {
      ready: tenants.data !== undefined && agents.data !== undefined,
      tenants: tenants.data ?? [],
      agents: agents.data ?? [],
      agent: (id: string) => byId.get(id),
      agentName: (id: string) => byId.get(id)?.name ?? id,
    };
  }, [tenants.data, agents.data]);
}
