import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type JWTPayload, createRemoteJWKSet, jwtVerify } from 'jose';
import type { GatewayConfig } from '../config.js';
import { AgentgwError, ROLES, type Role } from '../contract/index.js';
import { KeyHasher } from '../security/keys.js';
import type { Services } from '../services.js';
import {
  CSRF_COOKIE,
  type ConsoleSessions,
  SESSION_COOKIE,
  clearCookies,
  readCookie,
  refuseCrossSite,
  serializeCookie,
} from './console-session.js';

export type OidcConfig = NonNullable<GatewayConfig['console']['oidc']>;

/** The login in progress (state, nonce, PKCE verifier), kept in a short-lived signed cookie between login and callback. */
const FLOW_COOKIE = 'agentgw_oidc';
const FLOW_PATH = '/api/auth/oidc';
const FLOW_SECONDS = 600;

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
}

const ROLE_RANK: Record<Role, number> = { viewer: 0, tenant_admin: 1, admin: 2 };

/** What an issuer's id token says of the user, once validated: the person, their role and tenant. */
export interface OidcUser {
  sub: string;
  name: string;
  role: Role;
  tenant_id: string | null;
}

/** An OpenID Connect relying party for one configured issuer: discovery, the code + PKCE flow, id token validation. */
export class OidcClient {
  private discovery: { at: number; value: Promise<Discovery> } | null = null;
  private jwks: ReturnType<typeof createRemoteJWKSet> | null = null;

  constructor(readonly config: OidcConfig) {}

  /** The issuer's /.well-known/openid-configuration, read once per 10 minutes; its `issuer` must be the configured one. */
  async metadata(): Promise<Discovery> {
    if (!this.discovery || Date.now() - this.discovery.at > 600_000) {
      const value = this.discover();
      this.discovery = { at: Date.now(), value };
      value.catch(() => {
        this.discovery = null;
      });
    }
    return this.discovery.value;
  }

