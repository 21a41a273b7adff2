import fc from 'fast-check';
import { DeclarativeFile, mergePolicy } from '@agentgw/gateway/contract';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { diffStates } from '../reconcile/diff/diff.js';
import { exportDeclarative } from '../reconcile/export/export-state.js';
import { desiredState, liveState, type LiveObjects } from '../reconcile/state/normalise.js';
import { kindFlags } from '../commands/kind-flags.js';
import type { Attrs, Field, FieldShape, KindDescriptor } from './descriptor.js';
import { findField } from './define-kind.js';
import { KINDS, KIND_LIST } from './index.js';

const keys = (schema: z.ZodObject) => Object.keys(schema.shape);

/** Unwraps optional/nullable/default down to an object schema's shape, if it is one. */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> | null {
  let s = schema as z.ZodType & { unwrap?: () => z.ZodType; shape?: Record<string, z.ZodType> };
  while (s.unwrap && s.type !== 'object') s = s.unwrap() as typeof s;
  return s.type === 'object' ? (s.shape ?? null) : null;
}

/** Every dotted path of an object schema, nested objects included. */
function paths(shape: Record<string, z.ZodType>, prefix = ''): string[] {
  return Object.entries(shape).flatMap(([name, s]) => {
    const path = prefix ? `${prefix}.${name}` : name;
    const inner = objectShape(s);
    return [path, ...(inner ? paths(inner, path) : [])];
  });
}

/** Every dotted path of the fields, into nested objects and the objects of lists (a policy's tool_rules). */
function fieldPaths(fields: readonly Field[]): string[] {
  const inner = (shape: FieldShape): string[] =>
    shape.type === 'object' ? fieldPaths(shape.fields).map((p) => p.replace(/\[\]/g, '')) : shape.type === 'list' ? inner(shape.item) : [];
  return fields.flatMap((f) => [f.path, ...inner(f.shape)]);
}

const section = (d: KindDescriptor) => (DeclarativeFile.shape[d.section] as z.ZodType & { unwrap(): z.ZodArray }).unwrap().element as z.ZodObject;

describe('kind descriptors', () => {
  it('the registry has one descriptor per section of the declarative file', () => {
    expect(KIND_LIST.map((d) => d.section).sort()).toEqual(Object.keys(DeclarativeFile.shape).filter((k) => k !== 'version').sort());
  });

  describe.each(KIND_LIST.map((d) => [d.kind, d] as const))('%s', (_, d) => {
    it('holds every field of the contract: the file entry\'s (nested ones too), and every field the server answers', () => {
      // a field added to the contract appears here without any code of its own
      expect(fieldPaths(d.fields).sort()).toEqual(paths(section(d).shape as Record<string, z.ZodType>).sort());
      for (const name of keys(d.schemas.entity)) expect([...d.fields.map((f) => f.name), ...d.readOnly], name).toContain(name);
      for (const name of keys(d.schemas.created)) expect([...d.fields.map((f) => f.name), ...d.readOnly, ...d.secrets], name).toContain(name);
      // what the requests carry is what the file can say
      for (const name of [...keys(d.schemas.create), ...keys(d.schemas.update)]) expect(d.fields.map((f) => f.name), name).toContain(name);
    });

    it('knows the default of every optional field, so that a field left out never shows as a change', () => {
      const walk = (fields: readonly Field[]): string[] =>
        fields.flatMap((f) => [...(f.optional && !f.identity && f.default === undefined ? [f.path] : []), ...(f.shape.type === 'object' ? walk(f.shape.fields) : [])]);
      expect(walk(d.fields)).toEqual([]);
    });

    it('names its identity, references and read-only fields from the contract', () => {
      for (const name of d.identity) expect(findField(d.fields, name)?.identity, name).toBe(true);
      for (const f of d.fields.filter((x) => x.references)) expect(Object.keys(KINDS)).toContain(f.references);
      for (const name of d.serverFields) expect(d.readOnly).toContain(name);
      expect(d.readOnly.filter((f) => d.fields.some((x) => x.name === f))).toEqual([]);
    });

    it('describes every field', () => {
      for (const path of fieldPaths(d.fields)) expect(d.describe(path), path).toMatch(/\S/);
      for (const path of Object.keys(d.docs)) expect([...fieldPaths(d.fields), ...d.readOnly, ...d.secrets], `${d.kind} docs`).toContain(path);
    });
  });

  it('reads the facts the contract states', () => {
    expect(KINDS.tenant.identity).toEqual(['id']);
    expect(KINDS.policy.identity).toEqual(['id']);
    expect(KINDS.agent.identity).toEqual(['tenant_id', 'name']);
    expect(KINDS.agent.secrets).toEqual(['api_key']);
    expect(KINDS.agent.fields.filter((f) => f.references).map((f) => [f.name, f.references])).toEqual([
      ['tenant_id', 'tenant'],
      ['policy_id', 'policy'],
    ]);
    expect(KINDS.policy.fields.filter((f) => f.references).map((f) => [f.name, f.references])).toEqual([['tenant_id', 'tenant']]);
    expect(KINDS.policy.fields.filter((f) => f.immutable).map((f) => f.name).sort()).toEqual(['id', 'tenant_id']);
    const { id: _id, ...policyDefaults } = { id: '', ...mergePolicy(null, {}) };
    expect(KINDS.policy.defaults).toEqual(policyDefaults);
    expect(KINDS.tenant.readOnly).toEqual(expect.arrayContaining(['created_at', 'updated_at']));
    expect(KINDS.agent.serverFields).toEqual(['id', 'key_prefix']);
  });

  it('gives every field the create request carries a flag (a policy\'s rules one each)', () => {
    const leaves = (fields: readonly Field[]): string[] =>
      fields.flatMap((f) => (f.shape.type === 'object' && !f.nullable ? leaves(f.shape.fields) : [f.path]));
    for (const d of KIND_LIST) {
      const positional = d.identity.includes('id') ? ['id'] : [];
      const flagged = kindFlags(d, positional).map((k) => k.field.path);
      expect(flagged.sort(), d.kind).toEqual(leaves(d.fields.filter((f) => f.onCreate && !positional.includes(f.name))).sort());
    }
  });
});

