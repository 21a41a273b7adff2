// Console sign-in through a real OpenID provider (oidc-provider on a loopback port) in a real browser (Debian's chromium
// driven by playwright-core), against a real gateway: the session cookie, its CSRF token, and the audit log's page.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConsoleSessions } from '../admin/console-session.js';
import { KeyHasher } from '../security/keys.js';
import { adminClient } from '../test-support/admin.js';
import { launchChromium } from '../test-support/browser.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { type TestIssuer, startTestIssuer } from '../test-support/oidc-provider.js';
import { existsSync } from 'node:fs';
import { CONSOLE_DIST } from './serve-console.js';

const CLIENT = { client_id: 'agentgw-console', client_secret: 'console-client-secret-never-shown' };
/** The deployment's secret, which signs the console's session cookies. */
const SECRET_KEY = 'oidc-e2e-deployment-secret-0123456789';
let idp: TestIssuer;
let gw: TestGateway;
let browser: Browser;
/** A page of another site (localhost is not 127.0.0.1's site) that posts a form to the gateway. */
let evil: Server;
let evilUrl: string;

beforeAll(async () => {
  if (!existsSync(`${CONSOLE_DIST}index.html`)) throw new Error(`The console is not built (${CONSOLE_DIST}): run \`npm run build\` first.`);
  idp = await startTestIssuer({
    ana: { name: 'Ana Ops', agentgw_role: 'acme-operators', agentgw_tenant: 'acme' },
    olaf: { name: 'Olaf Outsider', agentgw_role: 'marketing' },
  });
  gw = await startTestGateway({
    env: { AGENTGW_SECRET_KEY: SECRET_KEY },
    config: {
      console: {
        enabled: true,
        oidc: {
          issuer: idp.issuer,
          ...CLIENT,
          role_claim: 'agentgw_role',
          tenant_claim: 'agentgw_tenant',
          role_map: { 'acme-operators': 'tenant_admin', 'platform-team': 'admin' },
          scopes: ['openid', 'profile', 'agentgw'],
        },
      },
    },
  });
  idp.start({ ...CLIENT, redirect_uri: `${gw.url}/api/auth/oidc/callback` });
  const admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.call('POST', '/tenants', { id: 'acme', name: 'Acme Inc.' });
  await admin.call('POST', '/tenants', { id: 'globex', name: 'Globex Corp' });
  await admin.policy('acme-standard', { tenant_id: 'acme', monthly_budget: 20 });
  await admin.policy('globex-open', { tenant_id: 'globex', daily_budget: 5 });
  evil = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(
      `<form id="f" method="POST" action="${gw.url}/api/tenants" enctype="text/plain"><input name='{"id":"pwned","name":"x","pad":"' value='"}'></form><script>document.getElementById('f').submit()</script>`,
    );
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
  evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}/`;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await idp?.close();
  await new Promise((r) => (evil ? evil.close(r) : r(undefined)));
});

async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // The provider's built-in login page imports a web font: no network here.
  await context.route(/^https:\/\//, (r) => r.abort());
  return { context, page: await context.newPage() };
}

/** Signs in at the provider's login page (any password) and comes back to the console. */
async function signInThroughIssuer(page: Page, login: string): Promise<void> {
  await page.goto(`${gw.url}/ui/`);
  await page.getByRole('link', { name: 'Sign in with your identity provider' }).click();
  await page.waitForURL(`${idp.issuer}/**`);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any');
  await page.locator('button[type="submit"]').click();
}

/** The error of an admin interface answer (CONTRACT's error body). */
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });

