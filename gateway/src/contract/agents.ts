import { z } from 'zod';
import { AgentName, Labels, ResourceId, Timestamp } from './common.js';

/** While true, the agent's key gets 403 agent_suspended on /v1; its key, spend and traces stay as they are. */
const Suspended = z.boolean().describe('While true, the agent\'s key gets 403 agent_suspended on the gateway (default false).');

export const Agent = z
  .object({
    id: z.string(),
    name: AgentName,
    tenant_id: ResourceId,
    policy_id: ResourceId.nullable(),
    labels: Labels,
    suspended: Suspended,
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
  /** Default false. Optional so that a declarative agent without it leaves the live value alone. */
  suspended: Suspended.optional(),
});
export type CreateAgent = z.infer<typeof CreateAgent>;

export const PatchAgent = z.strictObject({
  name: AgentName.optional(),
  policy_id: ResourceId.nullable().optional(),
  labels: Labels.optional(),
  suspended: Suspended.optional(),
});
export type PatchAgent = z.infer<typeof PatchAgent>;

export const RotatedKey = z.object({ id: z.string(), api_key: z.string(), key_prefix: z.string() }).meta({ id: 'RotatedKey' });
