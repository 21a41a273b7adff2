import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../../gateway/src/test-support/gateway.js';
import { buildWorkspace, PACKAGE_DIR } from '../test-support/build.js';
import { PROVIDER_ADDRESS } from '../schema/resource-specs.js';

const hasTerraform = spawnSync('terraform', ['version'], { stdio: 'ignore' }).status === 0;

/** agentgw_route through the real terraform CLI and the plugin (dev_overrides): plan, apply, update, import, destroy. */
describe.skipIf(!hasTerraform)('terraform manages routes through the plugin', { timeout: 240_000 }, () => {
  let gw: TestGateway;
  let work: string;
  let env: NodeJS.ProcessEnv;
  let agentKey: string;

  function terraform(dir: string, ...args: string[]): Promise<{ status: number | null; out: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('terraform', [...args, '-no-color'], { cwd: join(work, dir), env });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, out }));
    });
  }
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${gw.adminKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as any) };
  };
  const chat = async (model: string) => {
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const writeConfig = (dir: string, resources: Record<string, unknown>) => {
    mkdirSync(join(work, dir), { recursive: true });
    const config = { terraform: { required_providers: { agentgw: { source: 'agentgw/agentgw' } } }, provider: { agentgw: [{}] }, resource: { agentgw_route: resources } };
    writeFileSync(join(work, dir, 'main.tf.json'), JSON.stringify(config, null, 2));
  };

  const team = { alias: 'team/*', strategy: 'weighted', targets: [{ model: 'a/alpha', weight: 3 }, { model: 'b/beta', rpm: 60 }], labels: { team: 'x' } };

  beforeAll(async () => {
    buildWorkspace();
    gw = await startTestGateway({ config: { providers: { a: { type: 'mock' }, b: { type: 'mock' } }, models: { fixed: ['a/alpha'] } } });
    expect((await api('POST', '/tenants', { id: 'acme', name: 'Acme' })).status).toBe(201);
    agentKey = (await api('POST', '/agents', { tenant_id: 'acme', name: 'bot' })).body.api_key;
    work = mkdtempSync(join(tmpdir(), 'agentgw-tf-route-'));
    writeFileSync(join(work, 'terraformrc'), `provider_installation {\n  dev_overrides {\n    "${PROVIDER_ADDRESS}" = "${join(PACKAGE_DIR, 'bin')}"\n  }\n  direct {}\n}\n`);
    env = {
      ...process.env,
      TF_CLI_CONFIG_FILE: join(work, 'terraformrc'),
      CHECKPOINT_DISABLE: '1',
      TF_IN_AUTOMATION: '1',
      AGENTGW_ADMIN_URL: gw.adminUrl,
      AGENTGW_ADMIN_KEY: gw.adminKey,
    };
  });
  afterAll(async () => {
    await gw?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('applies a glob route that the gateway serves at once, then plans nothing', async () => {
    writeConfig('stack', { team });
    const apply = await terraform('stack', 'apply', '-auto-approve', '-input=false');
    expect(apply.out).toContain('Apply complete! Resources: 1 added, 0 changed, 0 destroyed.');
    expect(apply.status).toBe(0);
    expect((await api('GET', `/routes/${encodeURIComponent('team/*')}`)).body).toMatchObject({
      source: 'api',
      strategy: 'weighted',
      targets: [
        { model: 'a/alpha', weight: 3, priority: 0, rpm: null, tpm: null },
        { model: 'b/beta', weight: 1, priority: 0, rpm: 60, tpm: null },
      ],
      labels: { team: 'x' },
    });
    const served = await chat('team/coder');
    expect(served.status).toBe(200);
    expect(['alpha', 'beta']).toContain(served.body.model);

    const again = await terraform('stack', 'plan', '-detailed-exitcode', '-input=false');
    expect(again.out).toContain('No changes.');
    expect(again.status).toBe(0);
  });

  it('plans exactly a changed strategy and target, applies them in place, and shows drift made on the server', async () => {
    writeConfig('stack', { team: { ...team, strategy: 'fallback', targets: [{ model: 'b/beta' }] } });
    const plan = await terraform('stack', 'plan', '-detailed-exitcode', '-input=false');
    expect(plan.status).toBe(2);
    expect(plan.out).toContain('Plan: 0 to add, 1 to change, 0 to destroy.');
    expect(plan.out).toMatch(/strategy += "weighted" -> "fallback"/);
    expect((await terraform('stack', 'apply', '-auto-approve', '-input=false')).status).toBe(0);
    expect((await api('GET', `/routes/${encodeURIComponent('team/*')}`)).body).toMatchObject({ strategy: 'fallback', targets: [{ model: 'b/beta', weight: 1 }] });
    expect((await chat('team/coder')).body.model).toBe('beta');

    await api('PUT', `/routes/${encodeURIComponent('team/*')}`, { strategy: 'latency', targets: [{ model: 'b/beta' }] });
    const drift = await terraform('stack', 'plan', '-detailed-exitcode', '-input=false');
    expect(drift.status).toBe(2);
    expect(drift.out).toMatch(/strategy += "latency" -> "fallback"/);
    expect((await terraform('stack', 'apply', '-auto-approve', '-input=false')).status).toBe(0);
    expect((await api('GET', `/routes/${encodeURIComponent('team/*')}`)).body.strategy).toBe('fallback');
  });

  it('imports a route made through the admin API by its alias and finds no difference', async () => {
    expect((await api('PUT', '/routes/smart', { strategy: 'fallback', targets: [{ model: 'a/alpha' }, { model: 'b/beta', priority: 1 }] })).status).toBe(201);
    writeConfig('stack', {
      team: { ...team, strategy: 'fallback', targets: [{ model: 'b/beta' }] },
      smart: { alias: 'smart', strategy: 'fallback', targets: [{ model: 'a/alpha' }, { model: 'b/beta', priority: 1 }] },
    });
    const create = await terraform('stack', 'apply', '-auto-approve', '-input=false');
    expect(create.status).toBe(1);
    expect(create.out.replace(/\s+/g, ' ')).toContain('The route smart already exists. Import it with: terraform import agentgw_route.NAME smart');
    const imported = await terraform('stack', 'import', '-input=false', 'agentgw_route.smart', 'smart');
    expect(imported.out).toContain('Import successful!');
    const plan = await terraform('stack', 'plan', '-detailed-exitcode', '-input=false');
    expect(plan.out).toContain('No changes.');
    expect(plan.status).toBe(0);
  });

  it('an alias of agentgw.yaml can be neither created nor imported, and nothing changes on the server', async () => {
    writeConfig('config-alias', { fixed: { alias: 'fixed', strategy: 'fallback', targets: [{ model: 'b/beta' }] } });
    const apply = await terraform('config-alias', 'apply', '-auto-approve', '-input=false');
    expect(apply.status).toBe(1);
    expect(apply.out).toContain('Route is read-only');
    expect(apply.out.replace(/\s+/g, ' ')).toContain('comes from the server config (agentgw.yaml models:)');
    const imported = await terraform('config-alias', 'import', '-input=false', 'agentgw_route.fixed', 'fixed');
    expect(imported.status).toBe(1);
    expect(imported.out).toContain('Route is read-only');
    expect((await api('GET', '/routes/fixed')).body).toMatchObject({ source: 'config', targets: [{ model: 'a/alpha' }] });
  });

  it('destroys the routes it manages and leaves the config ones', async () => {
    const destroy = await terraform('stack', 'destroy', '-auto-approve', '-input=false');
    expect(destroy.out).toContain('Destroy complete! Resources: 2 destroyed.');
    expect((await api('GET', '/routes')).body.data.map((r: { alias: string }) => r.alias)).toEqual(['fixed']);
    expect((await chat('team/coder')).status).toBe(400);
  });
});
