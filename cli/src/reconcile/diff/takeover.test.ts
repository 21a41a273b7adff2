import { describe, expect, test } from 'vitest';
import { summarise, type Change, type ChangeSet } from './change.js';
import { takeoverWarnings } from './takeover.js';

function change(op: Change['op'], id: string, owner: string | null): Change {
  return { op, kind: 'policy', id, before: null, after: null, changes: [], owner, serverId: id };
}

function set(...changes: Change[]): ChangeSet {
  return { changes, summary: summarise(changes) };
}

describe('a plan that takes over objects another manager owns', () => {
  test('warns once for each object whose managed_by names another manager', () => {
    expect(takeoverWarnings(set(change('update', 'from-terraform', 'terraform'), change('update', 'ours', 'agentgw'), change('update', 'unlabelled', null)))).toEqual([
      'Warning: policy from-terraform is managed by "terraform" (labels.managed_by): this plan changes it, and that manager may change it back; leave it out of the file, or change its label to take it over.',
    ]);
  });

  test('creates and objects apply made are no takeover', () => {
    expect(takeoverWarnings(set(change('create', 'new', 'agentgw'), change('update', 'ours', 'agentgw')))).toEqual([]);
  });
});
