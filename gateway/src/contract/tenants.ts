import { z } from 'zod';
import { Labels, ResourceId, Timestamp } from './common.js';

const TenantName = z.string().min(1, { message: 'must not be empty' }).max(200, { message: 'must be at most 200 characters' });

export const Tenant = z
  .object({ id: ResourceId, name: TenantName, labels: Labels, created_at: Timestamp, updated_at: Timestamp })
  .meta({ id: 'Tenant' });
export type Tenant = z.infer<typeof Tenant>;

export const CreateTenant = z.strictObject({ id: ResourceId, name: TenantName, labels: Labels.optional() });
export type CreateTenant = z.infer<typeof CreateTenant>;

export const PatchTenant = z.strictObject({ name: TenantName.optional(), labels: Labels.optional() });
export type PatchTenant = z.infer<typeof PatchTenant>;
