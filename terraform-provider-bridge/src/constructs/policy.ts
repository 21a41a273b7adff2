import type { TerraformMetaArguments } from 'cdktf';
import type { Construct } from 'constructs';
import { DeclaredPolicy, type PiiType } from '@agentgw/gateway/contract';
import * as gen from '../gen/index.js';
import { validateWithContract } from './contract-validation.js';

/** Repeated-request blocking: more than `maxRepeats` identical requests within the window are refused. */
export interface RetryBlockProps {
  /** Repeats allowed within the window, 1-10000. */
  readonly maxRepeats: number;
  /** Window length in seconds, 1-86400. */
  readonly windowSeconds: number;
}

/** Request rules of a policy; every field left out takes its default. */
export interface PolicyRulesProps {
  /** PII scan of request text: `off` (default), `redact` or `block`. */
  readonly pii?: 'off' | 'redact' | 'block';
  /** PII types to detect (default all). */
  readonly piiTypes?: PiiType[];
  /** Blocks a request repeated too often within one trace; unset = off. */
  readonly retryBlock?: RetryBlockProps;
  /** USD cap on the worst-case cost of one request. */
  readonly maxCostPerRequest?: number;
  /** USD cap on the spend of one trace. */
  readonly maxCostPerTrace?: number;
  /** Requests per minute per agent. */
  readonly rpm?: number;
  /** Tokens per minute per agent. */
  readonly tpm?: number;
}

/** A policy as written in a stack. */
export interface PolicyProps extends TerraformMetaArguments {
  /** Policy id: lowercase letters, digits, `_` or `-`, at most 64 characters. Changing it replaces the policy. */
  readonly id: string;
  /** Owner tenant (usually `tenant.id`); unset for a global policy. Changing it replaces the policy. */
  readonly tenantId?: string;
  /** USD per agent per calendar month (UTC); unset = unlimited. */
  readonly monthlyBudget?: number;
  /** USD per agent per UTC day; unset with a monthly budget = monthly budget / days in the month. */
  readonly dailyBudget?: number;
  /** Model ids or globs such as `openai/*`; unset = all models, `[]` = none. */
  readonly allowedModels?: string[];
  /** Request rules. */
  readonly rules?: PolicyRulesProps;
  /** Free labels. */
  readonly labels?: Record<string, string>;
}

function rulesToContract(rules: PolicyRulesProps | undefined) {
  if (!rules) return undefined;
  return {
    pii: rules.pii,
    pii_types: rules.piiTypes,
    retry_block: rules.retryBlock && { max_repeats: rules.retryBlock.maxRepeats, window_seconds: rules.retryBlock.windowSeconds },
    max_cost_per_request: rules.maxCostPerRequest,
    max_cost_per_trace: rules.maxCostPerTrace,
    rpm: rules.rpm,
    tpm: rules.tpm,
  };
}

/**
 * A policy: budgets, allowed models and request rules for the agents that use it (`agentgw_policy`).
 *
 * @example
 * const standard = new Policy(this, 'standard', {
 *   id: 'support-standard',
 *   tenantId: acme.id,
 *   monthlyBudget: 250,
 *   allowedModels: ['openai/gpt-4o-mini'],
 *   rules: { pii: 'block', retryBlock: { maxRepeats: 3, windowSeconds: 300 } },
 * });
 */
export class Policy extends gen.policy.Policy {
  public constructor(scope: Construct, id: string, props: PolicyProps) {
    super(scope, id, props);
    validateWithContract(this, DeclaredPolicy, {
      id: props.id,
      tenant_id: props.tenantId,
      monthly_budget: props.monthlyBudget,
      daily_budget: props.dailyBudget,
      allowed_models: props.allowedModels,
      rules: rulesToContract(props.rules),
      labels: props.labels,
    });
  }
}
