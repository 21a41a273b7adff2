import type { ChangeSet } from '../../reconcile/diff/change.js';
import { LinesView } from './line-view.js';
import { planLines } from '../lines.js';

export function PlanView({ changeSet }: { changeSet: ChangeSet }) {
  return <LinesView lines={planLines(changeSet)} />;
}
