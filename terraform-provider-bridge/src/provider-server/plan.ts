import { isDeepStrictEqual } from 'node:util';
import type { ResourceSpec } from '../schema/resource-specs.js';
import type { TfSchema } from '../schema/terraform-schema-types.js';
import { UNKNOWN, type TfObject } from './dynamic-value.js';

export interface PlannedChange {
  planned: TfObject | null;
  /** Attributes whose change replaces the object. */
  requiresReplace: string[];
}

/**
 * PlanResourceChange for every resource type: the proposed state, with server-assigned attributes unknown
 * on create (and on replace) and kept from the prior state on update.
 */
export function planChange(schema: TfSchema, spec: ResourceSpec, prior: TfObject | null, proposed: TfObject | null): PlannedChange {
  if (proposed === null) return { planned: null, requiresReplace: [] };
  const requiresReplace = prior ? spec.replaceOn.filter((k) => !isDeepStrictEqual(prior[k], proposed[k])) : [];
  const fresh = prior === null || requiresReplace.length > 0;
  const planned: TfObject = { ...proposed };
  for (const [name, attr] of Object.entries(schema.block.attributes)) {
    if (!attr.computed || attr.optional) continue;
    planned[name] = fresh ? UNKNOWN : (prior![name] ?? null);
  }
  return { planned, requiresReplace };
}
