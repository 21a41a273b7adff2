import type { Construct } from 'constructs';
import { KINDS } from '@agentgw/cli';
import type { DeclarativeFile } from '@agentgw/gateway/contract';
import * as gen from '../gen/index.js';
import { validateKind, type ContractProps } from './contract-validation.js';

/** An agent as written in a stack: the generated config (its docs) with the contract's types. */
export type AgentProps = gen.agent.AgentConfig & ContractProps<DeclarativeFile['agents'][number]>;

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
    validateKind(this, KINDS.agent, props);
  }
}
