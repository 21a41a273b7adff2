import { z } from 'zod';
import { ResourceId, Timestamp } from './common.js';

export const ROLES = ['admin', 'tenant_admin', 'viewer'] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;

export const ROLE_PERMISSIONS: Record<Role, string[]> = {
  admin: ['read:*', 'write:*', 'write:global_policies', 'write:maintenance', 'write:admin_keys', 'write:tenants'],
  tenant_admin: ['read:own_tenant', 'write:agents', 'write:policies', 'read:traces', 'write:traces', 'read:usage'],
  viewer: ['read:*'],
};

export const AdminKey = z
  .object({
    id: z.string(),
    name: z.string(),
    role: Role,
    tenant_id: ResourceId.nullable(),
    key_prefix: z.string(),
    created_at: Timestamp,
  })
  .meta({ id: 'AdminKey' });
export type AdminKey = z.infer<typeof AdminKey>;

export const AdminKeyWithSecret = AdminKey.extend({ api_key: z.string() }).meta({ id: 'AdminKeyWithKey' });

export const CreateAdminKey = z
  .strictObject({
    name: z.string().min(1).max(200),
    role: Role,
    tenant_id: ResourceId.nullable().optional(),
  })
  .refine((k) => !(k.role === 'tenant_admin' && !k.tenant_id), {
    message: 'a tenant_admin key needs a tenant_id',
    path: ['tenant_id'],
  })
  .refine((k) => !(k.role === 'admin' && k.tenant_id), {
    message: 'an admin key is not tenant-scoped; use tenant_admin or viewer with a tenant_id',
    path: ['tenant_id'],
  });
export type CreateAdminKey = z.infer<typeof CreateAdminKey>;
