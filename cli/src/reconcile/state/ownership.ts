import type { Labels } from '@agentgw/gateway/contract';

/** The label that marks objects apply created; prune only ever deletes objects that carry it. */
export const MANAGED_LABEL = 'managed_by';
export const MANAGED_VALUE = 'agentgw';

export function isManaged(labels: Labels | undefined): boolean {
  return labels?.[MANAGED_LABEL] === MANAGED_VALUE;
}

/** Labels without the ownership marker: the marker is bookkeeping, never a difference. */
export function withoutOwnership(labels: Labels | undefined): Labels {
  const out: Labels = {};
  for (const [k, v] of Object.entries(labels ?? {})) if (k !== MANAGED_LABEL) out[k] = v;
  return out;
}

export function withOwnership(labels: Labels): Labels {
  return { ...labels, [MANAGED_LABEL]: MANAGED_VALUE };
}
