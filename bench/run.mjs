// agentgw overhead benchmark: the same load direct to a mock upstream, through a bare Node proxy, and through the gateway
// with every policy check on. Run with `npm run bench` (builds first). Settings come from BENCH_* variables (see README.md).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuTimeMs, forkServer, killChildren, launcherLine, memoryOf, sampleMemory, spawnGateway } from './lib/children.mjs';
import { POLICY, proveChecksAreOn, provisionAgent, recordedRequests } from './lib/gateway-setup.mjs';
import { load, sequentialLatency, timeToFirstByte, timeToFirstText } from './lib/measure.mjs';
import { evaluate, renderTable } from './lib/report.mjs';
import { ROUTING_MODELS, SLOW_MODEL, TRACE_MODE, chatBody } from './lib/workload.mjs';
import {
  AGENT_GATEWAY_CONFIG,
  AGENT_POLICY,
  SLOW_TEXT_MODELS,
  agentPolicy,
  agentWorkloads,
  proveAgentAnswers,
  proveToolRules,
  toolRulesCompareConfig,
} from './lib/agent-workload.mjs';
import { buildRevision } from './lib/baseline.mjs';
import { compareCpu, compareFirstText } from './lib/compare.mjs';

const env = (name, fallback) => {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, not "${v}"`);
  return n;
};

const LAUNCHER = launcherLine();
const TOOL_RULES = process.env.BENCH_TOOL_RULES || '0';
if (!['0', '1', 'compare'].includes(TOOL_RULES)) throw new Error(`BENCH_TOOL_RULES must be 0, 1 or compare, not "${TOOL_RULES}"`);
const BASELINE = process.env.BENCH_BASELINE || null;
if (BASELINE && TOOL_RULES === '1') {
  throw new Error('BENCH_TOOL_RULES=1 puts the rules on one gateway only; with BENCH_BASELINE use BENCH_TOOL_RULES=compare (or 0): the baseline may predate tool rules');
}
const gitOut = (args) => {
  try {
    return execFileSync('git', args, { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};
const config = {
  seconds: env('BENCH_SECONDS', 10),
  warmupSeconds: env('BENCH_WARMUP_SECONDS', 2),
  connections: env('BENCH_CONNECTIONS', 50),
  rounds: env('BENCH_ROUNDS', 2),
  sequentialSamples: env('BENCH_SEQUENTIAL', 2000),
  sequentialWarmup: env('BENCH_SEQUENTIAL_WARMUP', 300),
  ttfbSamples: env('BENCH_TTFB_SAMPLES', 300),
  slowChunkMs: env('BENCH_SLOW_CHUNK_MS', 10),
  phases: (process.env.BENCH_PHASES ?? 'load,agent,routing,latency,ttfb,checks').split(',').map((s) => s.trim()),
  /** Requests per agent workload in the checks phase (four times as many small bodies). */
  checksRequests: env('BENCH_CHECKS_REQUESTS', 6000),
  /** Measured seconds per target, workload and mode in the agent phase. */
  agentSeconds: env('BENCH_AGENT_SECONDS', 6),
  /** 1: the load phase also measures the accounted proxy (accounted-proxy.mjs), between the bare proxy and the gateway. */
  accounted: env('BENCH_ACCOUNTED', 0) === 1,
  /** 1: the agent phase's policy has the 10 tool rules; compare: a second agent with them on the same gateway, beside one without. */
  toolRules: TOOL_RULES,
  /** A git revision whose gateway is built apart and measured beside this checkout's in the load and agent phases. */
  baseline: BASELINE,
  /** A git revision to build apart and measure as the gateway, instead of this checkout's build (cli/dist). */
  gatewayRev: process.env.BENCH_GATEWAY_REV || null,
  /** The commit of this checkout, and whether its gateway/ or cli/ had changes not committed (part of its build). */
  commit: gitOut(['rev-parse', 'HEAD']),
  uncommitted: gitOut(['status', '--porcelain', '--', 'gateway', 'cli']) ? 'gateway/ or cli/ had uncommitted changes' : null,
  /** How requests are grouped into traces: concurrent (default, many runs in flight, UUID ids) or sequential. */
  traces: TRACE_MODE,
  gatewayNodeArgs: (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
  /** The flags and variables of the agentgw launcher line, which the gateway always runs with (extra BENCH_GATEWAY_NODE_ARGS come after). */
  gatewayLauncherFlags: LAUNCHER.flags,
  gatewayLauncherEnv: LAUNCHER.env,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model?.trim() ?? 'unknown',
  node: process.version,
};
const RESULTS_FILE = fileURLToPath(new URL('./results.json', import.meta.url));
const ADMIN_KEY = `bench-admin-${process.pid}-${Date.now()}`;

const workDir = mkdtempSync(join(tmpdir(), 'agentgw-bench-'));
function cleanUp() {
  killChildren();
  rmSync(workDir, { recursive: true, force: true });
}
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping the child processes\n`);
    cleanUp();
    process.exit(130);
  });
}

