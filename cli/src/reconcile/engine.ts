import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { applyChanges } from './apply/apply.js';
import type { ApplyEvent, ApplyResult } from './apply/events.js';
import type { ApplyClient } from './apply/perform.js';
import { summarise, type ChangeSet } from './diff/change.js';
import { diffStates, type DiffOptions } from './diff/diff.js';
import { PlanError } from './diff/plan-error.js';
import { referenceProblems } from './diff/references.js';
import type { AdminClient } from '../admin-client/admin-client.js';
import { isAdminApiError } from '../admin-client/errors.js';
import { KIND_LIST } from '../kinds/index.js';
import { dumpLive, type DumpClient } from './dump/dump.js';
import { orderChanges } from './order.js';
import { desiredState, liveState, type LiveObjects } from './state/normalise.js';
import type { State } from './state/types.js';

/** What planning needs of the admin client: the listings, and the key's role. */
export type PlanClient = DumpClient & Pick<AdminClient, 'me'>;
export type ReconcileClient = PlanClient & ApplyClient;
export type PlanOptions = Omit<DiffOptions, 'role'>;

/**
 * file -> desired; live -> current; check references; diff -> change set; order.
 * A plan that apply could not carry out (a reference to nothing, an immutable field changed, an object the key may not
 * write) is a PlanError. A tenant_admin key never plans a change to tenants, routes or global policies (see liveState).
 */
export async function planChanges(client: PlanClient, desired: DeclarativeFile, opts: PlanOptions): Promise<ChangeSet> {
  const want = desiredState(desired);
  const [key, live] = await Promise.all([client.me(), dumpLive(client)]);
  if (key.role === 'tenant_admin') await addUnlisted(client, want, live);
  const have = liveState(live, key.role);
  if (opts.mode === 'sync') {
    const problems = await referenceProblems(client, want, have);
    if (problems.length > 0) throw new PlanError(problems);
  }
  const changes = orderChanges(diffStates(want, have, { ...opts, role: key.role }));
  return { changes, summary: summarise(changes) };
}

/**
 * A tenant-scoped key lists its own tenant's objects only: a global policy the file names is looked up by its id, so that
 * naming it as it is plans nothing (and changing it is refused as a change, not as a create).
 */
async function addUnlisted(client: PlanClient, want: State, live: LiveObjects): Promise<void> {
  const listed = liveState(live);
  await Promise.all(
    KIND_LIST.flatMap((d) =>
      [...want[d.kind].values()]
        .filter((w) => d.adminOnly(w.attrs) && !listed[d.kind].has(w.id))
        .map(async (w) => {
          const found = await d.api.find(client, w.id).catch((e: unknown) => {
            // Another tenant's object: this key may not read it, nor create it (refused by the plan).
            if (isAdminApiError(e) && e.status === 403) return null;
            throw e;
          });
          if (found) live[d.section].push(found);
        }),
    ),
  );
}

/** Plan and apply as one code path: the plan event first, then one event per change (`dry` leaves the gateway alone). */
export async function* reconcile(
  client: ReconcileClient,
  desired: DeclarativeFile,
  opts: PlanOptions & { dry: boolean },
): AsyncGenerator<ApplyEvent, ApplyResult> {
  const changeSet = await planChanges(client, desired, opts);
  yield { type: 'plan', changeSet };
  return yield* applyChanges(client, changeSet, { dry: opts.dry });
}
