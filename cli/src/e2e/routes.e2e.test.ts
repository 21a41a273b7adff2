import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { spawnGateway, type SpawnedGateway } from '../../../gateway/src/test-support/spawn-gateway.js';
import { AdminClient } from '../admin-client/admin-client.js';
import { runCli } from './__fixtures__/harness.js';

// Routes through the built agentgw against a real server: plan shows them, apply writes them and the gateway serves
// them at once, a second plan is empty, export carries them, and an alias of agentgw.yaml is never touched.
describe.sequential('agentgw plan/apply/export of routes against a real server', () => {
  let gw: SpawnedGateway;
  let dir: string;
  let admin: AdminClient;
  const adminKey = 'adk_' + 'routes'.repeat(5) + 'xy';
  const cli = (...args: string[]) => runCli(args, { AGENTGW_ADMIN_URL: gw.adminUrl, AGENTGW_ADMIN_KEY: adminKey });
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentgw-routes-e2e-'));
    gw = await spawnGateway({
      config: {
        storage: { kind: 'sqlite', path: join(dir, 'agentgw.db') },
        log_level: 'silent',
        providers: { a: { type: 'mock' }, b: { type: 'mock' } },
        models: { fixed: ['a/alpha'] },
      },
      env: { PATH: process.env.PATH, AGENTGW_ADMIN_KEY: adminKey },
      inheritEnv: false,
      cwd: dir,
    });
    admin = new AdminClient({ baseUrl: gw.adminUrl, adminKey });
  });
  afterAll(async () => {
    if (gw) expect(await gw.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  const FILE = `version: 1
tenants:
  - id: acme
    name: Acme
agents:
  - name: bot
    tenant_id: acme
routes:
  - alias: smart
    strategy: fallback
    targets:
      - model: a/alpha
      - { model: b/beta, priority: 1, rpm: 60 }
  - alias: "team/*"
    strategy: weighted
    targets:
      - { model: b/beta, weight: 3 }
      - model: a/alpha
`;

  it('plan shows the routes readably (exit 2); apply writes them and the gateway serves them', async () => {
    const file = write('routes.yaml', FILE);
    const plan = await cli('plan', '-f', file, '--detailed-exitcode');
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain(['+ create route smart', '    strategy: "fallback"', '    targets: a/alpha, b/beta (priority 1, rpm 60)'].join('\n'));
    expect(plan.stdout).toContain(['+ create route team/*', '    strategy: "weighted"', '    targets: b/beta (weight 3), a/alpha'].join('\n'));
    expect(plan.stdout).toContain('Plan: 4 to add, 0 to change, 0 to destroy.');

    const apply = await cli('apply', '-f', file, '--auto-approve', '--keys-out', join(dir, 'keys.json'));
    expect(apply.stderr).toBe('');
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain('Apply complete: 4 added, 0 changed, 0 destroyed.');
    expect(await admin.getRoute('team/*')).toMatchObject({ source: 'api', strategy: 'weighted', labels: { managed_by: 'agentgw' } });

    const key = JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8'))['acme/bot'] as string;
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'team/coder', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe('beta');
  });

  it('a second plan is empty; an edit plans exactly the edit', async () => {
    const again = await cli('plan', '-f', join(dir, 'routes.yaml'), '--detailed-exitcode');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('No changes: the gateway matches the desired state.\nPlan: 0 to add, 0 to change, 0 to destroy.\n');
    const edited = write('edited.yaml', FILE.replace('strategy: fallback', 'strategy: latency'));
    const plan = await cli('plan', '-f', edited, '--detailed-exitcode');
    expect(plan.code).toBe(2);
    expect(plan.stdout).toBe(['~ update route smart', '    strategy: "fallback" -> "latency"', '', 'Plan: 0 to add, 1 to change, 0 to destroy.', ''].join('\n'));
    expect((await cli('apply', '-f', edited, '--auto-approve')).code).toBe(0);
    expect(await admin.getRoute('smart')).toMatchObject({ strategy: 'latency', targets: [{ model: 'a/alpha' }, { model: 'b/beta', priority: 1, rpm: 60 }] });
  });

  it('export carries the stored routes, not the config ones, and plans no changes applied back with --prune', async () => {
    const res = await cli('export', '-o', join(dir, 'exported.yaml'));
    expect(res.code).toBe(0);
    const exported = parse(readFileSync(join(dir, 'exported.yaml'), 'utf8'));
    expect(exported.routes.map((r: { alias: string }) => r.alias)).toEqual(['smart', 'team/*']);
    const plan = await cli('plan', '-f', join(dir, 'exported.yaml'), '--prune', '--detailed-exitcode');
    expect(plan.stdout).toContain('No changes');
    expect(plan.code).toBe(0);
  });

  it("a tenant_admin key's apply --prune leaves the routes alone; a file of it that names a new route fails its plan", async () => {
    const { api_key: teamKey } = await admin.createAdminKey({ name: 'acme-ci', role: 'tenant_admin', tenant_id: 'acme' });
    const team = (...args: string[]) => runCli(args, { AGENTGW_ADMIN_URL: gw.adminUrl, AGENTGW_ADMIN_KEY: teamKey });
    const file = write('team.yaml', 'version: 1\nagents:\n  - name: bot\n    tenant_id: acme\n  - name: helper\n    tenant_id: acme\n');
    const apply = await team('apply', '-f', file, '--prune', '--auto-approve');
    expect(apply.stderr).toBe('');
    expect(apply.code).toBe(0);
    expect(apply.stdout).toContain('+ create agent acme/helper');
    expect(apply.stdout).not.toMatch(/route|tenant acme/);
    expect((await admin.listAllRoutes()).map((r) => r.alias)).toEqual(['fixed', 'smart', 'team/*']);
    expect(await admin.getTenant('acme')).toMatchObject({ id: 'acme' });
    const withRoute = write('team-route.yaml', `${readFileSync(file, 'utf8')}routes:\n  - alias: fast\n    strategy: fallback\n    targets: [{ model: b/beta }]\n`);
    const plan = await team('plan', '-f', withRoute);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain('route "fast" is written by admin keys only, and this key has the tenant_admin role; the file creates it');
  });

  it('agentgw routes put, list, get and delete; an alias of agentgw.yaml is refused with the server\'s sentence', async () => {
    const put = await cli('routes', 'put', 'cli/*', '--strategy', 'weighted', '--targets', '[{"model":"a/alpha","weight":2},{"model":"b/beta","rpm":30}]', '--label', 'team=x');
    expect(put.stderr).toBe('');
    expect(put.code).toBe(0);
    expect(put.stdout).toBe('Created route cli/*: weighted over a/alpha (weight 2), b/beta (rpm 30).\n');
    const again = await cli('routes', 'put', 'cli/*', '--target', 'b/beta', '--target', 'a/alpha');
    expect(again.stdout).toBe('Updated route cli/*: fallback over b/beta, a/alpha.\n');
    expect(await admin.getRoute('cli/*')).toMatchObject({ strategy: 'fallback', labels: { team: 'x' }, source: 'api' });
    const list = await cli('routes', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^ALIAS +STRATEGY +TARGETS +SOURCE +LABELS$/m);
    expect(list.stdout).toMatch(/^fixed +fallback +a\/alpha +config/m);
    expect(list.stdout).toMatch(/^cli\/\* +fallback +b\/beta, a\/alpha +api +team=x/m);
    const get = await cli('routes', 'get', 'cli/*', '--json');
    expect(JSON.parse(get.stdout)).toMatchObject({ alias: 'cli/*', targets: [{ model: 'b/beta' }, { model: 'a/alpha' }] });
    const bad = await cli('routes', 'put', 'cli/*', '--target', 'nosuch/x');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('nosuch');
    const readOnly = await cli('routes', 'delete', 'fixed');
    expect(readOnly.code).toBe(1);
    expect(readOnly.stderr).toContain('comes from the server config');
    const del = await cli('routes', 'delete', 'cli/*');
    expect(del.code).toBe(0);
    expect(del.stdout).toBe('Deleted route cli/*.\n');
    expect((await admin.listAllRoutes()).map((r) => r.alias)).not.toContain('cli/*');
  });

  it('an alias of agentgw.yaml is never touched: changing it is a plan error naming it, pruning leaves it', async () => {
    const bad = write('config-alias.yaml', `version: 1\nroutes:\n  - alias: fixed\n    strategy: fallback\n    targets: [{ model: b/beta }]\n`);
    const plan = await cli('plan', '-f', bad);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toMatch(/route "fixed" comes from the server config/);
    const prune = await cli('apply', '-f', write('empty.yaml', 'version: 1\n'), '--prune', '--auto-approve');
    expect(prune.code).toBe(0);
    expect(prune.stdout).toContain('- delete route smart');
    expect(prune.stdout).not.toContain('fixed');
    expect((await admin.listAllRoutes()).map((r) => `${r.alias}:${r.source}`)).toEqual(['fixed:config']);
  });
});
