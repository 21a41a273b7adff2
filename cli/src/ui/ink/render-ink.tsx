import { renderToString } from 'ink';
import type { TraceDetail } from '../../admin-client/types.js';
import type { ChangeSet } from '../../reconcile/diff/change.js';
import type { Line } from '../lines.js';
import { LinesView } from './line-view.js';
import { PlanView } from './plan-view.js';
import type { TimelineOptions } from '../trace-timeline.js';
import { TraceTimelineView } from './trace-timeline-view.js';

/** Static output is not laid out to the window: the terminal wraps long lines itself, as it does for plain text. */
const COLUMNS = 10_000;

export function inkPlanText(changeSet: ChangeSet): string {
  return renderToString(<PlanView changeSet={changeSet} />, { columns: COLUMNS }) + '\n';
}

export function inkLinesText(lines: Line[]): string {
  return renderToString(<LinesView lines={lines} />, { columns: COLUMNS }) + '\n';
}

export function inkTraceText(trace: TraceDetail, options?: TimelineOptions): string {
  return renderToString(<TraceTimelineView trace={trace} options={options} />, { columns: COLUMNS }) + '\n';
}
