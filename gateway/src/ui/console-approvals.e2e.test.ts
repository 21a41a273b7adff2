// The console's Approvals page in a real browser (Debian's chromium driven by playwright-core) against a real gateway
// whose policy holds a tool call for a person: the upstream is a local server speaking OpenAI's wire format that
// proposes the call, the agent the official OpenAI SDK, waiting at the gateway until someone decides.
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Approval } from '../contract/index.js';
import { adminClient } from '../test-support/admin.js';
import { launchChromium } from '../test-support/browser.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';
import { type ScriptedOpenAI, startScriptedOpenAI } from '../test-support/scripted-openai.js';
import { CONSOLE_DIST } from './serve-console.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SHOTS = `${ROOT}console/screenshots/`;
const PLAN = `kubectl apply -f deploy/${'service-'.repeat(12)}prod.yaml --server-side\nkubectl rollout status deploy/api`;
const TOOLS: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'deploy', parameters: { type: 'object', properties: { env: { type: 'string' }, plan: { type: 'string' } } } } },
];

let up: ScriptedOpenAI;
let gw: TestGateway;
let browser: Browser;
let admin: ReturnType<typeof adminClient>;
let agentKey: string;
let viewerKey: string;
let globexAdminKey: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(`${CONSOLE_DIST}index.html`)) throw new Error(`The console is not built (${CONSOLE_DIST}): run \`npm run build\` first.`);
  up = await startScriptedOpenAI(() => ({ content: 'Deploying.', tool_calls: [{ id: 'call_deploy', name: 'deploy', arguments: { env: 'prod', plan: PLAN } }] }));
  gw = await startTestGateway({ config: { providers: { openai: { type: 'openai', base_url: up.url, api_key: 'sk-up' } }, approvals: { timeout_s: 120 } } });
  admin = adminClient(gw.adminUrl, gw.adminKey);
  await admin.call('POST', '/tenants', { id: 'acme', name: 'Acme Inc.' });
  await admin.policy('careful', { tenant_id: 'acme', tool_rules: [{ tools: ['deploy'], action: 'approve', reason: 'deploys need a person' }] });
  agentKey = (await admin.agent('acme', 'deployer', 'careful')).api_key;
  viewerKey = (await admin.call('POST', '/admin-keys', { name: 'auditor', role: 'viewer' })).api_key;
  await admin.call('POST', '/tenants', { id: 'globex', name: 'Globex Corp' });
  globexAdminKey = (await admin.call('POST', '/admin-keys', { name: 'globex ops', role: 'tenant_admin', tenant_id: 'globex' })).api_key;
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await up?.close();
});

/** An agent's request whose answer proposes the deploy: it waits at the gateway until someone decides. */
function heldRequest(trace: string) {
  const client = new OpenAI({ apiKey: agentKey, baseURL: gw.baseUrl, maxRetries: 0, defaultHeaders: { 'x-agent-trace-id': trace } });
  return client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'ship it' }], tools: TOOLS });
}

/** The pending approval of a trace, as soon as the gateway holds its call. */
async function pendingOf(trace: string): Promise<Approval> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const page = (await admin.call('GET', `/approvals?status=pending&trace_id=${trace}`)) as { data: Approval[] };
    if (page.data[0]) return page.data[0];
    if (Date.now() > deadline) throw new Error(`no pending approval for trace ${trace}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function signIn(key: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) pageErrors.push(msg.text());
  });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${gw.url}/ui/`);
  await page.getByLabel('Admin key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('whoami').waitFor();
  return { context, page };
}

/** The whole page at `width`, the window as tall as the page (as console.e2e.test.ts takes its pictures). */
async function shoot(page: Page, path: string, width: number): Promise<void> {
  await page.setViewportSize({ width, height: 600 });
  const height = await page.evaluate('document.documentElement.scrollHeight');
  await page.setViewportSize({ width, height: Math.min(8000, Number(height)) });
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
  await page.screenshot({ path });
}

/**
 * Elements that carry a number or are a button, which the page hides, cuts off or draws outside the window (also when
 * the page scrolls sideways): each as `selector "text"`.
 */
