import { connect, type ConnectionOptions } from '../services/connection.js';
import { usd } from '../ui/format-usage.js';
import { outputMode } from '../ui/output-mode.js';
import { renderTable } from '../ui/table.js';
import { parseTime } from './flag-values.js';

export type UsageGroup = 'agent' | 'tenant' | 'model' | 'day';

interface Flags extends ConnectionOptions {
  json?: boolean;
  groupBy?: UsageGroup;
  from?: string;
  to?: string;
  tenant?: string;
}

export async function usageCommand(flags: Flags): Promise<number> {
  const groupBy = flags.groupBy ?? 'agent';
  const rows = await connect(flags).usage({
    group_by: groupBy,
    from: parseTime('--from', flags.from),
    to: parseTime('--to', flags.to),
    tenant_id: flags.tenant,
  });
  renderTable(
    rows,
    [
      { header: groupBy.toUpperCase(), value: (r) => r.key },
      { header: 'REQUESTS', value: (r) => String(r.requests) },
      { header: 'PROMPT', value: (r) => String(r.prompt_tokens) },
      { header: 'COMPLETION', value: (r) => String(r.completion_tokens) },
      { header: 'COST', value: (r) => usd(r.cost) },
    ],
    outputMode(flags),
  );
  return 0;
}
