import { KINDS, KIND_LIST } from '../../kinds/index.js';
import type { KindClient } from '../../kinds/descriptor.js';
import { referenceFields } from '../../kinds/values.js';
import type { State } from '../state/types.js';
import type { PlanProblem } from './plan-error.js';

/**
 * References that neither the desired state nor the gateway can satisfy: apply would stop there, so plan says so first.
 * An id missing from the listings is looked up once more (a tenant-scoped key lists its tenant's objects, not global ones).
 */
export async function referenceProblems(client: KindClient, desired: State, live: State): Promise<PlanProblem[]> {
  const problems: PlanProblem[] = [];
  const found = new Map<string, Promise<boolean>>();
  for (const d of KIND_LIST) {
    for (const obj of desired[d.kind].values()) {
      for (const f of referenceFields(d)) {
        const target = KINDS[f.references!];
        const id = obj.attrs[f.name];
        if (typeof id !== 'string' || desired[target.kind].has(id) || live[target.kind].has(id)) continue;
        const key = `${target.kind}:${id}`;
        if (!found.has(key)) found.set(key, target.api.find(client, id).then((o) => o !== null));
        if (await found.get(key)!) continue;
        problems.push({
          message: `${d.kind} "${obj.id}": ${f.name} names ${target.kind} "${id}", which neither the file nor the gateway has`,
          site: { kind: d.kind, id: obj.id, field: f.name },
        });
      }
    }
  }
  return problems;
}