const log = (msg) => process.stderr.write(`bench: ${msg}\n`);

async function startAll() {
  // Built before anything starts: a first build of the revision takes a while.
  const baselineBin = config.baseline ? buildRevision(config.baseline, log) : null;
  if (baselineBin) config.baselineBuild = { sha: baselineBin.sha, dir: baselineBin.dir, dependencies: baselineBin.dependencies };
  const gatewayBin = config.gatewayRev ? buildRevision(config.gatewayRev, log) : null;
  if (gatewayBin) config.gatewayBuild = { sha: gatewayBin.sha, dir: gatewayBin.dir, dependencies: gatewayBin.dependencies };
  const mock = await forkServer('mock-upstream.mjs', { BENCH_SLOW_CHUNK_MS: String(config.slowChunkMs) });
  const proxy = await forkServer('bare-proxy.mjs', { BENCH_UPSTREAM: mock.url });
  const accounted = config.accounted ? await forkServer('accounted-proxy.mjs', { BENCH_UPSTREAM: mock.url }) : null;
  const compare = config.toolRules === 'compare' ? toolRulesCompareConfig(mock.url) : null;
  const gatewayConfig = {
    providers: {
      openai: { type: 'openai', base_url: `${mock.url}/v1`, api_key: 'sk-bench' },
      'openai-slow': { type: 'openai', base_url: `${mock.url}/slow/v1`, api_key: 'sk-bench' },
      anthropic: { type: 'anthropic', base_url: `${mock.url}/v1`, api_key: 'sk-bench' },
      // Three more deployments of the same model, for the routing phase's weighted alias.
      ...Object.fromEntries(['b', 'c', 'd'].map((k) => [`openai-${k}`, { type: 'openai', base_url: `${mock.url}/v1`, api_key: 'sk-bench' }])),
      ...compare?.providers,
    },
    ...AGENT_GATEWAY_CONFIG,
    models: { ...AGENT_GATEWAY_CONFIG.models, ...ROUTING_MODELS, ...compare?.models },
    prices: { ...AGENT_GATEWAY_CONFIG.prices, ...compare?.prices },
    log_level: 'warn',
  };
  /** One gateway process with its own SQLite database; every one gets the same config and node flags. */
  const start = (name, cfg = gatewayConfig, bin = undefined) => {
    const configPath = join(workDir, `${name}.yaml`);
    // JSON is YAML: no serializer needed.
    writeFileSync(configPath, JSON.stringify({ storage: { kind: 'sqlite', path: join(workDir, `${name}.db`) }, ...cfg }));
    return spawnGateway({ configPath, adminKey: ADMIN_KEY, nodeArgs: config.gatewayNodeArgs, bin });
  };
  // The same config, less the aliases of the object form ({strategy, targets}), which an older revision may not know;
  // the baseline is measured in the load and agent phases only, which use none of them (nor does a BENCH_GATEWAY_REV
  // gateway when the routing phase is not run).
  const baselineConfig = { ...gatewayConfig, models: Object.fromEntries(Object.entries(gatewayConfig.models).filter(([, v]) => Array.isArray(v))) };
  const gateway = await start('agentgw', gatewayBin && !config.phases.includes('routing') ? baselineConfig : gatewayConfig, gatewayBin?.bin);
  const baseline = baselineBin ? await start('agentgw-baseline', baselineConfig, baselineBin.bin) : null;
  return { mock, proxy, accounted, gateway, baseline };
}

/**
 * Load on each target, split into rounds whose target order rotates, so that background activity on a shared machine
 * weighs on every target alike. Each target gets one warm-up run first, whose numbers are thrown away.
 * CPU per request is the time the process in the middle (mock, bare proxy or gateway) spent on the CPU, divided by the
 * requests it served: unlike requests/s, it barely depends on what else runs on the machine.
 */
