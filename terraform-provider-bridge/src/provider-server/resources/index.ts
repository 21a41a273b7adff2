import { KIND_LIST } from '@agentgw/cli';
import type { ResourceType } from '../../schema/resource-specs.js';
import { kindResource } from './kind-resource.js';
import type { ResourceHandler } from './resource-handler.js';

/** One handler per kind of the CLI's registry, each read from its descriptor. */
export const RESOURCE_HANDLERS = Object.fromEntries(KIND_LIST.map((d) => [d.terraformType, kindResource(d)])) as Record<ResourceType, ResourceHandler>;

export { HandlerError, type ResourceHandler } from './resource-handler.js';
