// Route health on the console's System page in a real browser (Debian's chromium driven by playwright-core) against a
// real gateway: a target that failed is shown cooling down with its cooldown's end, without reloading the page (the card
// polls), beside a route written through the admin API; a viewer key is told it may not read it.
import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { launchChromium } from '../test-support/browser.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { CONSOLE_DIST } from './serve-console.js';

let gw: TestGateway;
let browser: Browser;
let admin: ReturnType<typeof adminClient>;
let agentKey: string;
let viewerKey: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(`${CONSOLE_DIST}index.html`)) throw new Error(`The console is not built (${CONSOLE_DIST}): run \`npm run build\` first.`);
  // The mock provider answers a model named error-503 with a 503: the first target of `flaky` fails and cools down.
  gw = await startTestGateway({ config: { providers: { a: { type: 'mock' }, b: { type: 'mock' } }, models: { flaky: ['a/error-503', 'b/steady'] } } });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.tenant('acme');
  agentKey = (await admin.agent('acme', 'bot')).api_key;
  viewerKey = (await admin.call('POST', '/admin-keys', { name: 'auditor', role: 'viewer' })).api_key;
  await admin.call('PUT', `/routes/${encodeURIComponent('team/*')}`, { strategy: 'weighted', targets: [{ model: 'b/steady', weight: 2 }, { model: 'a/other' }] }, 201);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

async function systemPage(key: string, onRequest?: (url: string) => void): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  if (onRequest) page.on('request', (r) => onRequest(r.url()));
  await page.goto(`${gw.url}/ui/`);
  await page.getByLabel('Admin key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('whoami').waitFor();
  await page.getByRole('link', { name: 'System' }).first().click();
  await page.getByTestId('route-health').waitFor();
  return page;
}

const row = (page: Page, alias: string, model: string) => page.locator(`[data-testid="route-target"][data-alias="${alias}"][data-model="${model}"]`);

test('a failed target shows as cooling down with its cooldown end, without a reload, beside a stored route', async () => {
  const page = await systemPage(gw.adminKey);
  await row(page, 'flaky', 'a/error-503').waitFor();
  expect(await row(page, 'flaky', 'a/error-503').getAttribute('data-state')).toBe('healthy');
  expect(await row(page, 'team/*', 'b/steady').getAttribute('data-state')).toBe('healthy');
  expect(await row(page, 'team/*', 'a/other').count()).toBe(1);

  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'flaky', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status).toBe(200);
  const cooled = row(page, 'flaky', 'a/error-503');
  await page.locator('[data-testid="route-target"][data-alias="flaky"][data-model="a/error-503"][data-state="cooling_down"]').waitFor({ timeout: 10_000 });
  const health = (await admin.call('GET', '/route-health')) as {
    routes: Array<{ alias: string; targets: Array<{ model: string; state: string; cooldown_until: string; error_rate: number }> }>;
  };
  const target = health.routes.find((r) => r.alias === 'flaky')!.targets.find((t) => t.model === 'a/error-503')!;
  expect(target.state).toBe('cooling_down');
  expect(Date.parse(target.cooldown_until)).toBeGreaterThan(Date.now());
  expect(target.error_rate).toBeGreaterThan(0);
  const text = await cooled.innerText();
  expect(text).toContain('cooling down');
  expect(text).toContain(`${Math.round(target.error_rate * 100)}%`);
  expect(await cooled.getByTestId('cooldown-until').innerText()).not.toBe('—');
  expect(await row(page, 'flaky', 'b/steady').getAttribute('data-state')).toBe('healthy');
  await page.context().close();

  const asked: string[] = [];
  const viewer = await systemPage(viewerKey, (url) => asked.push(url));
  await viewer.getByText('Only an admin key may read route health.').waitFor();
  expect(await viewer.getByTestId('route-target').count()).toBe(0);
  // A viewer's page does not ask for what it would be refused.
  expect(asked.filter((u) => u.includes('/api/route-health'))).toEqual([]);
  await viewer.context().close();
  expect(pageErrors).toEqual([]);
}, 60_000);
