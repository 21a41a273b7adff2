import type { TraceSummary } from '../admin-client/types.js';
import type { OutputMode } from './output-mode.js';
import { renderLines } from './render-lines.js';
import { traceActivityHeader, traceActivityLines, type AgentLabel } from './trace-activity.js';

/** The column names of a tail; JSON lines have none. */
export async function renderTraceActivityHeader(mode: OutputMode, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  if (mode !== 'json') await renderLines(traceActivityHeader(), mode, out);
}

/** New or changed traces as they arrive: aligned lines, or one compact JSON object per line with --json. */
export async function renderTraceActivity(
  traces: TraceSummary[],
  mode: OutputMode,
  out: NodeJS.WritableStream = process.stdout,
  agent?: AgentLabel,
): Promise<void> {
  if (mode === 'json') {
    out.write(traces.map((t) => JSON.stringify(t) + '\n').join(''));
    return;
  }
  await renderLines(traceActivityLines(traces, agent), mode, out);
}
