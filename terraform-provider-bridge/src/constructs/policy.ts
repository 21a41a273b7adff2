import type { Construct } from 'constructs';
import { KINDS } from '@agentgw/cli';
import type { DeclarativeFile } from '@agentgw/gateway/contract';
import * as gen from '../gen/index.js';
import { validateKind, type ContractProps } from './contract-validation.js';

/** A policy as written in a stack: the generated config (its docs) with the contract's types. */
export type PolicyProps = gen.policy.PolicyConfig & ContractProps<DeclarativeFile['policies'][number]>;
/** Request rules of a policy; every field left out takes its default. */
export type PolicyRulesProps = NonNullable<PolicyProps['rules']>;
/** Repeated-request blocking: more than `maxRepeats` identical requests within the window are refused. */
export type RetryBlockProps = NonNullable<PolicyRulesProps['retryBlock']>;

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
    validateKind(this, KINDS.policy, props);
  }
}
