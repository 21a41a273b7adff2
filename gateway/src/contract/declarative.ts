import { z } from 'zod';
import { CreateAgent } from './agents.js';
import { ResourceId } from './common.js';
import { PutPolicy } from './policies.js';
import { PutRoute, RouteAlias } from './routes.js';
import { CreateTenant } from './tenants.js';

/** One policy in the declarative file: its id plus the PUT body. */
export const DeclaredPolicy = PutPolicy.extend({ id: ResourceId });
export type DeclaredPolicy = z.infer<typeof DeclaredPolicy>;

/** One route in the declarative file: its alias plus the PUT body. */
export const DeclaredRoute = PutRoute.extend({ alias: RouteAlias });
export type DeclaredRoute = z.infer<typeof DeclaredRoute>;

/** The declarative file of `agentgw plan|apply|destroy -f FILE`. */
export const DeclarativeFile = z.strictObject({
  version: z.literal(1),
  tenants: z.array(CreateTenant).default([]),
  policies: z.array(DeclaredPolicy).default([]),
  agents: z.array(CreateAgent).default([]),
  routes: z.array(DeclaredRoute).default([]),
});
export type DeclarativeFile = z.infer<typeof DeclarativeFile>;
