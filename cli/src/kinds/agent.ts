import { randomUUID } from 'node:crypto';
import { Agent, AgentWithKey, CreateAgent, PatchAgent } from '@agentgw/gateway/contract';
import { defineKind } from './define-kind.js';
import { LABELS_DOC } from './docs.js';

/** Agents: named by tenant and name in the file; the server gives each an id and a key. */
export const agentKind = defineKind({
  kind: 'agent',
  section: 'agents',
  description: 'An agent: the holder of one gateway API key, bound to a tenant and optionally a policy.',
  entity: Agent,
  created: AgentWithKey,
  create: CreateAgent,
  update: PatchAgent,
  identity: ['tenant_id', 'name'],
  references: { tenant_id: 'tenant', policy_id: 'policy' },
  serverFields: ['id', 'key_prefix'],
  // CONTRACT: an agent without `suspended` in the file leaves the live value alone (an operator's suspension holds).
  unmanagedWhenAbsent: ['suspended'],
  docs: {
    name: 'Agent name, unique within its tenant: letters, digits, "_", "." or "-", at most 64 characters.',
    tenant_id: 'The tenant the agent belongs to. Changing it replaces the agent (and its key).',
    policy_id: 'The policy applied to the agent; unset = none.',
    labels: LABELS_DOC,
    id: 'Agent id, assigned by the server.',
    api_key: 'The agent API key: known only after create (an imported agent has none).',
  },
  api: {
    list: (c, q) => c.listAllAgents(q),
    get: (c, id) => c.getAgent(id),
    // a retried POST with the same key returns the first agent instead of a second one
    create: (c, body) => c.createAgent(body as CreateAgent, { idempotencyKey: randomUUID() }),
    update: (c, id, patch) => c.updateAgent(id, patch as PatchAgent),
    delete: (c, id) => c.deleteAgent(id),
    async find(c, key) {
      const slash = key.indexOf('/');
      const [tenantId, name] = [key.slice(0, slash), key.slice(slash + 1)];
      if (slash < 0) return null;
      return (await c.listAllAgents({ tenant_id: tenantId })).find((a) => a.tenant_id === tenantId && a.name === name) ?? null;
    },
  },
});
