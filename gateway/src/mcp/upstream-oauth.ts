// agentgw's own access token for an upstream MCP server (`mcp_servers.<name>.oauth`): the client-credentials grant,
// the token cached and fetched again before it expires, and a request the server answers 401 sent once more with a
// new token. The token is agentgw's: no client's token is ever passed on to an upstream (the MCP spec forbids it).
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { AgentgwError } from '../contract/index.js';
import type { McpUpstreamOAuth } from './oauth-config.js';

/** A token is fetched again when this share of its lifetime is left (at most a minute before it expires). */
const REFRESH_SHARE = 0.2;
const REFRESH_MAX_MS = 60_000;
/** Lifetime assumed when the token endpoint does not say (expires_in). */
const DEFAULT_LIFETIME_S = 60;
const TOKEN_TIMEOUT_MS = 10_000;

interface Held {
  token: string;
  /** When it is fetched again (ms). */
  refreshAt: number;
}

export class ClientCredentials {
  private held: Held | null = null;
  private fetching: Promise<Held> | null = null;

  constructor(
    private readonly server: string,
    private readonly config: McpUpstreamOAuth,
    /** The resource the token is for (RFC 8707): oauth.resource, else the server's URL. */
    private readonly resource: string,
  ) {}

  /** A token valid for a while yet: the one held, else a new one (one request at a time). */
  async token(): Promise<string> {
    if (this.held && Date.now() < this.held.refreshAt) return this.held.token;
    this.fetching ??= this.fetchToken().finally(() => {
      this.fetching = null;
    });
    return (await this.fetching).token;
  }

  /** The server refused this token (revoked, or expired early): the next request fetches a new one. */
  invalidate(token: string): void {
    if (this.held?.token === token) this.held = null;
  }

  private async fetchToken(): Promise<Held> {
    const c = this.config;
    const form = new URLSearchParams({ grant_type: 'client_credentials', resource: this.resource });
    if (c.scopes.length > 0) form.set('scope', c.scopes.join(' '));
    // client_secret_basic: both parts form-encoded first (RFC 6749 2.3.1).
    const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
    const basic = Buffer.from(`${enc(c.client_id)}:${enc(c.client_secret)}`).toString('base64');
    const started = Date.now();
    let res: Response;
    try {
      res = await fetch(c.token_url, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form,
        signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      });
    } catch (e) {
      throw this.failure(`its token endpoint could not be reached (${(e as Error).name === 'TimeoutError' ? 'timed out' : 'connection failed'})`);
    }
    const body = (await res.json().catch(() => null)) as { access_token?: unknown; expires_in?: unknown; error?: unknown } | null;
    if (!res.ok || typeof body?.access_token !== 'string' || body.access_token === '') {
      const why = typeof body?.error === 'string' ? ` ${body.error.slice(0, 64).replace(/[^\w.-]/g, '')}` : '';
      throw this.failure(`its token endpoint answered HTTP ${res.status}${why} to the client-credentials grant`);
    }
    const lifetimeMs = (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_S) * 1000;
    const held = { token: body.access_token, refreshAt: started + lifetimeMs - Math.min(REFRESH_MAX_MS, lifetimeMs * REFRESH_SHARE) };
    this.held = held;
    return held;
  }

  private failure(why: string): AgentgwError {
    return new AgentgwError('upstream_unavailable', `MCP server ${this.server} cannot be reached: agentgw could not get an access token for it (${why}); ask an admin to check mcp_servers.${this.server}.oauth.`);
  }
}

/**
 * The fetch the server's transport uses: each request carries `Authorization: Bearer <token>`; a 401 drops that token
 * and the request is sent once more with a new one (its body is the SDK's JSON text, so it can be sent again).
 */
export function clientCredentialsFetch(credentials: ClientCredentials): FetchLike {
  return async (url, init) => {
    const send = async () => {
      const token = await credentials.token();
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${token}`);
      return { token, res: await fetch(url, { ...init, headers }) };
    };
    const first = await send();
    if (first.res.status !== 401) return first.res;
    await first.res.body?.cancel().catch(() => undefined);
    credentials.invalidate(first.token);
    return (await send()).res;
  };
}
