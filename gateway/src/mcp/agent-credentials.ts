// Per-agent credentials on the way to an upstream: the headers an admin set for an agent and a server
// (PUT /api/agents/{id}/mcp-credentials/{server}), opened with the deployment's secret once per snapshot generation, and
// carried with each /mcp request (an async context) to the Upstream, which then uses the agent's own connection.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { AgentgwError } from '../contract/index.js';
import { type CredentialBox, mcpCredentialBinding, mcpCredentialBox } from '../security/credential-box.js';
import type { KeyHasher } from '../security/keys.js';
import type { GenerationCache, Snapshot } from '../storage/snapshot.js';
import type { Store } from '../storage/store.js';

/** Headers by server; null: stored, but not readable with this deployment's secret. */
export type AgentHeaders = ReadonlyMap<string, Readonly<Record<string, string>> | null>;

export interface CredentialLog {
  warn(obj: object, msg: string): void;
}

/** The credentials of the agent a /mcp request is served for. */
interface Current {
  agentId: string;
  headers: AgentHeaders;
}

const current = new AsyncLocalStorage<Current>();

export class AgentCredentials {
  private readonly box: CredentialBox;
  private readonly cache: GenerationCache<Promise<AgentHeaders> | undefined>;

  constructor(
    private readonly store: Pick<Store, 'listMcpCredentials'>,
    hasher: KeyHasher,
    snapshot: Snapshot,
    private readonly log?: CredentialLog,
  ) {
    this.box = mcpCredentialBox(hasher);
    // A write calls snapshot.changed(): every node reads the agent's credentials again at its next request.
    this.cache = snapshot.cache(10_000);
  }

  /** The agent's headers for each server it has credentials for (one database read per agent and snapshot generation). */
  of(agentId: string): Promise<AgentHeaders> {
    const hit = this.cache.get(agentId);
    if (hit) return hit;
    const read = this.read(agentId);
    this.cache.set(agentId, read);
    // A failed read is not kept: the next request tries again.
    read.catch(() => {
      if (this.cache.get(agentId) === read) this.cache.set(agentId, undefined);
    });
    return read;
  }

  private async read(agentId: string): Promise<AgentHeaders> {
    const rows = await this.store.listMcpCredentials(agentId);
    const out = new Map<string, Readonly<Record<string, string>> | null>();
    for (const r of rows) {
      const opened = this.box.open(r.sealed, mcpCredentialBinding(agentId, r.server));
      if (opened === undefined) this.log?.warn({ agent_id: agentId, mcp_server: r.server }, 'MCP credentials of an agent cannot be opened with this AGENTGW_SECRET_KEY; set them again');
      out.set(r.server, opened === undefined ? null : (JSON.parse(opened) as Record<string, string>));
    }
    return out;
  }
}

/** Runs `fn` (the serving of one /mcp request) with the agent's credentials in reach of the upstreams it calls. */
export function withAgentCredentials<T>(agentId: string, headers: AgentHeaders, fn: () => T): T {
  return headers.size === 0 ? current.exit(fn) : current.run({ agentId, headers }, fn);
}

/**
 * The current agent's headers for the server, with a digest to tell a change; undefined when the agent has none (the
 * server's own connection serves it). Credentials that cannot be opened fail the call rather than fall back to the
 * server's own identity.
 */
export function agentCredentialsFor(server: string): { agentId: string; headers: Readonly<Record<string, string>>; digest: string } | undefined {
  const c = current.getStore();
  const headers = c?.headers.get(server);
  if (!c || headers === undefined) return undefined;
  if (headers === null) {
    throw new AgentgwError(
      'upstream_unavailable',
      `The credentials set for this agent on MCP server ${server} cannot be read (they were sealed with another AGENTGW_SECRET_KEY): ask an admin to set them again (PUT /api/agents/${c.agentId}/mcp-credentials/${server}).`,
    );
  }
  const digest = createHash('sha256').update(JSON.stringify(headers)).digest('base64url');
  return { agentId: c.agentId, headers, digest };
}
