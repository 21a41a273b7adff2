import { Option, type Command } from 'commander';
import { act } from '../run-action.js';
import { AgentNames } from '../services/agent-ref.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { usd } from '../ui/format-usage.js';
import { outputMode } from '../ui/output-mode.js';
import { renderTable } from '../ui/table.js';
import { parseTime } from './flag-values.js';

export type UsageGroup = 'agent' | 'tenant' | 'model' | 'tool' | 'day' | 'hour';

interface Flags extends ConnectionOptions {
  json?: boolean;
  groupBy?: UsageGroup;
  from?: string;
  to?: string;
  tenant?: string;
}

export async function usageCommand(flags: Flags): Promise<number> {
  const groupBy = flags.groupBy ?? 'agent';
  const from = parseTime('--from', flags.from);
  const to = parseTime('--to', flags.to);
  const client = connect(flags);
  const rows = await client.usage({ group_by: groupBy, from, to, tenant_id: flags.tenant });
  const mode = outputMode(flags);
  // rows grouped by agent carry its id: people read tenant/name (JSON keeps the contract's rows)
  const names = new AgentNames(client, flags.tenant);
  const byAgent = groupBy === 'agent' && mode !== 'json';
  if (byAgent) await names.learn(rows.map((r) => r.key));
  renderTable(
    rows,
    [
      { header: groupBy.toUpperCase(), value: (r) => (byAgent ? names.nameOf(r.key) : r.key) },
      { header: 'REQUESTS', value: (r) => String(r.requests) },
      { header: 'ERRORS', value: (r) => String(r.errors) },
      { header: 'PROMPT', value: (r) => String(r.prompt_tokens) },
      { header: 'COMPLETION', value: (r) => String(r.completion_tokens) },
      { header: 'COST', value: (r) => usd(r.cost) },
    ],
    mode,
  );
  return 0;
}

export function registerUsage(program: Command): void {
  program
    .command('usage')
    .description('requests, errors (blocked or failed), tokens and cost, grouped')
    .addOption(new Option('--group-by <key>', 'group rows by').choices(['agent', 'tenant', 'model', 'tool', 'day', 'hour']).default('agent'))
    .option('--from <time>', 'RFC 3339 start')
    .option('--to <time>', 'RFC 3339 end (exclusive)')
    .option('--tenant <id>', 'only this tenant')
    .option('--json', 'print JSON')
    .action(act(usageCommand));
}
