import type { TerraformMetaArguments } from 'cdktf';
import type { Construct } from 'constructs';
import { CreateTenant } from '@agentgw/gateway/contract';
import * as gen from '../gen/index.js';
import { validateWithContract } from './contract-validation.js';

/** A tenant as written in a stack. */
export interface TenantProps extends TerraformMetaArguments {
  /** Tenant id: lowercase letters, digits, `_` or `-`, at most 64 characters. Changing it replaces the tenant. */
  readonly id: string;
  /** Display name, 1-200 characters. */
  readonly name: string;
  /** Free labels. */
  readonly labels?: Record<string, string>;
}

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
    validateWithContract(this, CreateTenant, { id: props.id, name: props.name, labels: props.labels });
  }
}
