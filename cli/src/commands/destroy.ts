import type { Command } from 'commander';
import { act } from '../run-action.js';
import { runChanges, type RunFlags } from '../services/run-changes.js';
import { addDesiredFlags } from './desired-flags.js';

/** `agentgw destroy`: deletes every object the file names that exists, agents first and tenants last. */
export function registerDestroy(program: Command): void {
  addDesiredFlags(program.command('destroy').description('delete every object the file names'))
    .option('--auto-approve', 'destroy without asking')
    .option('--json', 'print the plan and results as JSON')
    .action(act((flags: Omit<RunFlags, 'keysOut' | 'prune'>) => runChanges('destroy', flags)));
}
