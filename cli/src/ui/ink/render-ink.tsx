import { renderToString } from 'ink';
import type { ChangeSet } from '../../reconcile/diff/change.js';
import type { Line } from '../lines.js';
import { LinesView } from './line-view.js';
import { PlanView } from './plan-view.js';

export function inkPlanText(changeSet: ChangeSet, columns = 100): string {
  return renderToString(<PlanView changeSet={changeSet} />, { columns }) + '\n';
}

export function inkLinesText(lines: Line[], columns = 100): string {
  return renderToString(<LinesView lines={lines} />, { columns }) + '\n';
}
