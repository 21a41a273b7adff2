import { MANAGED_VALUE } from '../state/ownership.js';
import type { ChangeSet } from './change.js';

/**
 * The objects a plan changes whose `managed_by` label names another manager (a Terraform run, a script, a person's
 * label): applying the plan takes them over, and that manager may change them back on its next run. One warning each.
 */
export function takeoverWarnings(set: ChangeSet): string[] {
  return set.changes
    .filter((c) => c.op !== 'create' && c.owner !== null && c.owner !== MANAGED_VALUE)
    .map(
      (c) =>
        `Warning: ${c.kind} ${c.id} is managed by "${c.owner}" (labels.managed_by): this plan ${c.op === 'update' ? 'changes' : 'deletes'} it, ` +
        'and that manager may change it back; leave it out of the file, or change its label to take it over.',
    );
}
