import type { Construct } from 'constructs';
import { KINDS } from '@agentgw/cli';
import type { DeclarativeFile } from '@agentgw/gateway/contract';
import * as gen from '../gen/index.js';
import { validateKind, type ContractProps } from './contract-validation.js';

/** A tenant as written in a stack: the generated config (its docs) with the contract's types. */
export type TenantProps = gen.tenant.TenantConfig & ContractProps<DeclarativeFile['tenants'][number]>;

/**
 * A tenant: the owner of agents and policies (`agentgw_tenant`).
 *
 * @example
 * const acme = new Tenant(this, 'acme', { id: 'acme', name: 'Acme Inc.' });
 * new Agent(this, 'bot', { name: 'support-bot', tenantId: acme.id });
 */
export class Tenant extends gen.tenant.Tenant {
  public constructor(scope: Construct, id: string, props: TenantProps) {
    super(scope, id, props);
    validateKind(this, KINDS.tenant, props);
  }
}
