import type { FastifyRequest } from 'fastify';
import { AgentgwError, type AuditActorKind, type Role } from '../contract/index.js';

/** Who is calling the admin interface. */
export interface Principal {
  id: string;
  role: Role;
  tenant_id: string | null;
  /** How the caller signed in, and its name: what audit entries say of who wrote. */
  kind: AuditActorKind;
  name: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

export function principal(req: FastifyRequest): Principal {
  return req.principal;
}

export function requireWrite(p: Principal): void {
  if (p.role === 'viewer') throw new AgentgwError('insufficient_role', 'This admin key has the viewer role, which is read-only: use a tenant_admin or admin key.');
}

export function requireAdmin(p: Principal, what: string): void {
  if (p.role !== 'admin') throw new AgentgwError('insufficient_role', `Only an admin key may ${what}: this key has the ${p.role} role.`);
}

/** A tenant-scoped key may only touch its own tenant. */
export function requireTenant(p: Principal, tenantId: string | null): void {
  if (p.tenant_id && tenantId !== p.tenant_id) {
    throw new AgentgwError(
      'tenant_forbidden',
      tenantId
        ? `This admin key is scoped to tenant ${p.tenant_id} and cannot access tenant ${tenantId}.`
        : `This admin key is scoped to tenant ${p.tenant_id} and cannot change global objects.`,
    );
  }
}

/** The tenant filter a list request runs with: a scoped key always lists its own tenant. */
export function listScope(p: Principal, requested: string | undefined): string | undefined {
  if (!p.tenant_id) return requested;
  if (requested && requested !== p.tenant_id) requireTenant(p, requested);
  return p.tenant_id;
}
