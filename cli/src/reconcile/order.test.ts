import { describe, expect, it } from 'vitest';
import type { Change } from './diff/change.js';
import { DEPENDS_ON, kindOrder, orderChanges } from './order.js';

const c = (op: Change['op'], kind: Change['kind'], id: string): Change => ({
  op,
  kind,
  id,
  before: null,
  after: null,
  changes: [],
  owner: 'agentgw',
  serverId: '',
});

describe('order', () => {
  it('derives tenants -> policies -> agents from the dependency table', () => {
    expect(kindOrder()).toEqual(['tenant', 'policy', 'agent', 'route']);
    expect(kindOrder({ agent: ['policy'], policy: ['tenant'], tenant: [], route: [] })).toEqual(['tenant', 'policy', 'agent', 'route']);
    expect(DEPENDS_ON.route).toEqual([]);
    expect(DEPENDS_ON.agent).toEqual(['tenant', 'policy']);
  });

  it('refuses a cycle', () => {
    expect(() => kindOrder({ tenant: ['agent'], policy: ['tenant'], agent: ['policy'], route: [] })).toThrow(/cycle/);
  });

  it('runs creates and updates forward, then deletes in reverse', () => {
    const ordered = orderChanges([
      c('delete', 'tenant', 'old'),
      c('create', 'agent', 'acme/b'),
      c('delete', 'agent', 'acme/z'),
      c('update', 'policy', 'p'),
      c('create', 'tenant', 'acme'),
      c('delete', 'policy', 'q'),
      c('create', 'agent', 'acme/a'),
    ]);
    expect(ordered.map((x) => `${x.op} ${x.kind} ${x.id}`)).toEqual([
      'create tenant acme',
      'update policy p',
      'create agent acme/a',
      'create agent acme/b',
      'delete agent acme/z',
      'delete policy q',
      'delete tenant old',
    ]);
  });
});
