import { z } from 'zod';
import { Spend } from './agents.js';
import { Labels, ResourceId, Timestamp, Usd } from './common.js';

const TenantName = z.string().min(1, { message: 'must not be empty' }).max(200, { message: 'must be at most 200 characters' });

/** One pool shared by every agent of the tenant, on top of each agent's own budgets (CONTRACT "Tenant budgets"). */
const MonthlyBudget = Usd.nullable().describe('USD per calendar month (UTC) for all agents of the tenant together; null = unlimited.');
const DailyBudget = Usd.nullable().describe(
  'USD per UTC day for all agents of the tenant together; when null and monthly_budget is set, monthly_budget / days in the current month.',
);

export const Tenant = z
  .object({
    id: ResourceId,
    name: TenantName,
    labels: Labels,
    monthly_budget: MonthlyBudget,
    daily_budget: DailyBudget,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Tenant' });
export type Tenant = z.infer<typeof Tenant>;

/** GET /tenants/{id}: the tenant plus what its agents together spent, as an agent's spend. */
export const TenantWithSpend = Tenant.extend({ spend: Spend }).meta({ id: 'TenantWithSpend' });
export type TenantWithSpend = z.infer<typeof TenantWithSpend>;

export const CreateTenant = z.strictObject({
  id: ResourceId,
  name: TenantName,
  labels: Labels.optional(),
  monthly_budget: MonthlyBudget.optional(),
  daily_budget: DailyBudget.optional(),
});
export type CreateTenant = z.infer<typeof CreateTenant>;

/** A field left out keeps its value; null clears a budget. */
export const PatchTenant = z.strictObject({
  name: TenantName.optional(),
  labels: Labels.optional(),
  monthly_budget: MonthlyBudget.optional(),
  daily_budget: DailyBudget.optional(),
});
export type PatchTenant = z.infer<typeof PatchTenant>;
