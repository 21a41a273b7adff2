import type { FastifyRequest } from 'fastify';
import { AgentgwError, ROLES, type Role } from '../contract/index.js';
import { KeyHasher, generateId } from '../security/keys.js';
import type { Store } from '../storage/store.js';
import type { Principal } from './principal.js';

/** Sessions signed out before their expiry, shared by every node: one setting each, kept until the session would expire. */
export type EndedSessionStore = Pick<Store, 'getSetting' | 'setSetting' | 'settingsWithPrefix' | 'deleteSetting'>;
const ENDED_PREFIX = 'console_session_ended:';
/** A signed-out session is remembered this long past its expiry: a node whose clock runs behind still refuses it. */
const ENDED_MARGIN_S = 15 * 60;

/** The console session (HttpOnly, SameSite=Strict): who signed in through OpenID Connect, until when. */
export const SESSION_COOKIE = 'agentgw_session';
/** The CSRF token of that session, readable by the console's script, which sends it back as `x-csrf-token` on writes. */
export const CSRF_COOKIE = 'agentgw_csrf';
export const CSRF_HEADER = 'x-csrf-token';

export interface ConsoleSession {
  /** The session's own id: the CSRF token is bound to it. */
  sid: string;
  iss: string;
  sub: string;
  name: string;
  role: Role;
  tenant_id: string | null;
  /** Unix seconds. */
  exp: number;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Signs and reads console session cookies with the deployment's secret (AGENTGW_SECRET_KEY's HMAC, one purpose-derived key). */
export class ConsoleSessions {
  constructor(
    private readonly hasher: KeyHasher,
    private readonly issuer: string,
    private readonly ttlSeconds: number,
    /** Where signed-out sessions are kept; none: a session ends only at its expiry (tests of the cookie alone). */
    private readonly ended?: EndedSessionStore,
  ) {}

  issue(who: Omit<ConsoleSession, 'sid' | 'exp' | 'iss'>, now = Date.now()): { cookie: string; csrf: string; session: ConsoleSession } {
    const session: ConsoleSession = { sid: generateId('ses'), iss: this.issuer, ...who, exp: Math.floor(now / 1000) + this.ttlSeconds };
    const body = `v1.${Buffer.from(JSON.stringify(session)).toString('base64url')}`;
    return { cookie: `${body}.${this.hasher.sign('console-session', body)}`, csrf: this.csrfOf(session), session };
  }

  csrfOf(session: ConsoleSession): string {
    return this.hasher.sign('console-csrf', session.sid);
  }

  /** The session a cookie holds; 401 when it was changed, signed with another secret, issued by another issuer, or expired. */
  read(cookie: string, now = Date.now()): ConsoleSession {
    const clear = clearingHeaders();
    const dot = cookie.lastIndexOf('.');
    const body = dot > 0 ? cookie.slice(0, dot) : '';
    const mac = dot > 0 ? cookie.slice(dot + 1) : '';
    if (!body.startsWith('v1.') || !KeyHasher.equal(mac, this.hasher.sign('console-session', body))) {
      throw new AgentgwError('invalid_api_key', 'The console session cookie is not one this gateway signed (changed, or signed with another AGENTGW_SECRET_KEY): sign in again.', {
        headers: clear,
      });
    }
    let s: ConsoleSession;
    try {
      s = JSON.parse(Buffer.from(body.slice(3), 'base64url').toString('utf8')) as ConsoleSession;
    } catch {
      throw new AgentgwError('invalid_api_key', 'The console session cookie cannot be read: sign in again.', { headers: clear });
    }
    if (s.iss !== this.issuer) {
      throw new AgentgwError('invalid_api_key', `The console session was issued through ${String(s.iss)}, not the configured issuer: sign in again.`, { headers: clear });
    }
    if (!(typeof s.exp === 'number' && s.exp * 1000 > now)) {
      throw new AgentgwError('invalid_api_key', `The console session expired at ${new Date(Number(s.exp) * 1000).toISOString()}: sign in again.`, { headers: clear });
    }
    if (!ROLES.includes(s.role)) throw new AgentgwError('invalid_api_key', 'The console session names no known role: sign in again.', { headers: clear });
    // Its id is what a sign-out ends: a session without one could not be ended.
    if (typeof s.sid !== 'string' || s.sid === '') throw new AgentgwError('invalid_api_key', 'The console session names no session id: sign in again.', { headers: clear });
    return s;
  }

