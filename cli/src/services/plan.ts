import type { ChangeSet } from '../reconcile/diff/change.js';
import { takeoverWarnings } from '../reconcile/diff/takeover.js';
import { reconcile } from '../reconcile/engine.js';
import { note } from '../ui/messages.js';
import { outputMode } from '../ui/output-mode.js';
import { renderPlan } from '../ui/render-plan.js';
import { connect, type ConnectionOptions } from './connection.js';
import { loadDesired, locatePlanError, type DesiredOptions } from './desired-state.js';

export interface PlanFlags extends ConnectionOptions, DesiredOptions {
  detailedExitcode?: boolean;
  json?: boolean;
  prune?: boolean;
}

/** The plan of the desired state against the live gateway: the dry run of the path apply takes. */
export async function plan(flags: PlanFlags): Promise<number> {
  const desired = await loadDesired(flags, 'plan');
  const client = connect(flags);
  let changeSet: ChangeSet | undefined;
  try {
    for await (const e of reconcile(client, desired.content, { mode: 'sync', prune: flags.prune, dry: true })) {
      if (e.type === 'plan') changeSet = e.changeSet;
    }
  } catch (e) {
    throw locatePlanError(e, desired);
  }
  if (!changeSet) throw new Error('the engine produced no plan');
  for (const w of takeoverWarnings(changeSet)) note(w);
  await renderPlan(changeSet, outputMode(flags));
  return flags.detailedExitcode && changeSet.changes.length > 0 ? 2 : 0;
}
