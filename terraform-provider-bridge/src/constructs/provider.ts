import type { Construct } from 'constructs';
import * as gen from '../gen/index.js';

/** Settings of the agentgw provider block. */
export interface AgentgwProviderProps {
  /** Base URL of the admin interface, e.g. `http://127.0.0.1:8080/api`. Defaults to `AGENTGW_ADMIN_URL`. */
  readonly adminUrl?: string;
  /** Admin API key. Defaults to `AGENTGW_ADMIN_KEY`; prefer the environment over a key in code. */
  readonly adminKey?: string;
  /** Alias, to configure several agentgw servers in one stack. */
  readonly alias?: string;
}

/**
 * The agentgw provider: which admin interface the stack's tenants, policies and agents live in.
 *
 * @example
 * new AgentgwProvider(this, 'agentgw', { adminUrl: 'http://127.0.0.1:8080/api' });
 */
export class AgentgwProvider extends gen.provider.AgentgwProvider {
  public constructor(scope: Construct, id: string, props: AgentgwProviderProps = {}) {
    super(scope, id, props);
  }
}