  /** The session a cookie holds, as `read`, and 401 when it was signed out (on any node) before its expiry. */
  async check(cookie: string, now = Date.now()): Promise<ConsoleSession> {
    const s = this.read(cookie, now);
    if (this.ended && (await this.ended.getSetting(ENDED_PREFIX + s.sid)) !== undefined) {
      throw new AgentgwError('invalid_api_key', 'The console session was signed out: sign in again.', { headers: clearingHeaders() });
    }
    return s;
  }

  /**
   * Signs the cookie's session out on every node: the cookie, kept or copied elsewhere, is refused from now on. Sessions
   * signed out earlier and expired since are then forgotten, in the background. A cookie that is not a live session is
   * left alone.
   */
  async end(cookie: string, now = Date.now()): Promise<void> {
    const ended = this.ended;
    if (!ended) return;
    let s: ConsoleSession;
    try {
      s = this.read(cookie, now);
    } catch {
      return;
    }
    await ended.setSetting(ENDED_PREFIX + s.sid, String(s.exp));
    void (async () => {
      for (const { key, value } of await ended.settingsWithPrefix(ENDED_PREFIX)) {
        if (!((Number(value) + ENDED_MARGIN_S) * 1000 > now)) await ended.deleteSetting(key);
      }
    })().catch(() => undefined);
  }

  /** The principal of a cookie-authenticated request; a write must carry the session's CSRF token. */
  async principal(req: FastifyRequest, cookie: string): Promise<Principal> {
    const s = await this.check(cookie);
    if (!SAFE_METHODS.has(req.method)) {
      const sent = req.headers[CSRF_HEADER];
      if (typeof sent !== 'string' || !KeyHasher.equal(sent, this.csrfOf(s))) {
        throw new AgentgwError(
          'csrf_failed',
          `A write with the console's session cookie needs its CSRF token in the ${CSRF_HEADER} header (the console sends it): reload the console, or use an admin key.`,
        );
      }
    }
    return { id: s.sub, role: s.role, tenant_id: s.tenant_id, kind: 'oidc', name: s.name };
  }
}

/**
 * A write without an Authorization header coming from another site (a form or script on some other page, riding on the
 * browser's cookies) is refused before anything else: 403 csrf_failed.
 */
export function refuseCrossSite(req: FastifyRequest): void {
  if (SAFE_METHODS.has(req.method) || req.headers.authorization !== undefined) return;
  const fetchSite = req.headers['sec-fetch-site'];
  const origin = req.headers.origin;
  let foreignOrigin = false;
  if (typeof origin === 'string') {
    try {
      foreignOrigin = origin === 'null' || new URL(origin).host !== req.headers.host;
    } catch {
      foreignOrigin = true;
    }
  }
  if (fetchSite === 'cross-site' || fetchSite === 'same-site' || foreignOrigin) {
    throw new AgentgwError(
      'csrf_failed',
      `A cross-site request cannot write to the admin interface (it came from ${typeof origin === 'string' ? origin : 'another site'}): write from the console itself, or send an admin key.`,
    );
  }
}

/** A cookie's value from a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface CookieOptions {
  maxAge: number;
  httpOnly: boolean;
  sameSite: 'Strict' | 'Lax';
  path: string;
  secure: boolean;
}

export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  return [
    `${name}=${value}`,
    `Path=${o.path}`,
    `Max-Age=${o.maxAge}`,
    o.httpOnly ? 'HttpOnly' : '',
    `SameSite=${o.sameSite}`,
    o.secure ? 'Secure' : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/** Set-Cookie values that end the console session in the browser. */
/** Headers of a refusal that makes the browser forget the session (Fastify sends an array header as one line each). */
function clearingHeaders(): Record<string, string> {
  return { 'set-cookie': clearCookies() } as unknown as Record<string, string>;
}

export function clearCookies(): string[] {
  return [
    serializeCookie(SESSION_COOKIE, '', { maxAge: 0, httpOnly: true, sameSite: 'Strict', path: '/', secure: false }),
    serializeCookie(CSRF_COOKIE, '', { maxAge: 0, httpOnly: false, sameSite: 'Strict', path: '/', secure: false }),
  ];
}
