import type { Command } from 'commander';
import { act } from '../run-action.js';
import type { ConnectionOptions } from '../services/connection.js';
import { credentialHeaders, listMcpCredentials, setMcpCredentials, unsetMcpCredentials } from '../services/mcp-credentials.js';
import { collect } from './flag-values.js';
import { jsonText } from '../ui/json.js';
import { note, say } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { renderTable } from '../ui/table.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

export async function mcpCredentialsSetCommand(agentRef: string, server: string, flags: Flags & { header?: string[]; headerEnv?: string[] }): Promise<number> {
  const { agent, credentials } = await setMcpCredentials(flags, agentRef, server, credentialHeaders(flags.header, flags.headerEnv));
  if (outputMode(flags) === 'json') process.stdout.write(jsonText(credentials));
  else say(`Set ${credentials.header_names.join(', ')} for ${agent.tenant_id}/${agent.name} on MCP server ${server}: sent to ${server} alone, in place of its own Authorization, from the next request on.`);
  return 0;
}

export async function mcpCredentialsListCommand(agentRef: string, flags: Flags): Promise<number> {
  const { agent, data } = await listMcpCredentials(flags, agentRef);
  const mode = outputMode(flags);
  renderTable(
    data,
    [
      { header: 'SERVER', value: (c) => c.server },
      { header: 'HEADERS', value: (c) => c.header_names.join(',') },
      { header: 'UPDATED', value: (c) => c.updated_at ?? '-' },
    ],
    mode,
  );
  if (mode !== 'json' && data.length === 0) note(`Agent ${agent.tenant_id}/${agent.name} has no credentials of its own: every server serves it with the server's own.`);
  return 0;
}

export async function mcpCredentialsUnsetCommand(agentRef: string, server: string, flags: Flags): Promise<number> {
  const agent = await unsetMcpCredentials(flags, agentRef, server);
  say(`${agent.tenant_id}/${agent.name} has no credentials of its own on MCP server ${server}: the server's own serve it from the next request on.`);
  return 0;
}

/** `agentgw mcp credentials`: per-agent credentials for upstream MCP servers (values are never shown). */
export function registerMcpCredentials(mcp: Command): void {
  const creds = mcp.command('credentials').description("an agent's own credentials for upstream MCP servers: headers sent to that server alone for that agent (stored sealed, never shown)");
  creds
    .command('list')
    .description('the servers an agent has credentials for, which headers and when they were set (never their values)')
    .argument('<agent>', 'the agent: TENANT/NAME or its agt_... id')
    .option('--json', 'print JSON')
    .action(act(mcpCredentialsListCommand));
  creds
    .command('set')
    .description("set the headers sent to the server for the agent, in place of the server's own Authorization")
    .argument('<agent>', 'the agent: TENANT/NAME or its agt_... id')
    .argument('<server>', 'the MCP server, as agentgw mcp servers lists it (HTTP servers only)')
    .option('--header <name: value>', 'a header, such as "Authorization: Bearer <token>" (repeatable)', collect)
    .option('--header-env <name=ENV_VAR>', 'a header whose value is read from the environment, keeping it out of shell history (repeatable)', collect)
    .option('--json', 'print JSON')
    .action(act(mcpCredentialsSetCommand));
  creds
    .command('unset')
    .description("remove the agent's credentials for the server: the server's own serve it again")
    .argument('<agent>', 'the agent: TENANT/NAME or its agt_... id')
    .argument('<server>', 'the MCP server')
    .action(act(mcpCredentialsUnsetCommand));
}
