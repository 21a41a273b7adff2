// /mcp as an OAuth 2.1 protected resource (MCP authorization, RFC 9728): its metadata, the challenge of a 401 that
// points at it, and the check of a JWT access token from a configured authorization server (signature against the
// issuer's JWKS, issuer, audience, expiry, required scopes), mapped to an agent by a claim.
import { type JWTPayload, createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { AgentgwError } from '../contract/index.js';
import type { Snapshot } from '../storage/snapshot.js';
import type { StoredAgent } from '../storage/store.js';
import type { McpAuthorizationServer } from './oauth-config.js';

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** Only asymmetric signatures: a token signed with a shared secret (or none) is never one of an issuer's. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** Clock skew allowed between the issuer and this gateway on exp, nbf and iat. */
const CLOCK_TOLERANCE_S = 30;
/** The issuer's metadata is read again after this long (its jwks_uri may move). */
const METADATA_TTL_MS = 10 * 60_000;

interface Issuer {
  config: McpAuthorizationServer;
  jwks: { at: number; value: Promise<ReturnType<typeof createRemoteJWKSet>> } | null;
}

/** The endpoint a request reached: /mcp (undefined) or /mcp/<server>. */
export type McpScope = string | undefined;

export class McpResourceAuth {
  private readonly issuers = new Map<string, Issuer>();

  constructor(
    servers: readonly McpAuthorizationServer[],
    private readonly snapshot: Snapshot,
  ) {
    for (const s of servers) this.issuers.set(s.issuer, { config: s, jwks: null });
  }

  /** The resource clients ask tokens for: the configured audience (one for every authorization server). */
  get resource(): string {
    return this.issuers.values().next().value!.config.audience;
  }

  /**
   * The resource identifier of an endpoint (RFC 9728 3.3: the one its metadata path was made from): the audience for
   * /mcp, the audience and /<server> for /mcp/<server>.
   */
  resourceOf(scope: McpScope, audience = this.resource): string {
    return scope === undefined ? audience : `${audience.replace(/\/+$/, '')}/${encodeURIComponent(scope)}`;
  }

  /** Where the metadata of an endpoint is published: its path appended to the well-known prefix (RFC 9728 3.1). */
  metadataUrl(scope: McpScope): string {
    const base = new URL(this.resource);
    return `${base.origin}${PROTECTED_RESOURCE_PATH}${endpointPath(base, scope)}`;
  }

  /** RFC 9728 protected resource metadata of /mcp or of /mcp/<server> (whose tokens may also be those of /mcp). */
  metadata(scope: McpScope = undefined): Record<string, unknown> {
    const configs = [...this.issuers.values()].map((i) => i.config);
    const scopes = [...new Set(configs.flatMap((c) => c.required_scopes))];
    return {
      resource: this.resourceOf(scope),
      authorization_servers: configs.map((c) => c.issuer),
      bearer_methods_supported: ['header'],
      ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
      resource_name: 'agentgw MCP gateway',
    };
  }

  /** The WWW-Authenticate of a 401 on the endpoint: Bearer with the metadata pointer (and the scopes to ask for). */
  challenge(scope: McpScope): string {
    const scopes = this.metadata().scopes_supported as string[] | undefined;
    return `Bearer resource_metadata="${this.metadataUrl(scope)}"${scopes ? `, scope="${scopes.join(' ')}"` : ''}`;
  }

  /**
   * The agent a JWT access token stands for, or 401 invalid_api_key saying why it was refused (never quoting it), or 403
   * insufficient_scope naming the scopes it lacks.
   */
  async authenticate(token: string, scope: McpScope): Promise<StoredAgent> {
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(token);
    } catch {
      throw refused('it is neither an agent key (agk_...) nor a JWT access token');
    }
    const issuer = typeof unverified.iss === 'string' ? this.issuers.get(unverified.iss) : undefined;
    if (!issuer) throw refused(`it was not issued by an authorization server this gateway trusts (${[...this.issuers.keys()].join(', ')})`);
    const c = issuer.config;
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, await this.jwksOf(issuer), { issuer: c.issuer, audience: scope === undefined ? c.audience : [c.audience, this.resourceOf(scope, c.audience)], algorithms: ALGORITHMS, clockTolerance: CLOCK_TOLERANCE_S, requiredClaims: ['exp'] }));
    } catch (e) {
      if (e instanceof AgentgwError) throw e;
      const code = (e as { code?: string }).code;
      if (code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JOSE_GENERIC') {
        throw new AgentgwError('upstream_unavailable', `The access token could not be checked: the keys of ${c.issuer} could not be read; retry in a moment.`);
      }
      throw refused(reasonOf(e, c, this.resourceOf(scope, c.audience)));
    }
    const missing = c.required_scopes.filter((s) => !scopesOf(claims).has(s));
    if (missing.length > 0) {
      throw new AgentgwError('insufficient_scope', `The access token lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: ask ${c.issuer} for a token with ${c.required_scopes.join(' ')}.`, {
        headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${c.required_scopes.join(' ')}", resource_metadata="${this.metadataUrl(scope)}"` },
      });
    }
    const named = claims[c.agent_claim];
    const agent = typeof named === 'string' ? this.agentNamed(named) : undefined;
    if (!agent) {
      throw refused(`its "${c.agent_claim}" claim names no agent of this gateway (it must hold an agent id, or <tenant_id>/<agent name>): ask an admin to map the client to an agent`);
    }
    return agent;
  }

  private agentNamed(name: string): StoredAgent | undefined {
    return this.snapshot.agentByIdOrName(name);
  }

  /** The issuer's JWKS, found through its metadata (OAuth authorization server metadata, else OpenID discovery). */
  private jwksOf(issuer: Issuer): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (!issuer.jwks || Date.now() - issuer.jwks.at > METADATA_TTL_MS) {
      const value = discoverJwks(issuer.config.issuer);
      issuer.jwks = { at: Date.now(), value };
      value.catch(() => {
        if (issuer.jwks?.value === value) issuer.jwks = null;
      });
    }
    return issuer.jwks.value;
  }
}

