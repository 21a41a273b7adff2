import { CreateAgent } from '@agentgw/gateway/contract';
import { resolveAgentId } from '../services/agent-ref.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { renderDocument } from '../ui/document.js';
import { say } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { formatLabels, renderTable } from '../ui/table.js';
import { checkBody, parseLabels } from './flag-values.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

export async function agentsList(flags: Flags & { tenant?: string }): Promise<number> {
  const agents = await connect(flags).listAllAgents({ tenant_id: flags.tenant });
  renderTable(
    agents,
    [
      { header: 'ID', value: (a) => a.id },
      { header: 'TENANT', value: (a) => a.tenant_id },
      { header: 'NAME', value: (a) => a.name },
      { header: 'POLICY', value: (a) => a.policy_id ?? '-' },
      { header: 'KEY', value: (a) => `${a.key_prefix}…` },
      { header: 'LABELS', value: (a) => formatLabels(a.labels) },
    ],
    outputMode(flags),
  );
  return 0;
}

export async function agentsGet(ref: string, flags: Flags): Promise<number> {
  const client = connect(flags);
  renderDocument(await client.getAgent(await resolveAgentId(client, ref)), outputMode(flags));
  return 0;
}

export async function agentsCreate(flags: Flags & { tenant: string; name: string; policy?: string; label?: string[] }): Promise<number> {
  const body = checkBody(CreateAgent, { name: flags.name, tenant_id: flags.tenant, policy_id: flags.policy, labels: parseLabels(flags.label) }, 'agent');
  const agent = await connect(flags).createAgent(body);
  if (flags.json) renderDocument(agent, 'json');
  else {
    say(`Created agent ${agent.tenant_id}/${agent.name} (${agent.id}).`);
    say(`API key (shown once; store it now): ${agent.api_key}`);
  }
  return 0;
}

export async function agentsDelete(ref: string, flags: Flags): Promise<number> {
  const client = connect(flags);
  const id = await resolveAgentId(client, ref);
  await client.deleteAgent(id);
  say(`Deleted agent ${ref}; its key no longer works.`);
  return 0;
}

export async function agentsRotateKey(ref: string, flags: Flags): Promise<number> {
  const client = connect(flags);
  const rotated = await client.rotateAgentKey(await resolveAgentId(client, ref));
  if (flags.json) renderDocument(rotated, 'json');
  else {
    say(`Rotated the key of agent ${ref}; the old key no longer works.`);
    say(`API key (shown once; store it now): ${rotated.api_key}`);
  }
  return 0;
}
