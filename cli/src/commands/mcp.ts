import type { Command } from 'commander';
import { act } from '../run-action.js';
import type { ConnectionOptions } from '../services/connection.js';
import { mcpServers, mcpToolsOf } from '../services/mcp.js';
import { usd } from '../ui/format-usage.js';
import { note } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { renderTable } from '../ui/table.js';

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

export async function mcpToolsCommand(flags: Flags & { agent: string }): Promise<number> {
  const { agent, tools } = await mcpToolsOf(flags, flags.agent);
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

export function registerMcp(program: Command): void {
  const mcp = program.command('mcp').description('the MCP servers agents reach through the gateway at /mcp');
  mcp.command('servers').description('each upstream MCP server: transport, status and tools').option('--json', 'print JSON').action(act(mcpServersCommand));
  mcp
    .command('tools')
    .description('the tools an agent may call through /mcp, as <server>__<tool>')
    .requiredOption('--agent <agent>', 'the agent: TENANT/NAME or its agt_... id')
    .option('--json', 'print JSON')
    .action(act(mcpToolsCommand));
}
