import { planChanges } from '../reconcile/engine.js';
import { connect, type ConnectionOptions } from '../services/connection.js';
import { loadDesired, type DesiredOptions } from '../services/desired-state.js';
import { outputMode } from '../ui/output-mode.js';
import { requireApproval, runChanges, type RunFlags } from './run-changes.js';

export interface DestroyFlags extends ConnectionOptions, DesiredOptions, Omit<RunFlags, 'keysOut'> {
  json?: boolean;
}

/** Deletes every object the file names that exists, agents first and tenants last. */
export async function destroyCommand(flags: DestroyFlags): Promise<number> {
  const mode = outputMode(flags);
  requireApproval('destroy', flags, mode);
  const desired = await loadDesired(flags, 'destroy');
  const client = connect(flags);
  const changeSet = await planChanges(client, desired, { mode: 'destroy' });
  return runChanges(client, changeSet, flags, mode, 'Destroy');
}
