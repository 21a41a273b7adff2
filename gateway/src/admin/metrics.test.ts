// GET /metrics names tenants, agents and models: by default it takes an admin key without a tenant; `metrics.listen`
// serves it on an address of its own instead, and then not on the main one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../config.js';
import { type RunningServer, startServer } from '../server.js';
import { adminApi, expectError } from '../test-support/admin-api.js';
import { type TestGateway, startTestGateway } from '../test-support/gateway.js';

const PROMETHEUS = /^# HELP agentgw_/m;

async function scrape(url: string, key?: string) {
  const res = await fetch(`${url}/metrics`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

describe('/metrics on the main address (the default)', () => {
  let gw: TestGateway;
  let viewerKey: string;
  let tenantKey: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    const api = adminApi(gw.adminUrl, gw.adminKey);
    await api('POST', '/tenants', { body: { id: 'acme', name: 'Acme' } });
    viewerKey = (await api('POST', '/admin-keys', { body: { name: 'scraper', role: 'viewer' } })).body.api_key;
    tenantKey = (await api('POST', '/admin-keys', { body: { name: 'acme-viewer', role: 'viewer', tenant_id: 'acme' } })).body.api_key;
  });
  afterAll(async () => gw?.close());

  test('without an admin key, or with an unknown one, it is 401 invalid_api_key in CONTRACT body', async () => {
    for (const key of [undefined, 'adk_not_a_key_of_this_gateway_0000000']) {
      const r = await scrape(gw.url, key);
      expectError(r, 401, 'invalid_api_key');
      expect(r.text).not.toMatch(PROMETHEUS);
    }
  });

  test('a tenant-scoped key is 403 tenant_forbidden: the metrics cover every tenant', async () => {
    const r = await scrape(gw.url, tenantKey);
    expectError(r, 403, 'tenant_forbidden');
    expect(r.text).not.toMatch(PROMETHEUS);
  });

  test('an admin key without a tenant (the root key, a viewer) reads the metrics', async () => {
    for (const key of [gw.adminKey, viewerKey]) {
      const r = await scrape(gw.url, key);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(r.text).toMatch(PROMETHEUS);
    }
  });
});

describe('metrics.require_key: false', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ config: { metrics: { require_key: false } } });
  });
  afterAll(async () => gw?.close());

  test('serves /metrics to anyone who reaches it', async () => {
    const r = await scrape(gw.url);
    expect(r.status).toBe(200);
    expect(r.text).toMatch(PROMETHEUS);
  });
});

describe('metrics.listen: an address of its own', () => {
  let dir: string;
  let server: RunningServer;
  const adminKey = 'adk_metrics_listen_test_key_0123456789';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentgw-metrics-'));
    const config = join(dir, 'agentgw.yaml');
    writeFileSync(
      config,
      [`listen: 127.0.0.1:0`, `log_level: silent`, `storage: { kind: sqlite, path: ${join(dir, 'agentgw.db')} }`, `metrics: { listen: "127.0.0.1:0", require_key: false }`].join('\n'),
    );
    server = await startServer({ configPath: config, env: { AGENTGW_ADMIN_KEY: adminKey } });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('serves /metrics there, and the main address answers 404 for it', async () => {
    expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.metricsUrl).not.toBe(server.url);
    const own = await scrape(server.metricsUrl!);
    expect(own.status).toBe(200);
    expect(own.text).toMatch(PROMETHEUS);

    const main = await scrape(server.url, adminKey);
    expectError(main, 404, 'route_not_found');
    // The metrics address serves nothing else.
    expect((await fetch(`${server.metricsUrl}/api/system/config`, { headers: { authorization: `Bearer ${adminKey}` } })).status).toBe(404);
    expect((await fetch(`${server.metricsUrl}/v1/models`)).status).toBe(404);
  });

  test('require_key holds on its own address too', async () => {
    const keyed = await startTestGatewayConfigFile(dir, { require_key: true });
    try {
      expectError(await scrape(keyed.metricsUrl!), 401, 'invalid_api_key');
      expect((await scrape(keyed.metricsUrl!, adminKey)).status).toBe(200);
    } finally {
      await keyed.close();
    }
  });

  async function startTestGatewayConfigFile(base: string, metrics: Record<string, unknown>): Promise<RunningServer> {
    const sub = mkdtempSync(join(base, 'node-'));
    const config = join(sub, 'agentgw.yaml');
    writeFileSync(
      config,
      [`listen: 127.0.0.1:0`, `log_level: silent`, `storage: { kind: sqlite, path: ${join(sub, 'agentgw.db')} }`, `metrics: ${JSON.stringify({ listen: '127.0.0.1:0', ...metrics })}`].join('\n'),
    );
    return startServer({ configPath: config, env: { AGENTGW_ADMIN_KEY: adminKey } });
  }
});

describe('metrics config', () => {
  test('a listen address that is not HOST:PORT is refused at start, naming the key', () => {
    expect(() => loadConfig({ env: {}, overrides: { metrics: { listen: 'localhost' } } })).toThrow(/config metrics\.listen: must be HOST:PORT/);
    expect(() => loadConfig({ env: {}, overrides: { metrics: { requireKey: true } } })).toThrow(/config metrics/);
  });
});
