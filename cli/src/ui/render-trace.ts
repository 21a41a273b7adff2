import type { TraceDetail } from '../admin-client/types.js';
import { jsonText } from './json.js';
import type { OutputMode } from './output-mode.js';
import { plainText } from './plain.js';
import { traceTimelineLines, type TimelineOptions } from './trace-timeline.js';

/** Writes one trace: a coloured timeline on a terminal, the same lines as plain text elsewhere, or the API document. */
export async function renderTrace(
  trace: TraceDetail,
  mode: OutputMode,
  out: NodeJS.WritableStream & { columns?: number } = process.stdout,
  agentName?: string,
  deciders?: ReadonlyMap<string, string>,
): Promise<void> {
  if (mode === 'ink') {
    // ink costs a few hundred ms to load: only terminals pay for it
    const { inkTraceText } = await import('./ink/render-ink.js');
    out.write(inkTraceText(trace, { ...(out.columns ? { columns: out.columns } : {}), agentName, deciders }));
    return;
  }
  out.write(traceText(trace, mode, { agentName, deciders }));
}

export function traceText(trace: TraceDetail, mode: 'plain' | 'json', options?: TimelineOptions): string {
  return mode === 'json' ? jsonText(trace) : plainText(traceTimelineLines(trace, options));
}
