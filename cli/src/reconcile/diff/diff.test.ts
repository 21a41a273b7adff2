import type { DeclarativeFile, Policy } from '@agentgw/gateway/contract';
import { DEFAULT_RULES } from '@agentgw/gateway/contract';
import { describe, expect, it } from 'vitest';
import { desiredState, liveState, type LiveObjects } from '../state/normalise.js';
import { diffStates } from './diff.js';
import { fieldChanges } from './field-changes.js';

const T = '2026-01-01T00:00:00Z';
const file = (f: Partial<DeclarativeFile>): DeclarativeFile => ({ version: 1, tenants: [], policies: [], agents: [], routes: [], ...f });
const live = (l: Partial<LiveObjects>): LiveObjects => ({ tenants: [], policies: [], agents: [], routes: [], ...l });
const tenant = (id: string, labels: Record<string, string> = { managed_by: 'agentgw' }) => ({ id, name: id.toUpperCase(), labels, created_at: T, updated_at: T });
const policy = (id: string, over: Partial<Policy> = {}): Policy => ({
  id,
  tenant_id: 'acme',
  monthly_budget: null,
  daily_budget: null,
  allowed_models: null,
  rules: DEFAULT_RULES,
  labels: { managed_by: 'agentgw' },
  created_at: T,
  updated_at: T,
  ...over,
});
const agent = (name: string, over: Partial<LiveObjects['agents'][number]> = {}) => ({
  id: `agt_${name}`,
  name,
  tenant_id: 'acme',
  policy_id: null,
  labels: { managed_by: 'agentgw' },
  key_prefix: 'agk_x',
  created_at: T,
  updated_at: T,
  ...over,
});

const diff = (f: Partial<DeclarativeFile>, l: Partial<LiveObjects>, opts: Parameters<typeof diffStates>[2] = { mode: 'sync' }) =>
  diffStates(desiredState(file(f)), liveState(live(l)), opts);

describe('fieldChanges', () => {
  it('walks nested objects and compares arrays whole', () => {
    expect(fieldChanges({ a: 1, r: { pii: 'off', t: [1] }, l: {} }, { a: 2, r: { pii: 'block', t: [1, 2] }, l: { x: 'y' } })).toEqual([
      { field: 'a', old: 1, new: 2 },
      { field: 'r.pii', old: 'off', new: 'block' },
      { field: 'r.t', old: [1], new: [1, 2] },
      { field: 'l.x', new: 'y' },
    ]);
  });
});

describe('diffStates', () => {
  it('creates what is missing, showing only the fields that differ from the defaults', () => {
    const changes = diff({ tenants: [{ id: 'acme', name: 'Acme' }], policies: [{ id: 'p', tenant_id: 'acme', rules: { pii: 'block' } }] }, {});
    expect(changes.map((c) => [c.op, c.kind, c.id])).toEqual([
      ['create', 'tenant', 'acme'],
      ['create', 'policy', 'p'],
    ]);
    expect(changes[0].changes).toEqual([{ field: 'name', new: 'Acme' }]);
    expect(changes[1].changes).toEqual([
      { field: 'tenant_id', new: 'acme' },
      { field: 'rules.pii', new: 'block' },
    ]);
  });

  it('fills defaults before diffing, so unset fields and the ownership label never show as changes', () => {
    const changes = diff(
      {
        tenants: [{ id: 'acme', name: 'ACME' }],
        policies: [{ id: 'p', tenant_id: 'acme', rules: { pii_types: ['ssn', 'email'] } }],
        agents: [{ name: 'bot', tenant_id: 'acme' }],
      },
      {
        tenants: [tenant('acme')],
        policies: [policy('p', { rules: { ...DEFAULT_RULES, pii_types: ['email', 'ssn'] } })],
        agents: [agent('bot')],
      },
    );
    expect(changes).toEqual([]);
  });

  it('updates with field-level old -> new and keeps the live server id', () => {
    const changes = diff(
      { policies: [{ id: 'p', tenant_id: 'acme', monthly_budget: 300, labels: { team: 'b' } }], agents: [{ name: 'bot', tenant_id: 'acme', policy_id: 'p' }] },
      { policies: [policy('p', { monthly_budget: 250, labels: { team: 'a', managed_by: 'agentgw' } })], agents: [agent('bot')] },
    );
    expect(changes.map((c) => ({ op: c.op, id: c.id, changes: c.changes, serverId: c.serverId, owner: c.owner }))).toEqual([
      {
        op: 'update',
        id: 'p',
        changes: [
          { field: 'monthly_budget', old: 250, new: 300 },
          { field: 'labels.team', old: 'a', new: 'b' },
        ],
        serverId: 'p',
        owner: 'agentgw',
      },
      { op: 'update', id: 'acme/bot', changes: [{ field: 'policy_id', old: null, new: 'p' }], serverId: 'agt_bot', owner: 'agentgw' },
    ]);
  });

  it('deletes nothing without prune', () => {
    expect(diff({}, { tenants: [tenant('old')], agents: [agent('gone')] })).toEqual([]);
  });

  it('prunes only objects carrying managed_by: agentgw', () => {
    const changes = diff({}, { tenants: [tenant('old'), tenant('manual', {})], agents: [agent('gone'), agent('hand', { labels: {} })] }, { mode: 'sync', prune: true });
    expect(changes.map((c) => [c.op, c.kind, c.id])).toEqual([
      ['delete', 'tenant', 'old'],
      ['delete', 'agent', 'acme/gone'],
    ]);
  });

  it("prunes nothing another tool owns, and an update keeps that tool's marker", () => {
    const theirs = { managed_by: 'terraform' };
    expect(diff({}, { tenants: [tenant('tf', theirs)] }, { mode: 'sync', prune: true })).toEqual([]);
    const [u] = diff({ tenants: [{ id: 'tf', name: 'renamed' }] }, { tenants: [tenant('tf', theirs)] });
    expect(u).toMatchObject({ op: 'update', owner: 'terraform', changes: [{ field: 'name', old: 'TF', new: 'renamed' }] });
  });

  it('destroys what the file names and exists, managed or not', () => {
    const changes = diff(
      { tenants: [{ id: 'acme', name: 'x' }, { id: 'absent', name: 'y' }], agents: [{ name: 'hand', tenant_id: 'acme' }] },
      { tenants: [tenant('acme', {}), tenant('other')], agents: [agent('hand', { labels: {} })] },
      { mode: 'destroy' },
    );
    expect(changes.map((c) => [c.op, c.kind, c.id, c.serverId])).toEqual([
      ['delete', 'tenant', 'acme', 'acme'],
      ['delete', 'agent', 'acme/hand', 'agt_hand'],
    ]);
  });

  it("refuses to change a policy's tenant", () => {
    expect(() => diff({ policies: [{ id: 'p', tenant_id: 'globex' }] }, { policies: [policy('p')] })).toThrow(
      'policy "p" has tenant_id "acme" on the gateway but the file gives "globex"; a policy\'s tenant_id cannot change, so use a new id',
    );
  });

  it('treats a renamed agent as a new identity', () => {
    const changes = diff({ agents: [{ name: 'bot2', tenant_id: 'acme' }] }, { agents: [agent('bot')] }, { mode: 'sync', prune: true });
    expect(changes.map((c) => [c.op, c.id])).toEqual([
      ['create', 'acme/bot2'],
      ['delete', 'acme/bot'],
    ]);
  });
});
