import { planChanges } from '../reconcile/engine.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { loadDesired, type DesiredOptions } from '../services/desired-state.js';
import { outputMode } from '../ui/output-mode.js';
import { requireApproval, runChanges, type RunFlags } from './run-changes.js';

export interface ApplyFlags extends ConnectionOptions, DesiredOptions, RunFlags {
  prune?: boolean;
  json?: boolean;
}

export async function applyCommand(flags: ApplyFlags): Promise<number> {
  const mode = outputMode(flags);
  requireApproval('apply', flags, mode);
  const desired = await loadDesired(flags, 'apply');
  const client = connect(flags);
  const changeSet = await planChanges(client, desired, { mode: 'sync', prune: flags.prune });
  return runChanges(client, changeSet, flags, mode, 'Apply');
}
