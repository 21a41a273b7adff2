import type { Command } from 'commander';
import { act } from '../run-action.js';
import { AgentNames, findAgent } from '../services/agent-ref.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { followTraces } from '../services/follow-traces.js';
import { stopOnSignals } from '../services/stop-signal.js';
import { duration, usd } from '../ui/format-usage.js';
import { renderDocument } from '../ui/document.js';
import { note, say } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { renderTraceActivity, renderTraceActivityHeader } from '../ui/render-trace-activity.js';
import { renderTrace } from '../ui/render-trace.js';
import { renderTable } from '../ui/table.js';
import type { AdminClient } from '../admin-client/admin-client.js';
import { isAdminApiError } from '../admin-client/errors.js';
import type { TraceDetail } from '../admin-client/types.js';
import { parseInteger, parseSeconds, parseTime } from './flag-values.js';

interface Flags extends ConnectionOptions {
  json?: boolean;
}

interface Filters {
  tenant?: string;
  agent?: string;
}

const DEFAULT_INTERVAL_SECONDS = 2;
const AGENT_FLAG = ['--agent <agent>', 'only this agent: TENANT/NAME or its agt_... id'] as const;

/** The filters as the admin interface takes them; an agent that does not exist is an error, not an empty list. */
async function traceFilters(client: AdminClient, f: Filters): Promise<{ tenant_id?: string; agent_id?: string }> {
  if (!f.agent) return { tenant_id: f.tenant };
  const agent = await findAgent(client, f.agent);
  return { tenant_id: f.tenant, agent_id: agent.id };
}

export async function tracesList(flags: Flags & Filters & { since?: string; limit?: string; cursor?: string }): Promise<number> {
  const since = parseTime('--since', flags.since);
  const limit = parseInteger('--limit', flags.limit, 1, 500);
  const client = connect(flags);
  const page = await client.listTraces({ ...(await traceFilters(client, flags)), since, limit, cursor: flags.cursor });
  const mode = outputMode(flags);
  const names = new AgentNames(client, flags.tenant);
  if (mode !== 'json') await names.learn(page.data.map((t) => t.agent_id));
  renderTable(
    page.data,
    [
      { header: 'TRACE', value: (t) => t.trace_id },
      { header: 'AGENT', value: (t) => names.label(t.tenant_id, t.agent_id) },
      { header: 'STARTED', value: (t) => t.started_at },
      { header: 'DURATION', value: (t) => duration(Math.max(0, Date.parse(t.ended_at) - Date.parse(t.started_at))) },
      { header: 'REQUESTS', value: (t) => String(t.request_count) },
      { header: 'ERRORS', value: (t) => String(t.error_count) },
      { header: 'TOKENS', value: (t) => `${t.prompt_tokens}/${t.completion_tokens}` },
      { header: 'COST', value: (t) => usd(t.cost) },
    ],
    mode,
  );
  if (page.next_cursor) note(`More traces: agentgw traces list --cursor ${page.next_cursor} (with the same filters)`);
  return 0;
}

export async function tracesShow(traceId: string, flags: Flags & { tenant?: string }): Promise<number> {
  const client = connect(flags);
  const trace = await client.getTrace(traceId);
  const mode = outputMode(flags);
  const names = new AgentNames(client, trace.tenant_id);
  if (mode !== 'json') await names.learn([trace.agent_id]);
  const deciders = mode === 'json' ? undefined : await decidersOf(client, trace);
  await renderTrace(trace, mode, process.stdout, names.label(trace.tenant_id, trace.agent_id), deciders);
  return 0;
}

/** Who decided the trace's held calls (approval id -> name); none when no call was held or approvals cannot be listed. */
async function decidersOf(client: AdminClient, trace: TraceDetail): Promise<Map<string, string>> {
  if (!trace.requests.some((r) => (r.tool_calls ?? []).some((c) => c.approval_id))) return new Map();
  try {
    const approvals = await client.listAllApprovals({ trace_id: trace.trace_id, tenant_id: trace.tenant_id });
    return new Map(approvals.filter((a) => a.decided_by).map((a) => [a.id, a.decided_by!]));
  } catch (e) {
    if (isAdminApiError(e) && (e.status === 403 || e.status === 404)) return new Map();
    throw e;
  }
}

/** Stops a trace: every later request of it, on every endpoint and node, is 403 trace_stopped. */
export async function tracesStop(traceId: string, flags: Flags & { reason?: string; tenant?: string }): Promise<number> {
  const stop = await connect(flags).stopTrace(traceId, flags.reason ? { reason: flags.reason } : {}, { tenant_id: flags.tenant });
  if (flags.json) renderDocument(stop, 'json');
  else say(`Stopped trace ${stop.trace_id} of tenant ${stop.tenant_id} at ${stop.stopped.at}: every later request of it gets 403 trace_stopped.`);
  return 0;
}

/** Runs until SIGINT or SIGTERM (exit 0), or for --max-polls polls. */
export async function tracesTail(flags: Flags & Filters & { interval?: string; maxPolls?: string }): Promise<number> {
  const intervalMs = parseSeconds('--interval', flags.interval, DEFAULT_INTERVAL_SECONDS);
  const maxPolls = parseInteger('--max-polls', flags.maxPolls, 1);
  const client = connect(flags);
  const filters = await traceFilters(client, flags);
  const mode = outputMode(flags);
  const names = new AgentNames(client, flags.tenant);
  const stop = stopOnSignals();
  try {
    await renderTraceActivityHeader(mode);
    const changes = followTraces(client, { ...filters, intervalMs, maxPolls, signal: stop.signal });
    for await (const traces of changes) {
      if (mode !== 'json') await names.learn(traces.map((t) => t.agent_id));
      await renderTraceActivity(traces, mode, process.stdout, (t) => names.label(t.tenant_id, t.agent_id));
    }
  } finally {
    stop.dispose();
  }
  return 0;
}

export function registerTraces(program: Command): void {
  const traces = program.command('traces').description('what agents did: traces of requests');
  traces
    .command('list')
    .description('traces, newest first')
    .option('--tenant <id>', 'only this tenant')
    .option(...AGENT_FLAG)
    .option('--since <time>', 'RFC 3339 time, e.g. 2026-01-31T00:00:00Z')
    .option('--limit <n>', 'how many (1-500, default 50)')
    .option('--cursor <cursor>', 'the next page, as printed after a full page')
    .option('--json', 'print JSON')
    .action(act(tracesList));
  traces
    .command('show <trace-id>')
    .alias('get')
    .description('the steps of one trace on a timeline, with totals; a step in flight reads running, its latency so far')
    .option('--json', 'print the trace document')
    .action(act(tracesShow));
  traces
    .command('stop <trace-id>')
    .description('refuse every later request of a trace (final: the agent starts a new trace)')
    .option('--reason <text>', 'why, for the people reading the trace')
    .option('--tenant <id>', 'whose trace, when two tenants share the trace id')
    .option('--json', 'print JSON')
    .action(act(tracesStop));
  traces
    .command('tail')
    .description('print traces as they start or change, until Ctrl-C')
    .option('--tenant <id>', 'only this tenant')
    .option(...AGENT_FLAG)
    .option('--interval <seconds>', 'seconds between polls (default 2)')
    .option('--max-polls <n>', 'stop after N polls (for scripts)')
    .option('--json', 'print one JSON object per line')
    .action(act(tracesTail));
}
