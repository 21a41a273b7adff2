import { CreateTenant, PatchTenant, Tenant } from '@agentgw/gateway/contract';
import { defineKind } from './define-kind.js';
import { LABELS_DOC } from './docs.js';

/** Tenants: named by `id`; the owners of policies and agents. */
export const tenantKind = defineKind({
  kind: 'tenant',
  section: 'tenants',
  description: 'A tenant of the agentgw gateway: the owner of agents and policies.',
  entity: Tenant,
  create: CreateTenant,
  update: PatchTenant,
  identity: ['id'],
  docs: {
    id: 'Tenant id: lowercase letters, digits, "_" or "-", starting with a letter or digit, at most 64 characters.',
    name: 'Display name, 1-200 characters.',
    labels: LABELS_DOC,
  },
  adminOnly: () => true,
  api: {
    list: (c) => c.listAllTenants(),
    get: (c, id) => c.getTenant(id),
    create: (c, body) => c.createTenant(body as CreateTenant),
    update: (c, id, patch) => c.updateTenant(id, patch as PatchTenant),
    delete: (c, id) => c.deleteTenant(id),
  },
});
