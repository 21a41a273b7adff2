import type { Command } from 'commander';
import { act } from '../run-action.js';
import { plan } from '../services/plan.js';
import { addDesiredFlags } from './desired-flags.js';

/** `agentgw plan`: exit 0 when nothing changes (or without --detailed-exitcode), 2 when something does, 1 on error. */
export function registerPlan(program: Command): void {
  addDesiredFlags(program.command('plan').description('show what apply would change'))
    .option('--prune', 'also plan deleting managed objects the file no longer names; with a tenant_admin key, never tenants, routes or global policies')
    .option('--detailed-exitcode', 'exit 0 when nothing changes, 2 when something does, 1 on error')
    .option('--json', 'print the plan as JSON')
    .action(act(plan));
}
