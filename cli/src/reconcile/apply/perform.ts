import { randomUUID } from 'node:crypto';
import type { Labels, PatchAgent, PatchTenant, PutPolicy } from '@agentgw/gateway/contract';
import { ignoreNotFound, type AdminClient } from '../../admin-client/admin-client.js';
import type { Change } from '../diff/change.js';
import { withOwnership } from '../state/ownership.js';
import type { AgentAttrs, PolicyAttrs, TenantAttrs } from '../state/types.js';

/** What the apply stage needs of the admin client. */
export type ApplyClient = Pick<
  AdminClient,
  'createTenant' | 'updateTenant' | 'deleteTenant' | 'putPolicy' | 'deletePolicy' | 'createAgent' | 'updateAgent' | 'deleteAgent'
>;

/** The outcome of one change; `apiKey` only for a created agent. */
export interface Performed {
  apiKey?: string;
}

/** Top-level fields an update touches (`rules.pii` -> `rules`). */
function touched(change: Change): Set<string> {
  return new Set(change.changes.map((c) => c.field.split('.')[0]));
}

/** Labels replace the whole map, so the ownership marker is written back as it was (set on create). */
function labelsFor(change: Change, labels: Labels): Labels {
  return withOwnership(labels, change.owner);
}

function pick<T extends object>(obj: T, keys: Set<string>, allowed: (keyof T)[]): Partial<T> {
  const out: Partial<T> = {};
  for (const k of allowed) if (keys.has(k as string)) out[k] = obj[k];
  return out;
}

async function tenant(client: ApplyClient, change: Change<'tenant'>): Promise<Performed> {
  if (change.op === 'delete') {
    await ignoreNotFound(client.deleteTenant(change.id));
    return {};
  }
  const a = change.after as TenantAttrs;
  if (change.op === 'create') {
    await client.createTenant({ id: a.id, name: a.name, labels: labelsFor(change, a.labels) });
    return {};
  }
  const patch: PatchTenant = pick(a, touched(change), ['name']);
  if (touched(change).has('labels')) patch.labels = labelsFor(change, a.labels);
  await client.updateTenant(change.id, patch);
  return {};
}

async function policy(client: ApplyClient, change: Change<'policy'>): Promise<Performed> {
  if (change.op === 'delete') {
    await ignoreNotFound(client.deletePolicy(change.id));
    return {};
  }
  const { id, ...a } = change.after as PolicyAttrs;
  // tenant_id is immutable after create, so an update never sends it
  const body: PutPolicy =
    change.op === 'create' ? { ...a } : pick(a, touched(change), ['monthly_budget', 'daily_budget', 'allowed_models', 'rules']);
  if (change.op === 'create' || touched(change).has('labels')) body.labels = labelsFor(change, a.labels);
  await client.putPolicy(id, body);
  return {};
}

async function agent(client: ApplyClient, change: Change<'agent'>): Promise<Performed> {
  if (change.op === 'delete') {
    await ignoreNotFound(client.deleteAgent(change.serverId));
    return {};
  }
  const a = change.after as AgentAttrs;
  if (change.op === 'create') {
    // a retried POST with the same key returns the first agent instead of a second one
    const created = await client.createAgent(
      { name: a.name, tenant_id: a.tenant_id, policy_id: a.policy_id, labels: labelsFor(change, a.labels) },
      { idempotencyKey: randomUUID() },
    );
    return { apiKey: created.api_key };
  }
  const patch: PatchAgent = pick(a, touched(change), ['policy_id']);
  if (touched(change).has('labels')) patch.labels = labelsFor(change, a.labels);
  await client.updateAgent(change.serverId, patch);
  return {};
}

/** Carries out one change through the admin interface. */
export function perform(client: ApplyClient, change: Change): Promise<Performed> {
  switch (change.kind) {
    case 'tenant':
      return tenant(client, change as Change<'tenant'>);
    case 'policy':
      return policy(client, change as Change<'policy'>);
    case 'agent':
      return agent(client, change as Change<'agent'>);
  }
}