async function loadPhase(targets, stream, workload = {}, seconds = config.seconds) {
  const mode = stream ? 'streaming' : 'non-streaming';
  const rounds = Math.max(1, Math.round(config.rounds));
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]);
    for (const t of order) {
      const base = { url: t.url, apiKey: t.apiKey, stream, connections: config.connections, ...workload, ...(t.body ? { body: t.body } : {}) };
      if (round === 0 && config.warmupSeconds > 0) {
        log(`load ${mode} -> ${t.name}: warm-up`);
        const w = await load({ ...base, seconds: config.warmupSeconds });
        if (w.total === 0 || w.failures > 0) throw new Error(`${t.name} (${mode}, warm-up): ${w.failures} failed of ${w.total} requests`);
      }
      log(`load ${mode} -> ${t.name}: round ${round + 1} of ${rounds}`);
      const cpuBefore = cpuTimeMs(t.pid);
      const r = await load({ ...base, seconds: seconds / rounds });
      const cpuAfter = cpuTimeMs(t.pid);
      if (r.total === 0 || r.failures > 0) throw new Error(`${t.name} (${mode}): ${r.failures} failed of ${r.total} requests`);
      runs[t.name].push({ ...r, cpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore });
    }
  }
  const out = {};
  for (const [name, rs] of Object.entries(runs)) {
    const total = rs.reduce((n, r) => n + r.total, 0);
    const weighted = (key) => rs.reduce((n, r) => n + r[key] * r.total, 0) / total;
    const cpuKnown = rs.every((r) => r.cpuMs !== null);
    out[name] = {
      requestsPerSec: total / rs.reduce((n, r) => n + r.seconds, 0),
      p50Ms: weighted('p50Ms'),
      p99Ms: weighted('p99Ms'),
      total,
      cpuUsPerRequest: cpuKnown ? (rs.reduce((n, r) => n + r.cpuMs, 0) * 1000) / total : null,
      rounds: rs,
    };
  }
  return out;
}

function added(byTarget) {
  return {
    byTarget,
    addedP50Ms: byTarget.gateway.p50Ms - byTarget.proxy.p50Ms,
    addedP99Ms: byTarget.gateway.p99Ms - byTarget.proxy.p99Ms,
  };
}

