import { writeFileSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE, runCli, serveGateway, type ServedGateway } from './__fixtures__/harness.js';

/** A port nothing listens on: bound, read, released. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** One sentence on stderr, no stack frame. */
function expectOneSentence(stderr: string): void {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^Error: /);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('errors for people', () => {
  let gw: ServedGateway;
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-cli-errors-'));

  beforeAll(async () => {
    gw = await serveGateway();
  });
  afterAll(async () => {
    if (gw) await gw.stop();
  });

  it('an unreachable gateway', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/api`;
    const res = await runCli(['plan', '-f', EXAMPLE], { AGENTGW_ADMIN_URL: url, AGENTGW_ADMIN_KEY: 'adk_x' });
    expect(res.code).toBe(1);
    expectOneSentence(res.stderr);
    expect(res.stderr).toBe(`Error: cannot reach the agentgw admin interface at ${url}: connection refused\n`);
  });

  it('a wrong admin key (401) fails plan, and apply before it asks anything, once', async () => {
    for (const args of [['plan', '-f', EXAMPLE], ['apply', '-f', EXAMPLE], ['apply', '-f', EXAMPLE, '--auto-approve'], ['destroy', '-f', EXAMPLE]]) {
      const res = await runCli(args, { ...gw.env, AGENTGW_ADMIN_KEY: 'adk_wrongwrongwrongwrongwrongwrong12' });
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stdout).toBe('');
      expectOneSentence(res.stderr);
      expect(res.stderr).toMatch(/401 invalid_api_key.*--admin-key or AGENTGW_ADMIN_KEY/);
    }
  });

  it('a bad file, before the gateway is contacted', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'version: 1\npolicies:\n  - id: p\n    monthly_budget: lots\n');
    const res = await runCli(['apply', '-f', bad, '--auto-approve'], { AGENTGW_ADMIN_URL: 'http://127.0.0.1:9/api', AGENTGW_ADMIN_KEY: 'x' });
    expect(res.code).toBe(1);
    expectOneSentence(res.stderr);
    expect(res.stderr).toMatch(new RegExp(`^Error: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4:21: policies\\[0\\]\\.monthly_budget: `));
  });

  it('a variable outside AGENTGW_VAR_', async () => {
    const bad = join(dir, 'env.yaml');
    writeFileSync(bad, 'version: 1\ntenants:\n  - id: t\n    name: ${{ env "HOME" }}\n');
    const res = await runCli(['plan', '-f', bad], gw.env);
    expect(res.code).toBe(1);
    expectOneSentence(res.stderr);
    expect(res.stderr).toContain(`${bad}:4:11: "HOME" cannot be interpolated`);
  });

  it('apply without a terminal and without --auto-approve shows the plan, then names the flag', async () => {
    const res = await runCli(['apply', '-f', EXAMPLE], gw.env);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/^\+ create tenant acme\n[\s\S]*\nPlan: \d+ to add, 0 to change, 0 to destroy\.\n$/);
    expectOneSentence(res.stderr);
    expect(res.stderr).toContain('--auto-approve');
    const json = await runCli(['apply', '-f', EXAMPLE, '--json'], gw.env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).summary.add).toBeGreaterThan(0);
    expectOneSentence(json.stderr);
    expect(json.stderr).toContain('apply --json cannot ask for confirmation: pass --auto-approve');
  });

  it('plan without a file says what to pass', async () => {
    const res = await runCli(['plan'], gw.env);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('Error: plan needs a desired state: pass -f FILE (or a directory), or --cdktf DIR\n');
  });

  it('a server-side refusal of a resource command', async () => {
    const res = await runCli(['tenants', 'get', 'nope'], gw.env);
    expect(res.code).toBe(1);
    expectOneSentence(res.stderr);
    expect(res.stderr).toMatch(/tenant_not_found/);
  });
});
