import type { Command } from 'commander';
import type { AgentWithKey } from '../admin-client/types.js';
import { KINDS } from '../kinds/index.js';
import { keyOf } from '../kinds/values.js';
import { act } from '../run-action.js';
import { resolveAgentId } from '../services/agent-ref.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { renderDocument } from '../ui/document.js';
import { say } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { formatLabels, renderTable } from '../ui/table.js';
import { checkBody } from './flag-values.js';
import { addKindFlags, kindBody, kindFlags } from './kind-flags.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

/** Every field of an agent is a flag (`--tenant`, `--name`, `--policy`, ...), read from the contract. */
const CREATE_FLAGS = kindFlags(KINDS.agent);

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

export async function agentsCreate(flags: Flags & Record<string, unknown>): Promise<number> {
  const body = checkBody(KINDS.agent.schemas.create, kindBody(flags, CREATE_FLAGS), 'agent');
  const agent = (await KINDS.agent.api.create(connect(flags), body as AgentWithKey, keyOf(KINDS.agent, body as AgentWithKey))) as AgentWithKey;
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

/** Suspends or resumes an agent: while suspended, its key gets 403 agent_suspended (its key, spend and traces stay). */
export async function agentsSuspend(suspended: boolean, ref: string, flags: Flags): Promise<number> {
  const client = connect(flags);
  const agent = await client.updateAgent(await resolveAgentId(client, ref), { suspended });
  if (flags.json) renderDocument(agent, 'json');
  else if (suspended) say(`Suspended agent ${agent.tenant_id}/${agent.name}: its key gets 403 agent_suspended until it is resumed.`);
  else say(`Resumed agent ${agent.tenant_id}/${agent.name}: its key works again.`);
  return 0;
}

export function registerAgents(program: Command): void {
  const agents = program.command('agents').description('manage agents (ID is agt_... or TENANT/NAME)');
  agents.command('list').description('list the agents, with their spend').option('--tenant <id>', 'only this tenant').option('--json', 'print JSON').action(act(agentsList));
  agents.command('get <id>').description('show an agent, its policy and spend').option('--json', 'print JSON').action(act(agentsGet));
  addKindFlags(agents.command('create').description('create an agent and print its key once'), CREATE_FLAGS, { requireRequired: true })
    .option('--json', 'print JSON (includes the key)')
    .action(act(agentsCreate));
  agents.command('delete <id>').description('delete an agent: its key stops working at once').action(act(agentsDelete));
  agents
    .command('suspend <id>')
    .description('refuse the agent\'s requests (403 agent_suspended) until resumed; a file without suspended leaves it so')
    .option('--json', 'print JSON')
    .action(act((ref: string, flags: Flags) => agentsSuspend(true, ref, flags)));
  agents
    .command('resume <id>')
    .description('let a suspended agent\'s requests through again')
    .option('--json', 'print JSON')
    .action(act((ref: string, flags: Flags) => agentsSuspend(false, ref, flags)));
  agents.command('rotate-key <id>').description('issue a new key; the old one stops working').option('--json', 'print JSON').action(act(agentsRotateKey));
}
