import type { TraceSummary } from '../admin-client/types.js';
import { alignedLines, cell, type Cell } from './columns.js';
import { usd } from './format-usage.js';
import type { Line } from './lines.js';

const HEADERS = ['TRACE', 'AGENT', 'REQUESTS', 'ERRORS', 'TOKENS', 'COST', 'LAST ACTIVITY'];
/** Lines of a tail print one poll at a time: fixed widths keep them in columns (longer values push, never cut). */
const WIDTHS = [24, 20, 8, 6, 8, 10, 24];
const RIGHT = new Set([2, 3, 4, 5]);

const header = (): Cell[] => HEADERS.map((h, i) => cell(h, 'muted', RIGHT.has(i) ? 'right' : 'left'));

/** How a trace's agent is shown: `tenant/name` when the caller knows it. */
export type AgentLabel = (t: TraceSummary) => string;

const byId: AgentLabel = (t) => `${t.tenant_id}/${t.agent_id}`;

function cells(t: TraceSummary, agent: AgentLabel): Cell[] {
  return [
    cell(t.trace_id),
    cell(agent(t), 'muted'),
    cell(String(t.request_count), 'plain', 'right'),
    cell(String(t.error_count), t.error_count > 0 ? 'error' : 'plain', 'right'),
    cell(String(t.prompt_tokens + t.completion_tokens), 'plain', 'right'),
    cell(usd(t.cost), 'plain', 'right'),
    cell(t.ended_at, 'muted'),
  ];
}

export function traceActivityHeader(): Line[] {
  return alignedLines([header()], WIDTHS);
}

/** One line per trace: what it has done so far and when it last did something. */
export function traceActivityLines(traces: TraceSummary[], agent: AgentLabel = byId): Line[] {
  return alignedLines(traces.map((t) => cells(t, agent)), WIDTHS);
}
