import type { TraceDetail } from '../../admin-client/types.js';
import { traceTimelineLines, type TimelineOptions } from '../trace-timeline.js';
import { LinesView } from './line-view.js';

/** The steps of a trace on one time axis, coloured by status. */
export function TraceTimelineView({ trace, options }: { trace: TraceDetail; options?: TimelineOptions }) {
  return <LinesView lines={traceTimelineLines(trace, options)} />;
}