  private async discover(): Promise<Discovery> {
    const url = `${this.config.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let doc: Partial<Discovery>;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } });
      if (!res.ok) throw new Error(`it answered ${res.status}`);
      doc = (await res.json()) as Partial<Discovery>;
    } catch (err) {
      throw new AgentgwError('upstream_unavailable', `The OpenID issuer's discovery document (${url}) could not be read (${(err as Error).message}): check console.oidc.issuer.`);
    }
    if (doc.issuer !== this.config.issuer) {
      throw new AgentgwError('upstream_bad_response', `The discovery document at ${url} names the issuer ${String(doc.issuer)}, not ${this.config.issuer}: console.oidc.issuer must be written exactly as the issuer names itself.`);
    }
    for (const k of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
      if (typeof doc[k] !== 'string') throw new AgentgwError('upstream_bad_response', `The discovery document at ${url} has no ${k}.`);
    }
    this.jwks = createRemoteJWKSet(new URL(doc.jwks_uri!));
    return doc as Discovery;
  }

  /**
   * Validates an id token: signature (the issuer's JWKS), issuer, audience (client_id), expiry and nonce; then maps the role
   * and tenant claims. Throws 401 invalid_api_key, or 403 insufficient_role when the user has no role here.
   */
  async verifyIdToken(idToken: string, nonce: string): Promise<OidcUser> {
    await this.metadata();
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(idToken, this.jwks!, { issuer: this.config.issuer, audience: this.config.client_id, clockTolerance: 30 }));
    } catch (err) {
      throw new AgentgwError('invalid_api_key', `The id token was refused (${(err as Error).message}): sign in again through ${this.config.issuer}.`);
    }
    if (typeof claims.nonce !== 'string' || claims.nonce !== nonce) {
      throw new AgentgwError('invalid_api_key', 'The id token does not carry the nonce of this sign-in (replayed?): sign in again.');
    }
    if (typeof claims.sub !== 'string' || !claims.sub) throw new AgentgwError('invalid_api_key', 'The id token has no subject (sub): the issuer must send one.');
    const role = this.roleOf(claims[this.config.role_claim]);
    if (!role) {
      throw new AgentgwError(
        'insufficient_role',
        `Your account (${claims.sub}) has no agentgw role: its "${this.config.role_claim}" claim holds none of ${this.config.role_map ? Object.keys(this.config.role_map).join(', ') : ROLES.join(', ')}. Ask an administrator of the identity provider.`,
      );
    }
    const t = this.config.tenant_claim ? claims[this.config.tenant_claim] : undefined;
    const tenant = typeof t === 'string' && t ? t : null;
    if (role === 'tenant_admin' && !tenant) {
      throw new AgentgwError('insufficient_role', `Your account has the tenant_admin role but its "${this.config.tenant_claim ?? 'tenant'}" claim names no tenant: ask an administrator of the identity provider.`);
    }
    const name = [claims.name, claims.email, claims.preferred_username].find((v): v is string => typeof v === 'string' && v.length > 0) ?? claims.sub;
    return { sub: claims.sub, name, role, tenant_id: tenant };
  }

  /** The strongest role the claim maps to (a claim may be a list, such as groups). */
  roleOf(claim: unknown): Role | null {
    const values = Array.isArray(claim) ? claim : [claim];
    let best: Role | null = null;
    for (const v of values) {
      if (typeof v !== 'string') continue;
      const role = this.config.role_map ? (Object.hasOwn(this.config.role_map, v) ? this.config.role_map[v] : undefined) : (ROLES as readonly string[]).includes(v) ? (v as Role) : undefined;
      if (role && (best === null || ROLE_RANK[role] > ROLE_RANK[best])) best = role;
    }
    return best;
  }

  /** Trades the authorization code (and the PKCE verifier) for the issuer's tokens; returns the id token. */
  async redeem(code: string, verifier: string, redirectUri: string): Promise<string> {
    const meta = await this.metadata();
    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (this.config.client_secret) {
      const enc = (v: string) => encodeURIComponent(v);
      headers.authorization = `Basic ${Buffer.from(`${enc(this.config.client_id)}:${enc(this.config.client_secret)}`).toString('base64')}`;
    } else {
      form.set('client_id', this.config.client_id);
    }
    let res: Response;
    try {
      res = await fetch(meta.token_endpoint, { method: 'POST', headers, body: form, signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      throw new AgentgwError('upstream_unavailable', `The issuer's token endpoint could not be reached (${(err as Error).message}): try signing in again.`);
    }
    const body = (await res.json().catch(() => ({}))) as { id_token?: unknown; error?: unknown; error_description?: unknown };
    if (!res.ok || typeof body.id_token !== 'string') {
      const why = typeof body.error === 'string' ? `${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}` : `status ${res.status}`;
      throw new AgentgwError('invalid_api_key', `The issuer refused the sign-in code (${why}): sign in again.`);
    }
    return body.id_token;
  }
}

const b64url = (b: Buffer) => b.toString('base64url');

function redirectUriOf(req: FastifyRequest, c: OidcConfig): string {
  return c.redirect_uri ?? `${req.protocol}://${req.headers.host}${FLOW_PATH}/callback`;
}

/**
 * /api/auth: console sign-in through the configured OpenID issuer, outside the admin key check.
 * GET /auth/session says whether OIDC sign-in is offered and whether this browser holds a session.
 */
export function consoleAuthRoutes(app: FastifyInstance, s: Services, sessions: ConsoleSessions | null, client: OidcClient | null): void {
  app.get('/auth/session', { schema: { hide: true } }, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    const cookie = readCookie(req.headers.cookie, SESSION_COOKIE);
    let signedIn = false;
    if (sessions && cookie) {
      try {
        await sessions.check(cookie);
        signedIn = true;
      } catch (e) {
        // Not a live session; a database that cannot answer is a 503, not a sign-in page.
        if (!(e instanceof AgentgwError && e.code === 'invalid_api_key')) throw e;
        signedIn = false;
      }
    }
    return { oidc: client !== null, signed_in: signedIn };
  });

  app.post('/auth/logout', { schema: { hide: true } }, async (req, reply) => {
    refuseCrossSite(req);
    const cookie = readCookie(req.headers.cookie, SESSION_COOKIE);
    // The browser forgets the cookie even when the database cannot record the sign-out (the answer is then a 503).
    reply.header('set-cookie', clearCookies());
    if (sessions && cookie) await sessions.end(cookie);
    return reply.code(204).send();
  });

  if (!client || !sessions) return;
  const rp: OidcClient = client;
  const signed: ConsoleSessions = sessions;
  const c = client.config;
  const flowSign = (v: string) => s.hasher.sign('oidc-flow', v);

  app.get('/auth/oidc/login', { schema: { hide: true } }, async (req, reply) => {
    const meta = await client.metadata();
    const flow = { state: b64url(randomBytes(24)), nonce: b64url(randomBytes(24)), verifier: b64url(randomBytes(32)), exp: Date.now() + FLOW_SECONDS * 1000 };
    const packed = b64url(Buffer.from(JSON.stringify(flow)));
    const url = new URL(meta.authorization_endpoint);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', c.client_id);
    url.searchParams.set('redirect_uri', redirectUriOf(req, c));
    url.searchParams.set('scope', c.scopes.includes('openid') ? c.scopes.join(' ') : ['openid', ...c.scopes].join(' '));
    url.searchParams.set('state', flow.state);
    url.searchParams.set('nonce', flow.nonce);
    url.searchParams.set('code_challenge', b64url(createHash('sha256').update(flow.verifier).digest()));
    url.searchParams.set('code_challenge_method', 'S256');
    // Lax, not Strict: the issuer sends the browser back with a cross-site navigation, which must carry this cookie.
    const cookie = serializeCookie(FLOW_COOKIE, `${packed}.${flowSign(packed)}`, {
      maxAge: FLOW_SECONDS,
      httpOnly: true,
      sameSite: 'Lax',
      path: FLOW_PATH,
      secure: req.protocol === 'https',
    });
    return reply.header('cache-control', 'no-store').header('set-cookie', cookie).redirect(url.toString(), 302);
  });

  // A sign-in that fails goes back to the console's sign-in page, which says why in a fixed sentence per reason (the
  // query names the reason only, so no other site can put words on that page); the full sentence is logged.
  app.get('/auth/oidc/callback', { schema: { hide: true } }, async (req, reply: FastifyReply) => {
    try {
      return await callback(req, reply);
    } catch (err) {
      if (!(err instanceof AgentgwError)) throw err;
      req.log.warn({ code: err.code, reason: err.message }, 'console sign-in through OpenID Connect refused');
      const reason = err.code === 'insufficient_role' ? 'no_role' : err.code === 'upstream_unavailable' || err.code === 'upstream_bad_response' ? 'issuer_unavailable' : 'refused';
      return reply
        .code(302)
        .header('cache-control', 'no-store')
        .header('set-cookie', serializeCookie(FLOW_COOKIE, '', { maxAge: 0, httpOnly: true, sameSite: 'Lax', path: FLOW_PATH, secure: req.protocol === 'https' }))
        .header('location', `/ui/?sign_in_error=${reason}`)
        .send({ error: { message: err.message, type: err.type, code: err.code, param: err.param } });
    }
  });

  async function callback(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const q = req.query as Record<string, string | undefined>;
    if (typeof q.error === 'string') {
      throw new AgentgwError('invalid_api_key', `The issuer did not sign you in (${q.error}${q.error_description ? `: ${q.error_description}` : ''}): go back to /ui and try again.`);
    }
    const raw = readCookie(req.headers.cookie, FLOW_COOKIE);
    const dot = raw?.lastIndexOf('.') ?? -1;
    const packed = raw && dot > 0 ? raw.slice(0, dot) : '';
    if (!raw || !packed || !KeyHasher.equal(raw.slice(dot + 1), flowSign(packed))) {
      throw new AgentgwError('invalid_api_key', 'This sign-in was not started from this browser (no or a changed sign-in cookie): start again from /ui.');
    }
    const flow = JSON.parse(Buffer.from(packed, 'base64url').toString('utf8')) as { state: string; nonce: string; verifier: string; exp: number };
    if (flow.exp < Date.now()) throw new AgentgwError('invalid_api_key', 'The sign-in took longer than 10 minutes: start again from /ui.');
    if (typeof q.state !== 'string' || q.state !== flow.state) throw new AgentgwError('invalid_api_key', 'The sign-in answer does not match the sign-in this browser started (state): start again from /ui.');
    if (typeof q.code !== 'string' || !q.code) throw new AgentgwError('validation_failed', 'The issuer sent no authorization code: start again from /ui.', { param: 'code' });
    const idToken = await rp.redeem(q.code, flow.verifier, redirectUriOf(req, c));
    const user = await rp.verifyIdToken(idToken, flow.nonce);
    const issued = signed.issue(user);
    const secure = req.protocol === 'https';
    const maxAge = Math.round(c.session_hours * 3600);
    return reply
      .header('cache-control', 'no-store')
      .header('set-cookie', [
        serializeCookie(SESSION_COOKIE, issued.cookie, { maxAge, httpOnly: true, sameSite: 'Strict', path: '/', secure }),
        serializeCookie(CSRF_COOKIE, issued.csrf, { maxAge, httpOnly: false, sameSite: 'Strict', path: '/', secure }),
        serializeCookie(FLOW_COOKIE, '', { maxAge: 0, httpOnly: true, sameSite: 'Lax', path: FLOW_PATH, secure }),
      ])
      .redirect('/ui/', 302);
  }
}