/** The endpoint's path: the audience's own path for /mcp, with /<server> for /mcp/<server>. */
function endpointPath(base: URL, scope: McpScope): string {
  const path = base.pathname.replace(/\/+$/, '');
  return scope === undefined ? path : `${path}/${encodeURIComponent(scope)}`;
}

function refused(why: string): AgentgwError {
  return new AgentgwError('invalid_api_key', `The access token was refused: ${why}.`);
}

/** A sentence for the caller from jose's error (which claim failed), never the token. */
function reasonOf(e: unknown, c: McpAuthorizationServer, resource: string): string {
  const code = (e as { code?: string }).code;
  const claim = (e as { claim?: string }).claim;
  if (code === 'ERR_JWT_EXPIRED') return 'it has expired: get a new one';
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && claim === 'aud') return `it is not for this resource (its audience must be ${resource}${resource === c.audience ? '' : ` or ${c.audience}`}): ask for a token with resource=${resource}`;
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && claim === 'iss') return `it was not issued by ${c.issuer}`;
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') return `its "${claim ?? 'unknown'}" claim is not valid`;
  if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' || code === 'ERR_JWKS_NO_MATCHING_KEY') return `its signature is not one of ${c.issuer}'s keys`;
  if (code === 'ERR_JOSE_ALG_NOT_ALLOWED') return 'it is not signed with an asymmetric algorithm';
  return 'it is not a valid JWT access token';
}

/**
 * The token's scopes: `scope` (a space-separated string, RFC 9068) or `scp`, a list (Okta) or a space-separated string
 * (Microsoft Entra ID).
 */
function scopesOf(claims: JWTPayload): Set<string> {
  const out = new Set<string>();
  if (typeof claims.scope === 'string') for (const s of claims.scope.split(' ')) if (s) out.add(s);
  if (typeof claims.scp === 'string') for (const s of claims.scp.split(' ')) if (s) out.add(s);
  if (Array.isArray(claims.scp)) for (const s of claims.scp) if (typeof s === 'string') out.add(s);
  return out;
}

async function discoverJwks(issuer: string): Promise<ReturnType<typeof createRemoteJWKSet>> {
  const base = issuer.replace(/\/+$/, '');
  const u = new URL(issuer);
  // RFC 8414: the well-known segment goes before the issuer's path; OpenID discovery appends it.
  const candidates = [`${u.origin}/.well-known/oauth-authorization-server${u.pathname === '/' ? '' : u.pathname.replace(/\/+$/, '')}`, `${base}/.well-known/openid-configuration`];
  let last = '';
  for (const url of candidates) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } });
      if (!res.ok) {
        last = `${url} answered ${res.status}`;
        continue;
      }
      const doc = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
      if (doc.issuer !== issuer) {
        last = `${url} names the issuer ${String(doc.issuer)}`;
        continue;
      }
      if (typeof doc.jwks_uri !== 'string') {
        last = `${url} has no jwks_uri`;
        continue;
      }
      return createRemoteJWKSet(new URL(doc.jwks_uri), { timeoutDuration: 10_000 });
    } catch (e) {
      last = `${url} could not be read (${(e as Error).message})`;
    }
  }
  throw new AgentgwError('upstream_unavailable', `The access token could not be checked: the metadata of ${issuer} is not readable (${last}); retry later, or ask an admin to check mcp.authorization_servers.`);
}
