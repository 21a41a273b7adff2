import { z } from 'zod';
import { AgentName, Labels, ResourceId, Timestamp } from './common.js';

export const Agent = z
  .object({
    id: z.string(),
    name: AgentName,
    tenant_id: ResourceId,
    policy_id: ResourceId.nullable(),
    labels: Labels,
    key_prefix: z.string().describe('The first characters of the API key, to recognise it; never the key.'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Agent' });
export type Agent = z.infer<typeof Agent>;

export const AgentWithKey = Agent.extend({
  api_key: z.string().describe('The agent API key. Shown in this response only; the server keeps a hash.'),
}).meta({ id: 'AgentWithKey' });

export const Spend = z.object({
  day: z.number(),
  month: z.number(),
  daily_limit: z.number().nullable(),
  monthly_limit: z.number().nullable(),
  day_resets_at: z.string(),
  month_resets_at: z.string(),
});
export type Spend = z.infer<typeof Spend>;

export const AgentWithSpend = Agent.extend({ spend: Spend }).meta({ id: 'AgentWithSpend' });

export const CreateAgent = z.strictObject({
  name: AgentName,
  tenant_id: ResourceId,
  policy_id: ResourceId.nullable().optional(),
  labels: Labels.optional(),
});
export type CreateAgent = z.infer<typeof CreateAgent>;

export const PatchAgent = z.strictObject({
  name: AgentName.optional(),
  policy_id: ResourceId.nullable().optional(),
  labels: Labels.optional(),
});
export type PatchAgent = z.infer<typeof PatchAgent>;

export const RotatedKey = z.object({ id: z.string(), api_key: z.string(), key_prefix: z.string() }).meta({ id: 'RotatedKey' });
