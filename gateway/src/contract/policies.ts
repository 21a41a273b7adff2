import { z } from 'zod';
import { Labels, ResourceId, Timestamp, Usd } from './common.js';
import { ToolRules } from './tool-rules.js';

export const PII_TYPES = ['email', 'phone', 'credit_card', 'ssn', 'iban', 'ip_address', 'secret'] as const;
export const PiiType = z.enum(PII_TYPES);
export type PiiType = z.infer<typeof PiiType>;

export const PiiMode = z.enum(['off', 'redact', 'block']);

/** The parts of a request PII rules read: user messages and tool results, assistant turns, system prompts, tool schemas. */
export const PII_PARTS = ['user', 'assistant', 'system', 'tools'] as const;
export const PiiPart = z.enum(PII_PARTS);
export type PiiPart = z.infer<typeof PiiPart>;

/** A value never treated as PII, or a glob of them: `*` any run of characters, `?` one; letter case is ignored. */
export const PiiAllowPattern = z
  .string()
  .min(1)
  .max(320)
  .regex(/^[^\s]+$/, { message: 'must be a value or glob without spaces, such as "noreply@*", "*@example.com" or "127.0.0.1"' });

export const ModelPattern = z
  .string()
  .regex(/^[A-Za-z0-9*?._:\/@-]{1,200}$/, { message: 'must be a model id or glob such as "openai/*" (letters, digits, . _ : / @ - * ?)' });

/** MCP tools as globs over `server/tool` (`github/*`, `files/read_?`): `*` and `?` as in model globs. */
export const ToolPattern = z
  .string()
  .regex(/^[A-Za-z0-9*?._:\/@-]{1,200}$/, { message: 'must be a tool glob over "server/tool" such as "github/*" (letters, digits, . _ : / @ - * ?)' });

/** MCP tool calls one trace may make; the counters track at most 10,001 sightings of a key, so 10,000 is the most a limit can mean. */
const ToolCallCount = z.number().int().min(0).max(10_000);

export const RetryBlock = z.strictObject({
  max_repeats: z.number().int().min(1).max(10_000),
  window_seconds: z.number().int().min(1).max(86_400),
});

const Count = z.number().int().min(1).max(1e12);

/** Rules with every default filled in, as the server returns and stores them. */
export const Rules = z
  .object({
    pii: PiiMode,
    pii_types: z.array(PiiType),
    pii_scope: z.array(PiiPart),
    pii_allow: z
      .array(PiiAllowPattern)
      .describe('Values and globs never treated as PII, such as "noreply@*", "*@example.com" or "127.0.0.1".'),
    retry_block: RetryBlock.nullable(),
    max_cost_per_request: Usd.nullable(),
    max_cost_per_trace: Usd.nullable(),
    rpm: Count.nullable(),
    tpm: Count.nullable(),
    clamp_output: z.boolean(),
    max_tool_calls_per_trace: ToolCallCount.nullable().describe('MCP tool calls one trace may make; a call past it is refused with tool_calls_exceeded. Unset = unlimited.'),
  })
  .meta({ id: 'Rules' });
export type Rules = z.infer<typeof Rules>;

export const DEFAULT_RULES: Rules = {
  pii: 'off',
  pii_types: [...PII_TYPES],
  pii_scope: ['user'],
  pii_allow: [],
  retry_block: null,
  max_cost_per_request: null,
  max_cost_per_trace: null,
  rpm: null,
  tpm: null,
  clamp_output: false,
  max_tool_calls_per_trace: null,
};

/** Rules as written: every field optional; null clears an optional rule. */
export const RulesInput = z.strictObject({
  pii: PiiMode.optional(),
  pii_types: z.array(PiiType).max(PII_TYPES.length).optional(),
  pii_scope: z.array(PiiPart).max(PII_PARTS.length).optional(),
  pii_allow: z.array(PiiAllowPattern).max(200).optional(),
  retry_block: RetryBlock.nullable().optional(),
  max_cost_per_request: Usd.nullable().optional(),
  max_cost_per_trace: Usd.nullable().optional(),
  rpm: Count.nullable().optional(),
  tpm: Count.nullable().optional(),
  clamp_output: z.boolean().optional(),
  max_tool_calls_per_trace: ToolCallCount.nullable().optional(),
});
export type RulesInput = z.infer<typeof RulesInput>;

export const Policy = z
  .object({
    id: ResourceId,
    tenant_id: ResourceId.nullable(),
    monthly_budget: Usd.nullable(),
    daily_budget: Usd.nullable(),
    allowed_models: z.array(ModelPattern).nullable(),
    // Always answered; optional in the type so that policies built before MCP (in code and tests) still type-check: absent = null.
    allowed_tools: z.array(ToolPattern).nullable().optional().describe('MCP tools the agent may call through /mcp, as globs over "server/tool"; unset = all, [] = none.'),
    rules: Rules,
    // Optional in the type as allowed_tools is: absent = null (no rules).
    tool_rules: ToolRules.nullable().optional().describe('Rules deciding the tool calls a model proposes and the calls on /mcp; the first that matches decides; unset = allow all.'),
    labels: Labels,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Policy' });
export type Policy = z.infer<typeof Policy>;

/** PUT /policies/{id}: all optional; a field left out keeps its value; null clears it. */
export const PutPolicy = z.strictObject({
  tenant_id: ResourceId.nullable().optional(),
  monthly_budget: Usd.nullable().optional(),
  daily_budget: Usd.nullable().optional(),
  allowed_models: z.array(ModelPattern).max(500).nullable().optional(),
  allowed_tools: z.array(ToolPattern).max(500).nullable().optional(),
  rules: RulesInput.optional(),
  tool_rules: ToolRules.nullable().optional(),
  labels: Labels.optional(),
});
export type PutPolicy = z.infer<typeof PutPolicy>;

/** The policy fields a PUT may set, merged over what exists (or over the defaults on create). */
export function mergePolicy(
  existing: Omit<Policy, 'id' | 'created_at' | 'updated_at'> | null,
  input: PutPolicy,
): Omit<Policy, 'id' | 'created_at' | 'updated_at'> {
  const base = existing ?? {
    tenant_id: null,
    monthly_budget: null,
    daily_budget: null,
    allowed_models: null,
    allowed_tools: null,
    rules: DEFAULT_RULES,
    tool_rules: null,
    labels: {},
  };
  const rules = { ...base.rules };
  for (const [k, v] of Object.entries(input.rules ?? {})) {
    if (v !== undefined) (rules as Record<string, unknown>)[k] = v;
  }
  return {
    tenant_id: input.tenant_id !== undefined ? input.tenant_id : base.tenant_id,
    monthly_budget: input.monthly_budget !== undefined ? input.monthly_budget : base.monthly_budget,
    daily_budget: input.daily_budget !== undefined ? input.daily_budget : base.daily_budget,
    allowed_models: input.allowed_models !== undefined ? input.allowed_models : base.allowed_models,
    // Policies stored before MCP have no allow-list of tools: all tools.
    allowed_tools: input.allowed_tools !== undefined ? input.allowed_tools : (base.allowed_tools ?? null),
    rules,
    tool_rules: input.tool_rules !== undefined ? input.tool_rules : (base.tool_rules ?? null),
    labels: input.labels ?? base.labels,
  };
}
