import type { Labels } from '@agentgw/gateway/contract';

/** The label that marks objects apply created; prune only ever deletes objects that carry it. */
export const MANAGED_LABEL = 'managed_by';
export const MANAGED_VALUE = 'agentgw';
/** Every kind carries its labels (and so the marker) in this field. */
export const LABELS_FIELD = 'labels';

export function ownerOf(labels: Labels | undefined): string | null {
  return labels?.[MANAGED_LABEL] ?? null;
}

export function isManaged(owner: string | null): boolean {
  return owner === MANAGED_VALUE;
}

/** Labels without the ownership marker: the marker is bookkeeping, never a difference. */
export function withoutOwnership(labels: Labels | undefined): Labels {
  const out: Labels = {};
  for (const [k, v] of Object.entries(labels ?? {})) if (k !== MANAGED_LABEL) out[k] = v;
  return out;
}

/** Labels to write: the file's plus the ownership marker the object has (or gets); null writes none. */
export function withOwnership(labels: Labels, owner: string | null = MANAGED_VALUE): Labels {
  return owner === null ? labels : { ...labels, [MANAGED_LABEL]: owner };
}