async function main() {
  log(`starting mock upstream, bare proxy and gateway (${config.cpus} CPUs)`);
  const { mock, proxy, accounted, gateway, baseline } = await startAll();
  const memory = sampleMemory(gateway.child.pid);
  const startedMb = (memoryOf(gateway.child.pid)?.rssKb ?? NaN) / 1024;
  const apiKey = await provisionAgent(gateway.url, ADMIN_KEY);
  await proveChecksAreOn(gateway.url, apiKey);
  log('policy checks verified live: allowed_models, pii, retry_block, max_cost_per_request (rpm, tpm, budgets, trace cap set high)');

  const targets = [
    { name: 'direct', url: mock.url, apiKey: 'sk-bench', pid: mock.child.pid },
    { name: 'proxy', url: proxy.url, apiKey: 'sk-bench', pid: proxy.child.pid },
    { name: 'gateway', url: gateway.url, apiKey, pid: gateway.child.pid },
  ];
  let baselineTarget = null;
  if (baseline) {
    const baselineKey = await provisionAgent(baseline.url, ADMIN_KEY);
    await proveChecksAreOn(baseline.url, baselineKey);
    log(`baseline ${config.baselineBuild.sha.slice(0, 12)}: policy checks verified live`);
    baselineTarget = { name: 'baseline', url: baseline.url, apiKey: baselineKey, pid: baseline.child.pid };
  }
  const results = { config, policy: POLICY, comparisons: [] };
  const baselineLabel = config.baseline ? `baseline ${config.baselineBuild.sha.slice(0, 7)}` : '';

  if (config.phases.includes('load')) {
    let loadTargets = accounted ? [...targets, { name: 'accounted', url: accounted.url, apiKey: 'sk-bench', pid: accounted.child.pid }] : targets;
    if (baselineTarget) loadTargets = [...loadTargets, baselineTarget];
    results.load = { nonStreaming: await loadPhase(loadTargets, false), streaming: await loadPhase(loadTargets, true) };
    if (baselineTarget) {
      for (const [mode, runs] of Object.entries(results.load)) {
        results.comparisons.push({
          phase: 'load',
          ...compareCpu(runs, 'baseline', 'gateway', { name: `load ${mode === 'streaming' ? 'streaming' : 'non-streaming'}: gateway / ${baselineLabel}`, limit: { ratio: 1.05 } }),
        });
      }
    }
    results.ratios = {};
    for (const [mode, runs] of Object.entries(results.load)) {
      results.ratios[mode] = {
        gatewayOverProxy: runs.gateway.requestsPerSec / runs.proxy.requestsPerSec,
        gatewayOverDirect: runs.gateway.requestsPerSec / runs.direct.requestsPerSec,
        proxyOverDirect: runs.proxy.requestsPerSec / runs.direct.requestsPerSec,
        gatewayCpuOverProxyCpu: runs.gateway.cpuUsPerRequest / runs.proxy.cpuUsPerRequest,
        ...(runs.accounted
          ? { accountedOverProxy: runs.accounted.requestsPerSec / runs.proxy.requestsPerSec, gatewayOverAccounted: runs.gateway.requestsPerSec / runs.accounted.requestsPerSec }
          : {}),
      };
    }
  }
  if (config.phases.includes('agent')) {
    // Agent-sized bodies on every dialect, against the bare proxy on the same bytes (the mock answers each dialect).
    const compare = config.toolRules === 'compare';
    // With BENCH_TOOL_RULES=compare every gateway allows the compare mode's models; only gateway-rules has the rules.
    const policy = compare ? agentPolicy({ compareModels: true }) : AGENT_POLICY;
    const agentProvision = (url, p = policy) => provisionAgent(url, ADMIN_KEY, { policyId: 'bench-agent-sized', policy: p, name: 'bench-agent-sized' });
    const agentKey = await agentProvision(gateway.url);
    const agentTargets = targets.filter((t) => t.name !== 'direct').map((t) => (t.name === 'gateway' ? { ...t, apiKey: agentKey } : t));
    if (compare) {
      // The same gateway process, a second agent whose policy has the rules: the two sides share the process's heap and
      // compiled code, so the comparison is of the rules alone (two processes of one build differ by up to 20% per run).
      const rulesKey = await provisionAgent(gateway.url, ADMIN_KEY, { policyId: 'bench-agent-rules', policy: agentPolicy({ toolRules: true, compareModels: true }), name: 'bench-agent-rules' });
      await proveToolRules(gateway.url, rulesKey, { expectDenied: true });
      await proveToolRules(gateway.url, agentKey, { expectDenied: false });
      log('tool rules verified live: the agent with the rules gets a denied Bash call refused, the agent without gets it passed on');
      agentTargets.push({ name: 'gateway-rules', url: gateway.url, apiKey: rulesKey, pid: gateway.child.pid });
    }
    if (baselineTarget) agentTargets.push({ ...baselineTarget, apiKey: await agentProvision(baseline.url) });
    results.agent = {};
    const only = (process.env.BENCH_AGENT_WORKLOADS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const workloads = agentWorkloads().filter((w) => only.length === 0 || only.includes(w.name));
    if (workloads.length === 0) throw new Error(`BENCH_AGENT_WORKLOADS names no workload: ${only.join(', ')}`);
    for (const t of agentTargets) await proveAgentAnswers(t.url, t.apiKey, workloads);
    for (const w of workloads) {
      const workload = { path: w.path, headers: w.headers, body: w.body };
      for (const stream of [false, true]) {
        const runs = await loadPhase(agentTargets, stream, workload, config.agentSeconds);
        const row = `${w.name}${stream ? ' streaming' : ''}`;
        results.agent[row] = {
          // The mean for a workload whose conversations grow (Codex).
          bodyBytes: w.bodyBytes(stream),
          proxy: runs.proxy,
          gateway: runs.gateway,
          ...(runs['gateway-rules'] ? { rules: runs['gateway-rules'] } : {}),
          ...(runs.baseline ? { baseline: runs.baseline } : {}),
          gatewayOverProxy: runs.gateway.requestsPerSec / runs.proxy.requestsPerSec,
          gatewayCpuOverProxyCpu: runs.gateway.cpuUsPerRequest / runs.proxy.cpuUsPerRequest,
        };
        if (runs.baseline) {
          results.comparisons.push({ phase: 'agent', ...compareCpu(runs, 'baseline', 'gateway', { name: `${row}: gateway / ${baselineLabel}`, limit: { ratio: 1.05 } }) });
        }
        if (runs['gateway-rules']) {
          results.comparisons.push({ phase: 'agent', ...compareCpu(runs, 'gateway', 'gateway-rules', { name: `${row}: 10 tool rules / no rules`, limit: { ratio: 1.05 } }) });
        }
      }
    }
    if (compare) {
      // Time to the first text byte of each workload's stream, with and without the rules, measured together.
      const pair = agentTargets.filter((t) => t.name === 'gateway' || t.name === 'gateway-rules');
      const slow = agentWorkloads({ models: SLOW_TEXT_MODELS }).filter((w) => only.length === 0 || only.includes(w.name));
      results.firstText = {};
      for (const w of slow) {
        log(`time to first text byte, ${w.name} streaming: ${config.ttfbSamples} per agent, with and without tool rules`);
        const byTarget = await timeToFirstText(pair, w, { warmup: 30, samples: config.ttfbSamples, rounds: Math.max(1, Math.round(config.rounds)) });
        results.firstText[w.name] = { byTarget, ...compareFirstText(byTarget, 'gateway', 'gateway-rules', { name: `${w.name} streaming: first text, 10 tool rules - no rules` }) };
      }
    }
  }
  if (config.phases.includes('routing')) {
    // The same chat load on the gateway through an alias of one target and an alias of four weighted targets: the
    // difference in CPU per request is what choosing among targets costs.
    const routed = (name, model) => ({ ...targets.find((t) => t.name === 'gateway'), name, body: ({ stream }) => chatBody({ stream, model }) });
    const runs = await loadPhase([routed('single', 'bench-single'), routed('weighted', 'bench-weighted-4')], false);
    const comparison = compareCpu(runs, 'single', 'weighted', { name: 'routing: 4 weighted targets - one target, us/req', limit: { diffUs: 3 } });
    results.routing = {
      single: runs.single,
      weighted: runs.weighted,
      routingCostUsPerRequest: runs.weighted.cpuUsPerRequest - runs.single.cpuUsPerRequest,
      comparison,
    };
    results.comparisons.push({ phase: 'routing', ...comparison });
  }
  if (config.phases.includes('latency')) {
    log(`latency, one request in flight: ${config.sequentialSamples} per target`);
    results.latency = added(await sequentialLatency(targets, { warmup: config.sequentialWarmup, samples: config.sequentialSamples }));
  }
  if (config.phases.includes('ttfb')) {
    log(`time to first streamed byte: ${config.ttfbSamples} per target`);
    const slowTargets = targets.map((t) => (t.name === 'gateway' ? t : { ...t, path: '/slow/v1/chat/completions' }));
    results.ttfb = added(await timeToFirstByte(slowTargets, { warmup: 30, samples: config.ttfbSamples, model: SLOW_MODEL }));
  }

  if (config.phases.includes('checks') && config.baselineBuild) {
    // The request-side checks of both builds on the same bodies, paired in one process of their own (checks-pair.mjs).
    log(`request-side checks, paired in one process: ${baselineLabel} and the gateway's build, ${config.checksRequests} requests per agent workload`);
    const gatewayDist = join(config.gatewayBuild?.dir ?? fileURLToPath(new URL('..', import.meta.url)), 'gateway', 'dist');
    const out = execFileSync(process.execPath, [fileURLToPath(new URL('checks-pair.mjs', import.meta.url)), join(config.baselineBuild.dir, 'gateway', 'dist'), gatewayDist, String(config.checksRequests)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 1 << 20,
    });
    const byWorkload = JSON.parse(out);
    // What the checks add, against the gateway's whole CPU per request for the same body (non-streaming) in this run.
    const gatewayCpu = (name) => (name.startsWith('load') ? results.load?.nonStreaming.gateway.cpuUsPerRequest : results.agent?.[name]?.gateway.cpuUsPerRequest);
    results.checks = Object.fromEntries(
      Object.entries(byWorkload).map(([name, r]) => {
        const cpu = gatewayCpu(name);
        const addedUs = r.after.total - r.before.total;
        return [name, { ...r, addedUs, gatewayCpuUsPerRequest: cpu ?? null, addedShareOfGatewayCpu: cpu ? addedUs / cpu : null }];
      }),
    );
  }

  // Usage rows are written in batches: give the writer a moment before counting them.
  await new Promise((r) => setTimeout(r, 1500));
  results.recordedRequests = await recordedRequests(gateway.url, ADMIN_KEY).catch(() => null);
  const polled = memory.stop();
  const final = memoryOf(gateway.child.pid);
  const hwmMb = Math.max(polled.hwmMb, (final?.hwmKb ?? 0) / 1024);
  results.memory = { peakMb: Math.max(hwmMb, polled.peakRssMb), hwmMb, polledPeakMb: polled.peakRssMb, startedMb };
  results.targets = evaluate(results);

  for (const [name, g] of [['gateway', gateway], ['baseline', baseline]]) {
    if (!g) continue;
    const stopped = await g.stop();
    if (stopped !== 0) log(`${name} stopped with ${stopped}:\n${g.stderr()}`);
  }
  writeFileSync(RESULTS_FILE, `${JSON.stringify({ ...results, finishedAt: new Date().toISOString() }, null, 2)}\n`);
  process.stdout.write(renderTable(results));
  process.stdout.write(`Results written to ${RESULTS_FILE}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench: failed: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
