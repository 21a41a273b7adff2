import { connect, type ConnectionOptions } from '../services/connection.js';
import { renderDocument } from '../ui/document.js';
import { outputMode } from '../ui/output-mode.js';
import { renderTable } from '../ui/table.js';
import { parseNullableNumber } from './flag-values.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

const usd = (n: number) => `$${n.toFixed(6).replace(/0+$/, '').replace(/\.$/, '')}`;

export async function tracesList(flags: Flags & { tenant?: string; agent?: string; since?: string; limit?: string }): Promise<number> {
  const limit = parseNullableNumber('--limit', flags.limit) ?? undefined;
  const page = await connect(flags).listTraces({ tenant_id: flags.tenant, agent_id: flags.agent, since: flags.since, limit });
  renderTable(
    page.data,
    [
      { header: 'TRACE', value: (t) => t.trace_id },
      { header: 'TENANT', value: (t) => t.tenant_id },
      { header: 'AGENT', value: (t) => t.agent_id },
      { header: 'STARTED', value: (t) => t.started_at },
      { header: 'REQUESTS', value: (t) => String(t.request_count) },
      { header: 'ERRORS', value: (t) => String(t.error_count) },
      { header: 'TOKENS', value: (t) => String(t.prompt_tokens + t.completion_tokens) },
      { header: 'COST', value: (t) => usd(t.cost) },
    ],
    outputMode(flags),
  );
  return 0;
}

export async function tracesGet(traceId: string, flags: Flags): Promise<number> {
  renderDocument(await connect(flags).getTrace(traceId), outputMode(flags));
  return 0;
}

export async function usageCommand(flags: Flags & { groupBy?: 'agent' | 'tenant' | 'model' | 'day'; from?: string; to?: string; tenant?: string }): Promise<number> {
  const rows = await connect(flags).usage({ group_by: flags.groupBy, from: flags.from, to: flags.to, tenant_id: flags.tenant });
  renderTable(
    rows,
    [
      { header: (flags.groupBy ?? 'agent').toUpperCase(), value: (r) => r.key },
      { header: 'REQUESTS', value: (r) => String(r.requests) },
      { header: 'PROMPT', value: (r) => String(r.prompt_tokens) },
      { header: 'COMPLETION', value: (r) => String(r.completion_tokens) },
      { header: 'COST', value: (r) => usd(r.cost) },
    ],
    outputMode(flags),
  );
  return 0;
}
