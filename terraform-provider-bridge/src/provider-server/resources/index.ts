import type { ResourceType } from '../../schema/resource-specs.js';
import { agentResource } from './agent-resource.js';
import { policyResource } from './policy-resource.js';
import type { ResourceHandler } from './resource-handler.js';
import { tenantResource } from './tenant-resource.js';

export const RESOURCE_HANDLERS: Record<ResourceType, ResourceHandler> = {
  agentgw_tenant: tenantResource,
  agentgw_policy: policyResource,
  agentgw_agent: agentResource,
};

export { HandlerError, type ResourceHandler } from './resource-handler.js';
