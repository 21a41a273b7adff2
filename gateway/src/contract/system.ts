import { z } from 'zod';
import { Role } from './admin-keys.js';

export const PROVIDER_TYPES = ['openai', 'azure-openai', 'anthropic', 'gemini', 'bedrock', 'openai-compatible', 'mock'] as const;
export const ProviderType = z.enum(PROVIDER_TYPES);
export type ProviderType = z.infer<typeof ProviderType>;

export const Maintenance = z.object({ enabled: z.boolean(), message: z.string().nullable(), since: z.string().nullable() });
export type Maintenance = z.infer<typeof Maintenance>;

export const SystemConfig = z
  .object({
    version: z.string(),
    storage: z.object({ kind: z.enum(['sqlite', 'postgres']) }),
    counters: z.object({ kind: z.enum(['memory', 'redis']) }),
    providers: z.array(
      z.object({ name: z.string(), type: ProviderType, base_url: z.string().nullable(), models: z.array(z.string()), configured: z.boolean() }),
    ),
    rbac_roles: z.array(z.object({ name: Role, permissions: z.array(z.string()) })),
    maintenance: Maintenance,
  })
  .meta({ id: 'SystemConfig' });
export type SystemConfig = z.infer<typeof SystemConfig>;

export const PutMaintenance = z.strictObject({
  enabled: z.boolean(),
  message: z.string().max(500).nullable().optional(),
});
