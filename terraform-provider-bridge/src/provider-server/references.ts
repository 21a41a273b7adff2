import { KINDS, referenceFields, type KindClient, type KindDescriptor } from '@agentgw/cli';
import { errorDiagnostic, type Diagnostic } from './diagnostics.js';
import { isUnknown, type TfObject } from './dynamic-value.js';

/**
 * Plan-time check of the ids a resource refers to: each must be planned in this run (terraform plans what
 * an object refers to before the object) or exist on the gateway, or apply would fail on it.
 */
export class ReferenceCheck {
  /** `policy:support-standard` for every object planned or created by this provider process. */
  private readonly planned = new Set<string>();
  private readonly live = new Map<string, Promise<boolean>>();

  /** Remembers an object this run will have (planned to exist, or just created). */
  note(d: KindDescriptor, state: TfObject | null): void {
    if (state && d.identity.length === 1 && typeof state[d.identity[0]] === 'string') this.planned.add(`${d.kind}:${String(state[d.identity[0]])}`);
  }

  /** Diagnostics for references to objects that neither this configuration nor the gateway has. */
  async problems(client: KindClient, d: KindDescriptor, prior: TfObject | null, proposed: TfObject): Promise<Diagnostic[]> {
    const out: Diagnostic[] = [];
    for (const f of referenceFields(d)) {
      const id = proposed[f.name];
      // unknown values refer to objects still to be created; an unchanged reference was checked when it was set
      if (typeof id !== 'string' || isUnknown(id) || (prior && prior[f.name] === id)) continue;
      const target = KINDS[f.references!];
      const key = `${target.kind}:${id}`;
      if (this.planned.has(key)) continue;
      if (!this.live.has(key)) this.live.set(key, target.api.find(client, id).then((o) => o !== null));
      if (await this.live.get(key)!) continue;
      out.push(
        errorDiagnostic(
          `Unknown ${target.kind}`,
          `${f.name} names ${target.kind} "${id}", which neither this configuration nor the gateway has. ` +
            `Refer to it as ${target.terraformType}.NAME.${target.identity[0]} (so that terraform creates it first), or fix the id.`,
          [f.name],
        ),
      );
    }
    return out;
  }
}