/** Values of a field's shape, as the server could hold them. */
function arbitrary(shape: FieldShape, nullable: boolean): fc.Arbitrary<unknown> {
  const word = fc.constantFrom('a', 'b', 'c', 'acme', 'x-1', 'zeta');
  let a: fc.Arbitrary<unknown>;
  switch (shape.type) {
    case 'string':
      a = word;
      break;
    case 'number':
      a = fc.integer({ min: 1, max: 10_000 });
      break;
    case 'boolean':
      a = fc.boolean();
      break;
    case 'enum':
      a = fc.constantFrom(...shape.values);
      break;
    case 'list':
      a = shape.item.type === 'enum' ? fc.subarray([...shape.item.values]) : fc.uniqueArray(word, { maxLength: 3 });
      break;
    case 'map':
      a = fc.dictionary(word, word, { maxKeys: 3 });
      break;
    case 'object':
      a = fc.record(Object.fromEntries(shape.fields.map((f) => [f.name, arbitrary(f.shape, f.nullable)])));
      break;
  }
  return nullable ? fc.option(a, { nil: null }) : a;
}

function entity(d: KindDescriptor): fc.Arbitrary<Attrs> {
  const fields = Object.fromEntries(d.fields.filter((f) => !f.references || f.identity).map((f) => [f.name, arbitrary(f.shape, f.nullable)]));
  return fc.record(fields).map((o) => ({ ...o, ...Object.fromEntries(d.readOnly.map((r) => [r, r === 'id' ? `srv_${String(o.name)}` : 'x'])) }));
}

describe('normalise, diff and export read the descriptors', () => {
  it('any live state, exported and planned back, plans no changes', () => {
    const unique = (d: KindDescriptor, by: string) => fc.uniqueArray(entity(d), { selector: (o) => o[by], minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(unique(KINDS.tenant, 'id'), unique(KINDS.policy, 'id'), unique(KINDS.agent, 'name'), (tenants, policies, agents) => {
        const owner = (i: number) => String(tenants[i % tenants.length].id);
        const live: LiveObjects = {
          tenants,
          policies: policies.map((p, i) => ({ ...p, tenant_id: i === 0 ? null : owner(i) })),
          agents: agents.map((a, i) => ({ ...a, tenant_id: owner(i), policy_id: String(policies[i % policies.length].id) })),
          routes: [],
        };
        const exported = exportDeclarative(live);
        expect(diffStates(desiredState(exported), liveState(live), { mode: 'sync', prune: true })).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});

describe('a policy\'s tool_rules in the declarative file', () => {
  const rules = [
    { tools: ['Bash'], when: { command: 'rm *', '/edits/0/file_path': ['/etc/*', 're:^/root/'] }, action: 'deny', reason: 'destructive' },
    { tools: ['Read'], action: 'allow' },
  ];
  const file = (toolRules: unknown) => DeclarativeFile.parse({ version: 1, policies: [{ id: 'guard', tool_rules: toolRules }] });
  const live = (toolRules: unknown): LiveObjects => ({
    tenants: [],
    policies: [{ ...mergePolicy(null, {}), id: 'guard', tool_rules: toolRules, labels: { managed_by: 'agentgw' } } as Attrs],
    agents: [],
    routes: [],
  });

  it('plans nothing against the rules the server stores, and an edited pattern or order as a change', () => {
    expect(diffStates(desiredState(file(rules)), liveState(live(rules)), { mode: 'sync', prune: false })).toEqual([]);
    const edited = structuredClone(rules);
    edited[0]!.when!.command = 'rm -rf *';
    const changes = diffStates(desiredState(file(edited)), liveState(live(rules)), { mode: 'sync', prune: false });
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ op: 'update', kind: 'policy', id: 'guard' });
    expect(diffStates(desiredState(file([...rules].reverse())), liveState(live(rules)), { mode: 'sync', prune: false })).toHaveLength(1);
    expect(diffStates(desiredState(file(null)), liveState(live(rules)), { mode: 'sync', prune: false })).toHaveLength(1);
  });

  it('refuses a rule the server would refuse, naming the rule and field', () => {
    expect(() => file([{ tools: ['Bash'], when: { command: 're:(?=x)' }, action: 'deny' }])).toThrow(/linear-time engine/);
    expect(() => file([{ tools: [], action: 'deny' }])).toThrow();
  });

  it('is a JSON flag on the command line', () => {
    const flag = kindFlags(KINDS.policy).find((k) => k.field.name === 'tool_rules');
    expect(flag?.name).toBe('tool-rules');
  });
});
