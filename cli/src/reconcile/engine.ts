import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { applyChanges } from './apply/apply.js';
import type { ApplyEvent, ApplyResult } from './apply/events.js';
import type { ApplyClient } from './apply/perform.js';
import { summarise, type ChangeSet } from './diff/change.js';
import { diffStates, type DiffOptions } from './diff/diff.js';
import { PlanError } from './diff/plan-error.js';
import { referenceProblems } from './diff/references.js';
import { dumpLive, type DumpClient } from './dump/dump.js';
import { orderChanges } from './order.js';
import { desiredState, liveState } from './state/normalise.js';

export type ReconcileClient = DumpClient & ApplyClient;
export type PlanOptions = DiffOptions;

/**
 * file -> desired; live -> current; check references; diff -> change set; order.
 * A plan that apply could not carry out (a reference to nothing, an immutable field changed) is a PlanError.
 */
export async function planChanges(client: DumpClient, desired: DeclarativeFile, opts: PlanOptions): Promise<ChangeSet> {
  const want = desiredState(desired);
  const have = liveState(await dumpLive(client));
  if (opts.mode === 'sync') {
    const problems = await referenceProblems(client, want, have);
    if (problems.length > 0) throw new PlanError(problems);
  }
  const changes = orderChanges(diffStates(want, have, opts));
  return { changes, summary: summarise(changes) };
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
