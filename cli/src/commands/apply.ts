import type { Command } from 'commander';
import { act } from '../run-action.js';
import { runChanges, type RunFlags } from '../services/run-changes.js';
import { addDesiredFlags } from './desired-flags.js';

/** `agentgw apply`: shows the plan, then makes the gateway match the desired state once approved. */
export function registerApply(program: Command): void {
  addDesiredFlags(program.command('apply').description('make the gateway match the file'))
    .option('--auto-approve', 'apply without asking')
    .option('--prune', 'delete managed objects (label managed_by: agentgw) the file no longer names; with a tenant_admin key, never tenants, routes or global policies')
    .option('--keys-out <file>', "write new agents' keys to FILE (mode 0600) instead of printing them")
    .option('--json', 'print the plan and results as JSON')
    .action(act((flags: RunFlags) => runChanges('apply', flags)));
}
