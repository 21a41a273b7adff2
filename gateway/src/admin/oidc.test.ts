// Id token validation against a real OpenID provider's discovery document and JWKS, and the console session cookie.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair, importJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../config.js';
import { AgentgwError } from '../contract/index.js';
import { KeyHasher } from '../security/keys.js';
import { openStore } from '../storage/open-store.js';
import { type TestIssuer, startTestIssuer } from '../test-support/oidc-provider.js';
import { ConsoleSessions } from './console-session.js';
import { OidcClient } from './oidc.js';

let idp: TestIssuer;
let client: OidcClient;
const CLIENT_ID = 'agentgw-console';

beforeAll(async () => {
  idp = await startTestIssuer({});
  idp.start({ client_id: CLIENT_ID, client_secret: 'unused', redirect_uri: 'http://127.0.0.1:1/api/auth/oidc/callback' });
  client = new OidcClient({
    issuer: idp.issuer,
    client_id: CLIENT_ID,
    role_claim: 'groups',
    tenant_claim: 'tenant',
    role_map: { 'gw-admins': 'admin', 'gw-ops': 'tenant_admin', 'gw-readers': 'viewer' },
    scopes: ['openid'],
    session_hours: 8,
  });
});
afterAll(() => idp?.close());

/** An id token signed with `key` (the issuer's own by default), valid unless `claims` say otherwise. */
async function idToken(claims: Record<string, unknown>, key = idp.privateJwk, kid = 'test-key-1'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ nonce: 'n-1', groups: ['gw-ops'], tenant: 'acme', name: 'Ana Ops', ...claims })
    .setProtectedHeader({ alg: 'RS256', kid })
    .setIssuer((claims.iss as string) ?? idp.issuer)
    .setAudience((claims.aud as string) ?? CLIENT_ID)
    .setSubject('ana')
    .setIssuedAt(now - 10)
    .setExpirationTime((claims.exp as number) ?? now + 300)
    .sign(await importJWK(key, 'RS256'));
}

async function refusal(p: Promise<unknown>): Promise<AgentgwError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentgwError);
  return err as AgentgwError;
}

describe('id token validation', () => {
  test('a token of the configured issuer maps its groups to a role and its tenant claim to the tenant', async () => {
    expect(await client.verifyIdToken(await idToken({}), 'n-1')).toEqual({ sub: 'ana', name: 'Ana Ops', role: 'tenant_admin', tenant_id: 'acme' });
    // The strongest of several groups wins; an admin needs no tenant.
    expect(await client.verifyIdToken(await idToken({ groups: ['gw-readers', 'gw-admins'], tenant: undefined }), 'n-1')).toMatchObject({ role: 'admin', tenant_id: null });
  });

  test('a token from another issuer is refused, even signed with the same key', async () => {
    const err = await refusal(client.verifyIdToken(await idToken({ iss: 'http://127.0.0.1:9/other-issuer' }), 'n-1'));
    expect(err.status).toBe(401);
    expect(err.message).toMatch(/"iss" claim/);
  });

  test('a token signed with another key, for another client, expired, or without this sign-in\'s nonce is refused', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const foreign = await exportJWK(privateKey);
    expect((await refusal(client.verifyIdToken(await idToken({}, foreign), 'n-1'))).status).toBe(401);
    expect((await refusal(client.verifyIdToken(await idToken({}, foreign, 'other-kid'), 'n-1'))).status).toBe(401);
    expect((await refusal(client.verifyIdToken(await idToken({ aud: 'someone-else' }), 'n-1'))).message).toMatch(/"aud" claim/);
    expect((await refusal(client.verifyIdToken(await idToken({ exp: Math.floor(Date.now() / 1000) - 120 }), 'n-1'))).message).toMatch(/"exp" claim/);
    expect((await refusal(client.verifyIdToken(await idToken({}), 'n-2'))).message).toMatch(/nonce/);
  });

  test('a user whose claims map to no role, or a tenant_admin without a tenant, is refused with a sentence', async () => {
    const none = await refusal(client.verifyIdToken(await idToken({ groups: ['marketing'] }), 'n-1'));
    expect(none.code).toBe('insufficient_role');
    expect(none.message).toMatch(/has no agentgw role/);
    expect((await refusal(client.verifyIdToken(await idToken({ tenant: '' }), 'n-1'))).message).toMatch(/names no tenant/);
  });
});

