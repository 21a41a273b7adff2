import { connect, type ConnectionOptions } from '../services/connection.js';
import { followTraces } from '../services/follow-traces.js';
import { stopOnSignals } from '../services/stop-signal.js';
import { duration, usd } from '../ui/format-usage.js';
import { note } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { renderTraceActivity, renderTraceActivityHeader } from '../ui/render-trace-activity.js';
import { renderTrace } from '../ui/render-trace.js';
import { renderTable } from '../ui/table.js';
import { parseInteger, parseSeconds, parseTime } from './flag-values.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

interface Filters {
  tenant?: string;
  agent?: string;
}

const DEFAULT_INTERVAL_SECONDS = 2;

export async function tracesList(flags: Flags & Filters & { since?: string; limit?: string; cursor?: string }): Promise<number> {
  const query = {
    tenant_id: flags.tenant,
    agent_id: flags.agent,
    since: parseTime('--since', flags.since),
    limit: parseInteger('--limit', flags.limit, 1, 500),
    cursor: flags.cursor,
  };
  const page = await connect(flags).listTraces(query);
  renderTable(
    page.data,
    [
      { header: 'TRACE', value: (t) => t.trace_id },
      { header: 'TENANT', value: (t) => t.tenant_id },
      { header: 'AGENT', value: (t) => t.agent_id },
      { header: 'STARTED', value: (t) => t.started_at },
      { header: 'DURATION', value: (t) => duration(Math.max(0, Date.parse(t.ended_at) - Date.parse(t.started_at))) },
      { header: 'REQUESTS', value: (t) => String(t.request_count) },
      { header: 'ERRORS', value: (t) => String(t.error_count) },
      { header: 'TOKENS', value: (t) => `${t.prompt_tokens}/${t.completion_tokens}` },
      { header: 'COST', value: (t) => usd(t.cost) },
    ],
    outputMode(flags),
  );
  if (page.next_cursor) note(`More traces: agentgw traces list --cursor ${page.next_cursor} (with the same filters)`);
  return 0;
}

export async function tracesShow(traceId: string, flags: Flags): Promise<number> {
  await renderTrace(await connect(flags).getTrace(traceId), outputMode(flags));
  return 0;
}

/** Runs until SIGINT or SIGTERM (exit 0), or for --max-polls polls. */
export async function tracesTail(flags: Flags & Filters & { interval?: string; maxPolls?: string }): Promise<number> {
  const intervalMs = parseSeconds('--interval', flags.interval, DEFAULT_INTERVAL_SECONDS);
  const maxPolls = parseInteger('--max-polls', flags.maxPolls, 1);
  const client = connect(flags);
  const mode = outputMode(flags);
  const stop = stopOnSignals();
  try {
    await renderTraceActivityHeader(mode);
    const changes = followTraces(client, { tenant_id: flags.tenant, agent_id: flags.agent, intervalMs, maxPolls, signal: stop.signal });
    for await (const traces of changes) await renderTraceActivity(traces, mode);
  } finally {
    stop.dispose();
  }
  return 0;
}
