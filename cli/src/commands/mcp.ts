import type { Command } from 'commander';
import { act } from '../run-action.js';
import type { ConnectionOptions } from '../services/connection.js';
import { CliError } from '../errors.js';
import { acceptMcpTool, mcpServers, mcpServerTools, mcpToolsOf } from '../services/mcp.js';
import { definitionDiff } from '../ui/definition-diff.js';
import { jsonText } from '../ui/json.js';
import { usd } from '../ui/format-usage.js';
import { note, say } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { renderTable } from '../ui/table.js';
import { registerMcpCredentials } from './mcp-credentials.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

export async function mcpServersCommand(flags: Flags): Promise<number> {
  const servers = await mcpServers(flags);
  renderTable(
    servers,
    [
      { header: 'SERVER', value: (s) => s.name },
      { header: 'TRANSPORT', value: (s) => s.transport },
      { header: 'STATUS', value: (s) => (s.error ? `${s.status} (${s.error})` : s.status) },
      { header: 'TOOLS', value: (s) => (s.tools.length === 0 ? '-' : s.tools.join(',')) },
    ],
    outputMode(flags),
  );
  return 0;
}

export async function mcpToolsCommand(flags: Flags & { agent?: string; server?: string }): Promise<number> {
  if ((flags.agent === undefined) === (flags.server === undefined)) {
    throw new CliError('pass --server NAME (its tools, pin status and what changed) or --agent TENANT/NAME (the tools that agent may call), one of them');
  }
  if (flags.server !== undefined) return serverToolsCommand(flags, flags.server);
  const { agent, tools } = await mcpToolsOf(flags, flags.agent!);
  const mode = outputMode(flags);
  renderTable(
    tools,
    [
      { header: 'TOOL', value: (t) => t.tool },
      { header: 'SERVER', value: (t) => t.server },
      { header: 'PRICE', value: (t) => (t.price_usd === null ? '-' : usd(t.price_usd)) },
    ],
    mode,
  );
  if (mode !== 'json' && agent.policy_id === null) note(`Agent ${agent.tenant_id}/${agent.name} has no policy: it may call every tool.`);
  return 0;
}

/** A server's tools with their pin status; under each changed tool, the diff of its pinned and its current definition. */
async function serverToolsCommand(flags: Flags, server: string): Promise<number> {
  const listing = await mcpServerTools(flags, server);
  const mode = outputMode(flags);
  if (mode === 'json') {
    process.stdout.write(jsonText(listing));
    return 0;
  }
  renderTable(
    listing.data,
    [
      { header: 'TOOL', value: (t) => t.name },
      { header: 'STATUS', value: (t) => (t.withheld ? `${t.status} (withheld)` : t.status) },
      { header: 'DIGEST', value: (t) => t.digest.slice(0, 12) },
      { header: 'PINNED', value: (t) => (t.pinned_digest ? `${t.pinned_digest.slice(0, 12)} ${t.pinned_by ? `by ${t.pinned_by}` : 'first seen'}` : '-') },
    ],
    mode,
  );
  for (const t of listing.data) {
    const diff = definitionDiff(server, t);
    if (diff.length === 0) continue;
    say('');
    for (const line of diff) say(line);
  }
  const waiting = listing.data.filter((t) => t.withheld);
  if (waiting.length > 0) note(`${waiting.length} tool(s) withheld from agents (pin: ${listing.pin}): review, then agentgw mcp accept ${server}/<tool> --digest <digest>.`);
  else if (listing.pin === 'off') note(`Tool pinning is off for ${server}: every tool is served as it is listed.`);
  return 0;
}

export async function mcpAcceptCommand(ref: string, flags: Flags & { digest?: string }): Promise<number> {
  const tool = await acceptMcpTool(flags, ref, flags.digest);
  if (outputMode(flags) === 'json') process.stdout.write(jsonText(tool));
  else say(`Accepted ${ref}: definition ${tool.digest.slice(0, 12)} is pinned; agents see the tool again.`);
  return 0;
}

export function registerMcp(program: Command): void {
  const mcp = program.command('mcp').description('the MCP servers agents reach through the gateway at /mcp');
  mcp.command('servers').description('each upstream MCP server: transport, status and tools').option('--json', 'print JSON').action(act(mcpServersCommand));
  mcp
    .command('tools')
    .description('with --agent: the tools an agent may call through /mcp, as <server>__<tool>; with --server: each tool of the server, its pin status (pinned, changed, new) and digest, and for a changed tool a diff of its pinned and its current definition')
    .option('--agent <agent>', 'the agent: TENANT/NAME or its agt_... id')
    .option('--server <name>', 'the MCP server (tool pinning)')
    .option('--json', 'print JSON')
    .action(act(mcpToolsCommand));
  mcp
    .command('accept')
    .description('accept the definition a server lists now for a tool withheld by tool pinning (changed, or new under pin: strict): agents see it again (admin keys only)')
    .argument('<server/tool>', 'the tool, as SERVER/TOOL')
    .option('--digest <digest>', 'the digest you reviewed (agentgw mcp tools --server shows it): refused if the server lists another definition now')
    .option('--json', 'print JSON')
    .action(act(mcpAcceptCommand));
  registerMcpCredentials(mcp);
}