function hiddenNumbersAndButtons(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const out = [];
    const width = window.innerWidth;
    if (document.documentElement.scrollWidth > width) out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + width);
    const selectors = ['main button', '.nav-count', '[data-testid="waiting"]', '[data-testid="expires"]', '[data-testid="waited"]', '.approvals-table .badge', '.card-head .badge'];
    for (const sel of selectors) {
      for (const el of document.querySelectorAll(sel)) {
        const r = el.getBoundingClientRect();
        const style = getComputedStyle(el);
        const what = sel + ' "' + el.textContent.trim() + '"';
        if (el.offsetParent === null || style.visibility === 'hidden' || r.width === 0 || r.height === 0) out.push(what + ' is hidden');
        else if (r.left < 0 || r.right > width + 0.5) out.push(what + ' is outside the window (' + Math.round(r.left) + '-' + Math.round(r.right) + ')');
        else if (el.scrollWidth > el.clientWidth + 1 && style.overflow !== 'visible') out.push(what + ' is cut off');
      }
    }
    return out;
  })()`);
}

const nav = (page: Page) => page.getByRole('navigation', { name: 'Console' });

describe('approvals in the console', () => {
  test('a held call shows within 2 s with its arguments; Approve releases it; the trace shows who decided and how long it waited', async () => {
    const { context, page } = await signIn(gw.adminKey);
    await nav(page).getByRole('link', { name: /^Approvals/ }).click();
    await page.getByTestId('queue-empty').waitFor();
    expect(await page.getByTestId('pending-count').count()).toBe(0);

    const answer = heldRequest('deploy-run-1');
    const a = await pendingOf('deploy-run-1');
    const held = Date.now();
    const card = page.locator(`[data-testid="pending-approval"][data-approval="${a.id}"]`);
    await card.waitFor({ timeout: 2000 });
    console.log(`[console] a held call appeared on the Approvals page ${Date.now() - held} ms after the gateway held it`);
    // The tool, the rule and its reason, the agent, the trace, the clocks, the arguments whole (a line each).
    expect(await card.locator('.approval-tool').textContent()).toBe('deploy');
    expect(await card.getByTestId('approval-rule').textContent()).toBe('rule 1 of policy careful — deploys need a person');
    expect(await card.textContent()).toContain('deployer');
    expect(await card.getByRole('link', { name: 'deploy-run-1' }).count()).toBe(1);
    expect(await card.getByTestId('waiting').textContent()).toMatch(/^\d+(\.\d+)? (ms|s)$/);
    expect(await card.getByTestId('expires').textContent()).toMatch(/^(\d+ min \d+ s|\d+(\.\d+)? s)$/);
    const args = (await card.getByTestId('approval-arguments').textContent())!;
    expect(args).toContain('"env": "prod"');
    expect(args).toContain(`"plan": "${PLAN.split('\n')[0]}\\n\n      kubectl rollout status deploy/api"`);
    // The navigation's badge counts it, on every page.
    await expect.poll(() => page.getByTestId('pending-count').textContent(), { timeout: 3000 }).toBe('1');
    await nav(page).getByRole('link', { name: 'Traces', exact: true }).click();
    await page.getByRole('heading', { name: 'Traces' }).waitFor();
    expect(await page.getByTestId('pending-count').textContent()).toBe('1');
    await nav(page).getByRole('link', { name: /^Approvals/ }).click();
    await card.waitFor();

    // At 1280 and 390 px, with the call waiting: no number or button hidden, cut off or out of the window.
    await shoot(page, `${SHOTS}approvals-pending-1280.png`, 1280);
    expect(await hiddenNumbersAndButtons(page)).toEqual([]);
    await shoot(page, `${SHOTS}approvals-pending-390.png`, 390);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await hiddenNumbersAndButtons(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 900 });

    await card.getByLabel(`Comment on ${a.id}`).fill('checked the plan');
    await card.getByTestId('approve').click();
    // The held request completes with the call as proposed.
    const done = await answer;
    expect(done.choices[0]!.message.tool_calls?.map((c) => c.type === 'function' && c.function.name)).toEqual(['deploy']);
    await card.waitFor({ state: 'detached', timeout: 3000 });
    const row = page.locator(`[data-testid="decided-row"][data-approval="${a.id}"]`);
    await row.waitFor({ timeout: 3000 });
    expect(await row.getAttribute('data-status')).toBe('approved');
    expect(await row.locator('.decided-by').textContent()).toBe('root');
    expect(await row.textContent()).toContain('“checked the plan”');
    expect(await row.getByTestId('waited').textContent()).toMatch(/^\d+(\.\d+)? (ms|s)$/);
    await expect.poll(() => page.getByTestId('pending-count').count(), { timeout: 3000 }).toBe(0);
    await shoot(page, `${SHOTS}approvals-decided-1280.png`, 1280);
    expect(await hiddenNumbersAndButtons(page)).toEqual([]);
    await shoot(page, `${SHOTS}approvals-decided-390.png`, 390);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await hiddenNumbersAndButtons(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 900 });

    // The trace's waterfall: the step's tool call, approved, by whom, after how long.
    await row.getByRole('link', { name: 'deploy-run-1' }).click();
    const step = page.getByTestId('step-row').first();
    await expect.poll(() => step.textContent(), { timeout: 5000 }).toContain('1 tool call · 1 held for a person');
    await step.click();
    const call = page.getByTestId('tool-calls').locator('li[data-decision="approved"]');
    await call.waitFor();
    await expect
      .poll(() => call.getByTestId('tool-call-approval').textContent(), { timeout: 5000 })
      .toMatch(new RegExp(`approved by root after \\d+(\\.\\d+)? (ms|s): “checked the plan” \\(${a.id}\\)`));
    await shoot(page, `${SHOTS}trace-approved-1280.png`, 1280);
    await context.close();
  }, 60_000);

  test('a viewer sees the queue but no buttons, another tenant not even the call; Deny with a comment refuses the call, naming the approval', async () => {
    const answer = heldRequest('deploy-run-2');
    const a = await pendingOf('deploy-run-2');
    const viewer = await signIn(viewerKey);
    await nav(viewer.page).getByRole('link', { name: /^Approvals/ }).click();
    const seen = viewer.page.locator(`[data-testid="pending-approval"][data-approval="${a.id}"]`);
    await seen.waitFor({ timeout: 2000 });
    expect(await viewer.page.getByTestId('pending-count').textContent()).toBe('1');
    for (const name of ['Approve', 'Deny']) expect(await viewer.page.getByRole('button', { name }).count()).toBe(0);
    await viewer.context.close();

    // Another tenant's admin sees neither the call nor a count.
    const other = await signIn(globexAdminKey);
    await nav(other.page).getByRole('link', { name: /^Approvals/ }).click();
    await other.page.getByTestId('queue-empty').waitFor();
    await new Promise((r) => setTimeout(r, 2500));
    expect(await other.page.getByTestId('pending-count').count()).toBe(0);
    expect(await other.page.locator('main').textContent()).not.toContain(a.id);
    await other.context.close();

    const { context, page } = await signIn(gw.adminKey);
    await nav(page).getByRole('link', { name: /^Approvals/ }).click();
    const card = page.locator(`[data-testid="pending-approval"][data-approval="${a.id}"]`);
    await card.getByLabel(`Comment on ${a.id}`).fill('not on a Friday');
    await card.getByTestId('deny').click();
    const done = await answer;
    expect(done.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(done.choices[0]!.message.content).toContain(a.id);
    const row = page.locator(`[data-testid="decided-row"][data-approval="${a.id}"]`);
    await row.waitFor({ timeout: 3000 });
    expect(await row.getAttribute('data-status')).toBe('denied');
    expect(await row.textContent()).toContain('“not on a Friday”');
    await context.close();
  }, 60_000);

  test('a call decided elsewhere first: the button says so instead of failing silently', async () => {
    const answer = heldRequest('deploy-run-3');
    const a = await pendingOf('deploy-run-3');
    const { context, page } = await signIn(gw.adminKey);
    // This page's queue keeps showing the call as it was, as a page between two polls does after another person decided.
    await page.route('**/api/approvals?status=pending*', async (route) => {
      const res = await route.fetch();
      await route.fulfill({ response: res, json: { data: [a], next_cursor: null } });
    });
    await page.goto(`${gw.url}/ui/approvals`);
    const card = page.locator(`[data-testid="pending-approval"][data-approval="${a.id}"]`);
    await card.waitFor({ timeout: 3000 });
    await admin.call('POST', `/approvals/${a.id}/deny`, { comment: 'first' });
    await answer;
    await card.getByTestId('approve').click();
    await expect.poll(() => page.getByRole('alert').allTextContents(), { timeout: 3000 }).toEqual(
      expect.arrayContaining([expect.stringMatching(new RegExp(`deploy \\(${a.id}\\) was decided before your approval: .+\\(approval_decided\\)`))]),
    );
    // A poll in flight while the page closes would have its route.fetch fail after the test: its route is dropped first.
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await context.close();
  }, 60_000);

  test('the pages logged no errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