describe('console session cookie', () => {
  const hasher = new KeyHasher('a-test-secret-of-this-deployment');
  const sessions = new ConsoleSessions(hasher, 'https://idp.example', 3600);
  const who = { sub: 'ana', name: 'Ana Ops', role: 'tenant_admin' as const, tenant_id: 'acme' };

  test('reads back what it signed; a changed, foreign, other-issuer or expired cookie is refused', async () => {
    const { cookie, session } = sessions.issue(who);
    expect(sessions.read(cookie)).toEqual(session);
    const [v, body, mac] = cookie.split('.');
    const raised = Buffer.from(JSON.stringify({ ...session, role: 'admin', tenant_id: null })).toString('base64url');
    expect(() => sessions.read(`${v}.${raised}.${mac}`)).toThrow(/not one this gateway signed/);
    expect(() => sessions.read(`${v}.${body}.${mac!.slice(0, -2)}xx`)).toThrow(/not one this gateway signed/);
    expect(() => new ConsoleSessions(new KeyHasher('another-secret'), 'https://idp.example', 3600).read(cookie)).toThrow(/not one this gateway signed/);
    expect(() => new ConsoleSessions(hasher, 'https://other.example', 3600).read(cookie)).toThrow(/configured issuer/);
    const old = sessions.issue(who, Date.now() - 2 * 3600_000).cookie;
    expect(() => sessions.read(old)).toThrow(/expired at/);
    // Signed here, but without the id a sign-out would end.
    const { sid: _sid, ...noId } = session;
    const unsid = `v1.${Buffer.from(JSON.stringify(noId)).toString('base64url')}`;
    expect(() => sessions.read(`${unsid}.${hasher.sign('console-session', unsid)}`)).toThrow(/names no session id/);
  });

  test('a signed-out session is refused by every node sharing the database; its record goes once it expired', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-sessions-'));
    const store = await openStore({ kind: 'sqlite', path: join(dir, 'agentgw.db'), usageThread: false });
    try {
      const [one, two] = [new ConsoleSessions(hasher, 'https://idp.example', 3600, store), new ConsoleSessions(hasher, 'https://idp.example', 3600, store)];
      const out = one.issue(who).cookie;
      const other = one.issue(who).cookie;
      await two.end(out);
      await expect(one.check(out)).rejects.toThrow('The console session was signed out: sign in again.');
      await expect(two.check(out)).rejects.toMatchObject({ code: 'invalid_api_key', status: 401 });
      expect((await one.check(other)).sub).toBe('ana');
      // A cookie that is not a live session records nothing.
      await one.end('v1.forged.mac');
      await one.end(one.issue(who, Date.now() - 2 * 3600_000).cookie);
      expect((await store.settingsWithPrefix('console_session_ended:')).length).toBe(1);
      // Past its expiry and the margin for clocks behind (15 minutes), the next sign-out forgets it, not before.
      const soon = Date.now() + 3600_000 + 14 * 60_000;
      const a = one.issue(who, soon);
      await one.end(a.cookie, soon);
      const ended = async () => (await store.settingsWithPrefix('console_session_ended:')).map((r) => r.key.split(':')[1]).sort();
      await new Promise((r) => setTimeout(r, 100));
      expect((await ended()).length).toBe(2);
      const later = Date.now() + 3600_000 + 16 * 60_000;
      const b = one.issue(who, later);
      await one.end(b.cookie, later);
      await expect.poll(ended).toEqual([a.session.sid, b.session.sid].sort());
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the CSRF token is bound to one session', () => {
    const a = sessions.issue(who);
    const b = sessions.issue(who);
    expect(a.csrf).not.toBe(b.csrf);
    expect(sessions.csrfOf(a.session)).toBe(a.csrf);
  });
});

describe('console.oidc in agentgw.yaml', () => {
  test('defaults fill the optional keys; a bad issuer or an unknown role in role_map is refused naming the field', () => {
    const c = loadConfig({ env: {}, overrides: { console: { oidc: { issuer: 'https://idp.example', client_id: 'agentgw' } } } });
    expect(c.console.oidc).toEqual({ issuer: 'https://idp.example', client_id: 'agentgw', role_claim: 'agentgw_role', scopes: ['openid', 'profile', 'email'], session_hours: 8 });
    expect(() => loadConfig({ env: {}, overrides: { console: { oidc: { issuer: 'not a url', client_id: 'agentgw' } } } })).toThrow(/console\.oidc\.issuer/);
    expect(() => loadConfig({ env: {}, overrides: { console: { oidc: { issuer: 'https://idp.example', client_id: 'agentgw', role_map: { ops: 'root' } } } } })).toThrow(
      /console\.oidc\.role_map/,
    );
  });
});
