import type { ChangeSet } from '../reconcile/diff/change.js';
import { reconcile } from '../reconcile/engine.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { loadDesired, type DesiredOptions } from '../services/desired-state.js';
import { outputMode } from '../ui/output-mode.js';
import { renderPlan } from '../ui/render-plan.js';

export interface PlanFlags extends ConnectionOptions, DesiredOptions {
  detailedExitcode?: boolean;
  json?: boolean;
  prune?: boolean;
}

/** Exit 0: nothing to do (or --detailed-exitcode not given); 2: changes with --detailed-exitcode. */
export async function planCommand(flags: PlanFlags): Promise<number> {
  const desired = await loadDesired(flags, 'plan');
  const client = connect(flags);
  let changeSet: ChangeSet | undefined;
  for await (const e of reconcile(client, desired, { mode: 'sync', prune: flags.prune, dry: true })) {
    if (e.type === 'plan') changeSet = e.changeSet;
  }
  if (!changeSet) throw new Error('the engine produced no plan');
  await renderPlan(changeSet, outputMode(flags));
  return flags.detailedExitcode && changeSet.changes.length > 0 ? 2 : 0;
}
