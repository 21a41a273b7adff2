import type { TerraformMetaArguments } from 'cdktf';
import type { Construct } from 'constructs';
import { CreateAgent } from '@agentgw/gateway/contract';
import * as gen from '../gen/index.js';
import { validateWithContract } from './contract-validation.js';

/** An agent as written in a stack. */
export interface AgentProps extends TerraformMetaArguments {
  /** Agent name, unique within its tenant. */
  readonly name: string;
  /** The tenant of the agent (usually `tenant.id`). Changing it replaces the agent and its key. */
  readonly tenantId: string;
  /** The policy applied to the agent (usually `policy.id`); unset = none. */
  readonly policyId?: string;
  /** Free labels. */
  readonly labels?: Record<string, string>;
}

/**
 * An agent: the holder of one gateway API key (`agentgw_agent`).
 * `id`, `keyPrefix` and the sensitive `apiKey` are known after apply.
 *
 * @example
 * new Agent(this, 'support-bot', { name: 'support-bot', tenantId: acme.id, policyId: standard.id });
 */
export class Agent extends gen.agent.Agent {
  public constructor(scope: Construct, id: string, props: AgentProps) {
    super(scope, id, props);
    validateWithContract(this, CreateAgent, {
      name: props.name,
      tenant_id: props.tenantId,
      policy_id: props.policyId,
      labels: props.labels,
    });
  }
}