describe('console sign-in through OpenID Connect', () => {
  test('signs in, sees only the mapped tenant, changes a policy and finds the change under its own name in the audit log', async () => {
    const { context, page } = await newPage();
    try {
      await signInThroughIssuer(page, 'ana');
      const who = page.getByTestId('whoami');
      await who.waitFor();
      await expect.poll(() => who.textContent()).toContain('Ana Ops');
      expect(await who.textContent()).toContain('tenant acme');
      expect(await who.textContent()).toContain('tenant admin');

      // The session is a cookie the page's script cannot read; nothing is kept in web storage.
      const cookies = await context.cookies(gw.url);
      const session = cookies.find((c) => c.name === 'agentgw_session')!;
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
      expect(session.expires).toBeGreaterThan(Date.now() / 1000 + 3600);
      expect(cookies.find((c) => c.name === 'agentgw_csrf')).toMatchObject({ httpOnly: false, sameSite: 'Strict' });
      expect(await page.evaluate('sessionStorage.length + localStorage.length')).toBe(0);
      expect(await page.evaluate('document.cookie.includes("agentgw_session")')).toBe(false);

      await nav(page, 'Policies').click();
      const cards = page.getByTestId('policy-card');
      await cards.first().waitFor();
      expect(await cards.count()).toBe(1);
      const card = cards.first();
      expect(await card.textContent()).toContain('acme-standard');
      await card.getByLabel('Monthly budget per agent (USD)').fill('42');
      await card.getByRole('button', { name: 'Save budget' }).click();
      await expect.poll(() => card.textContent()).toContain('$42.00 a month');

      await nav(page, 'Audit').click();
      const rows = page.getByTestId('audit-row');
      await rows.first().waitFor();
      const texts = await rows.allTextContents();
      const mine = texts.filter((t) => t.includes('policy.update'));
      expect(mine).toHaveLength(1);
      expect(mine[0]).toContain('Ana Ops');
      expect(mine[0]).toContain('acme-standard');
      expect(mine[0]).toMatch(/monthly_budget: 20 → 42/);
      // Only acme's entries: globex's tenant and policy were written by the root key too, and are not listed.
      expect(texts.join('\n')).not.toContain('globex');
      expect(texts.some((t) => t.includes('acme-standard') && t.includes('policy.create'))).toBe(true);
      // Filters: by who wrote.
      await page.getByLabel('Who').fill('Ana Ops');
      await expect.poll(async () => (await rows.allTextContents()).length).toBe(1);

      // The entry names the person: the OIDC subject and name.
      const audit = await adminClient(gw.adminUrl, gw.adminKey).call('GET', '/audit?object_id=acme-standard&kind=policy');
      expect(audit.data[0]).toMatchObject({ action: 'policy.update', actor: { kind: 'oidc', id: 'ana', name: 'Ana Ops' } });
      expect(JSON.stringify(audit)).not.toContain(CLIENT.client_secret);

      // A write with the cookie but without the session's CSRF token is refused, as is one with another session's token.
      const cookie = `agentgw_session=${session.value}`;
      const put = (headers: Record<string, string>) =>
        fetch(`${gw.adminUrl}/policies/acme-standard`, { method: 'PUT', headers: { cookie, 'content-type': 'application/json', ...headers }, body: '{"monthly_budget":1}' });
      const noToken = await put({});
      expect(noToken.status).toBe(403);
      expect((await errorOf(noToken))).toMatchObject({ code: 'csrf_failed', message: expect.stringMatching(/x-csrf-token/) });
      expect((await put({ 'x-csrf-token': 'forged' })).status).toBe(403);
      const csrf = cookies.find((c) => c.name === 'agentgw_csrf')!.value;
      expect((await put({ 'x-csrf-token': csrf })).status).toBe(200);

      // Signing out ends the session in the browser.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('link', { name: 'Sign in with your identity provider' }).waitFor();
      await expect.poll(async () => (await context.cookies(gw.url)).some((c) => c.name === 'agentgw_session')).toBe(false);
      // And on the server: the cookie, had it been copied before, is refused from then on.
      const after = await fetch(`${gw.adminUrl}/me`, { headers: { cookie } });
      expect(after.status).toBe(401);
      expect((await errorOf(after)).message).toMatch(/signed out.*sign in again/);
    } finally {
      await context.close();
    }
  });

  test('a cross-site form POST riding on the session cookie is refused with 403 and a sentence', async () => {
    const { context, page } = await newPage();
    try {
      await signInThroughIssuer(page, 'ana');
      await page.getByTestId('whoami').waitFor();
      await page.goto(evilUrl);
      await page.waitForURL(`${gw.url}/api/tenants`);
      const body = JSON.parse((await page.locator('body').textContent()) ?? '{}');
      expect(body.error).toMatchObject({ code: 'csrf_failed', message: expect.stringMatching(/cross-site request cannot write.*localhost/) });
      const tenants = await adminClient(gw.adminUrl, gw.adminKey).call('GET', '/tenants');
      expect(tenants.data.map((t: { id: string }) => t.id)).not.toContain('pwned');
    } finally {
      await context.close();
    }
  });

  test('an expired session and a tampered cookie are refused; a user whose claims map to no role is not signed in', async () => {
    // Cookies signed here with AGENTGW_SECRET_KEY, as the gateway signs them.
    const sessions = new ConsoleSessions(new KeyHasher(SECRET_KEY), idp.issuer, 8 * 3600);
    const who = { sub: 'ana', name: 'Ana Ops', role: 'tenant_admin' as const, tenant_id: 'acme' };
    const me = (cookie: string) => fetch(`${gw.adminUrl}/me`, { headers: { cookie: `agentgw_session=${cookie}` } });

    const fresh = sessions.issue(who).cookie;
    expect(await (await me(fresh)).json()).toEqual({ id: 'ana', name: 'Ana Ops', role: 'tenant_admin', tenant_id: 'acme' });

    // Signing out ends that session on the server; another session of the same person goes on.
    const other = sessions.issue(who).cookie;
    const signedIn = async (cookie: string) => ((await (await fetch(`${gw.url}/api/auth/session`, { headers: { cookie: `agentgw_session=${cookie}` } })).json()) as { signed_in: boolean }).signed_in;
    const out = sessions.issue(who).cookie;
    expect(await signedIn(out)).toBe(true);
    expect((await fetch(`${gw.url}/api/auth/logout`, { method: 'POST', headers: { cookie: `agentgw_session=${out}` } })).status).toBe(204);
    const ended = await me(out);
    expect(ended.status).toBe(401);
    expect((await errorOf(ended)).message).toBe('The console session was signed out: sign in again.');
    expect(ended.headers.get('set-cookie')).toMatch(/agentgw_session=;.*Max-Age=0/);
    expect(await signedIn(out)).toBe(false);
    expect((await me(other)).status).toBe(200);

    const expired = await me(sessions.issue(who, Date.now() - 9 * 3600_000).cookie);
    expect(expired.status).toBe(401);
    expect((await errorOf(expired)).message).toMatch(/expired at .*sign in again/);
    expect(expired.headers.get('set-cookie')).toMatch(/agentgw_session=;.*Max-Age=0/);

    // The same session with its role raised to admin and its tenant removed, under the original signature.
    const [v, body, mac] = fresh.split('.');
    const raised = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), role: 'admin', tenant_id: null })).toString('base64url');
    const tampered = await me(`${v}.${raised}.${mac}`);
    expect(tampered.status).toBe(401);
    expect((await errorOf(tampered)).message).toMatch(/not one this gateway signed/);

    // In the browser: an expired session cookie leads to the sign-in page, not into the console.
    const { context, page } = await newPage();
    try {
      await context.addCookies([
        { name: 'agentgw_session', value: sessions.issue(who, Date.now() - 9 * 3600_000).cookie, url: gw.url, httpOnly: true, sameSite: 'Strict' },
      ]);
      await page.goto(`${gw.url}/ui/`);
      await page.getByRole('link', { name: 'Sign in with your identity provider' }).waitFor();
      expect(await page.getByTestId('whoami').count()).toBe(0);

      // Olaf's only group maps to no role: the callback sends him back to the sign-in page, which says why, with no session.
      const callback = page.waitForResponse((r) => r.url().startsWith(`${gw.url}/api/auth/oidc/callback`));
      await signInThroughIssuer(page, 'olaf');
      const refused = await callback;
      expect(refused.status()).toBe(302);
      expect(refused.headers().location).toBe('/ui/?sign_in_error=no_role');
      await page.getByText('Your account has no role in this gateway').waitFor();
      expect(new URL(page.url()).search).toBe('');
      expect(await page.getByTestId('whoami').count()).toBe(0);
      expect((await context.cookies(gw.url)).map((c) => c.name)).not.toContain('agentgw_csrf');
    } finally {
      await context.close();
    }
  });
});
