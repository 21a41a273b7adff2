import type { RouteHealthReport, Router } from './data-plane/router.js';
import type { RunningSteps } from './data-plane/running-steps.js';
import type { GatewayConfig } from './config.js';
import type { Policy, Spend, SystemConfig, Tenant } from './contract/index.js';
import type { McpGateway } from './mcp/mcp-gateway.js';
import type { Approvals } from './approvals/approvals.js';
import type { KeyHasher } from './security/keys.js';
import type { Snapshot } from './storage/snapshot.js';
import type { Store } from './storage/store.js';

/** What the routes share: built once at start-up (server.ts), or by tests. */
export interface Services {
  readonly version: string;
  readonly config: GatewayConfig;
  readonly store: Store;
  readonly snapshot: Snapshot;
  readonly hasher: KeyHasher;
  readonly countersKind: 'memory' | 'redis';
  /** Recorded spend of an agent and the limits its policy sets. */
  spend(agentId: string, policy: Policy | undefined): Promise<Spend>;
  /** Recorded spend of all the agents of a tenant together, and the limits of the tenant's budgets. */
  tenantSpend(tenant: Pick<Tenant, 'id' | 'monthly_budget' | 'daily_budget'>): Promise<Spend>;
  /** Configured providers for GET /system/config: never their secrets. */
  providerInfo(): SystemConfig['providers'];
  /** GET /route-health: this node's view of each route target. */
  routeHealth(): RouteHealthReport;
  /** Aliases of the server config (read-only routes) and the providers a route's targets may name. */
  readonly router: Pick<Router, 'isConfigAlias' | 'configRoutes'>;
  /** The /mcp endpoint: its upstream servers (GET /mcp/servers) and sessions. */
  readonly mcp: McpGateway;
  /** Steps in flight on every node (listed as running on their trace). */
  readonly running: Pick<RunningSteps, 'of' | 'counts'>;
  /** Writes this node's queued usage rows to the database now (they go in batches every 250 ms otherwise). */
  flushUsage(): Promise<void>;
  /** Calls held for approval on this node, and the news of decisions to the others. */
  readonly approvals: Approvals;
}
