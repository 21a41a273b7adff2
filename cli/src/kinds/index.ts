import { agentKind } from './agent.js';
import type { Kind, KindDescriptor, Section } from './descriptor.js';
import { policyKind } from './policy.js';
import { routeKind } from './route.js';
import { tenantKind } from './tenant.js';

export * from './descriptor.js';
export { defineKind, declaredSchema, findField, type KindSpec } from './define-kind.js';
export * from './values.js';

/** The registry: one descriptor per declarative kind, as decK keeps its `types/`. */
export const KINDS: Readonly<Record<Kind, KindDescriptor>> = { tenant: tenantKind, policy: policyKind, agent: agentKind, route: routeKind };

/** Every kind, in the registry's order. */
export const KIND_LIST: readonly KindDescriptor[] = Object.values(KINDS);

export function kindOfSection(section: Section): KindDescriptor {
  const d = KIND_LIST.find((k) => k.section === section);
  if (!d) throw new Error(`no kind lists its objects under "${section}"`);
  return d;
}

export function kindOfTerraformType(type: string): KindDescriptor | undefined {
  return KIND_LIST.find((k) => k.terraformType === type);
}
