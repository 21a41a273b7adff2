// Two builds' whole request path in one process, request after request in turn: each build's gateway (startServer from
// its gateway/dist) runs in this process with the same config and its own SQLite file, both against one mock upstream
// (a child process, so its CPU is not counted); every request of a workload is sent to both, alternating which goes
// first, over a kept-alive loopback connection of its own. The CPU this process spends from the request to
// its answer (process.cpuUsage, all threads) is added to that build's sum. Where two gateway processes of one build
// differ by 10-20% between runs on a shared machine, this pairs the whole handler (routing, checks, the upstream call,
// the answer, the usage record) on one heap, so what one build adds over the other can be told from the machine's noise.
// Run it under the launcher's node flags, from the repository root:
//   node --max-semi-space-size=8 --heap-growing-percent=50 bench/handler-pair.mjs <before root> <after root> [requests] [workload,...]
// (<root>: a checkout whose gateway/dist is built; bench/run.mjs's BENCH_BASELINE leaves one in /tmp/agentgw-bench-<sha>.)
// Prints one JSON object: per workload, CPU and wall microseconds per request for `before` and `after`, and their ratio.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Session } from 'node:inspector/promises';
import { Pool } from 'undici';
import { AGENT_GATEWAY_CONFIG, AGENT_POLICY, agentWorkloads } from './lib/agent-workload.mjs';
import { forkServer, killChildren } from './lib/children.mjs';
import { POLICY, provisionAgent } from './lib/gateway-setup.mjs';
import { profileSides } from './lib/profile-sides.mjs';
import { chatBody, headersFor } from './lib/workload.mjs';

const [beforeRoot, afterRoot, requestsArg, only] = process.argv.slice(2);
if (!beforeRoot || !afterRoot) {
  process.stderr.write('usage: node bench/handler-pair.mjs <before root> <after root> [requests per workload] [workload,...]\n');
  process.exit(2);
}
const REQUESTS = Number(requestsArg ?? 2000);
/**
 * HANDLER_PAIR_PROFILE=1: each workload's measured half is CPU-profiled, and each build's share of the samples printed;
 * HANDLER_PAIR_PROFILE=<dir>: the profiles are also written there, one per workload, for bench/lib/profile-sides.mjs.
 */
const PROFILE = process.env.HANDLER_PAIR_PROFILE ?? '';
const ADMIN_KEY = 'agk_admin_handler_pair_0123456789abcdef';
const log = (msg) => process.stderr.write(`handler-pair: ${msg}\n`);

const work = mkdtempSync(join(tmpdir(), 'agentgw-handler-pair-'));
process.once('exit', () => {
  killChildren();
  rmSync(work, { recursive: true, force: true });
});

const mock = await forkServer('mock-upstream.mjs');
const config = {
  providers: {
    openai: { type: 'openai', base_url: `${mock.url}/v1`, api_key: 'sk-bench' },
    anthropic: { type: 'anthropic', base_url: `${mock.url}/v1`, api_key: 'sk-bench' },
  },
  ...AGENT_GATEWAY_CONFIG,
  log_level: 'warn',
};

async function startBuild(name, root) {
  const configPath = join(work, `${name}.yaml`);
  writeFileSync(configPath, JSON.stringify({ storage: { kind: 'sqlite', path: join(work, `${name}.db`) }, ...config }));
  const { startServer } = await import(pathToFileURL(join(resolve(root), 'gateway/dist/index.js')).href);
  const server = await startServer({ configPath, host: '127.0.0.1', port: 0, env: { ...process.env, AGENTGW_ADMIN_KEY: ADMIN_KEY } });
  const smallKey = await provisionAgent(server.url, ADMIN_KEY, { policy: POLICY });
  const agentKey = await provisionAgent(server.url, ADMIN_KEY, { policyId: 'bench-agent-sized', policy: AGENT_POLICY, name: 'bench-agent-sized' });
  return { name, server, smallKey, agentKey, pool: new Pool(server.url, { connections: 1 }) };
}

const sides = [await startBuild('before', beforeRoot), await startBuild('after', afterRoot)];
const agent = agentWorkloads();
const workloads = [
  { name: 'load (small chat body)', path: '/v1/chat/completions', key: 'smallKey', body: () => chatBody({ stream: false }), headers: headersFor, requests: REQUESTS * 2 },
  ...agent.flatMap((w) =>
    [false, true].map((stream) => ({
      name: stream ? `${w.name} streaming` : w.name,
      path: w.path,
      key: 'agentKey',
      body: () => w.body({ stream }),
      headers: (k, n) => w.headers(k, n),
      requests: REQUESTS,
    })),
  ),
].filter((w) => !only || only.split(',').includes(w.name));

/** One request to one side; the client's own CPU is the same for both sides. Returns [cpu us, wall us]. Throws on anything but a 200. */
async function once(side, w, bytes, headers) {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const res = await side.pool.request({ method: 'POST', path: w.path, headers, body: bytes });
  const text = await res.body.text();
  const wall = Number(process.hrtime.bigint() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (res.statusCode !== 200) throw new Error(`${side.name}, ${w.name}: ${res.statusCode} ${text.slice(0, 300)}`);
  return [cpu.user + cpu.system, wall];
}

const out = {};
for (const w of workloads) {
  log(`${w.name}: ${w.requests} requests to each build, the first half warming up`);
  const sums = { before: { cpu: 0, wall: 0 }, after: { cpu: 0, wall: 0 } };
  let profiler;
  for (let i = 0; i < w.requests; i++) {
    if (PROFILE !== '' && i === Math.ceil(w.requests / 2)) {
      profiler = new Session();
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 250 });
      await profiler.post('Profiler.start');
    }
    const order = i % 2 === 0 ? sides : [sides[1], sides[0]];
    for (const side of order) {
      // Each side its own body and trace (the bodies carry a counter), so no side meets the other's retry counts.
      // The headers right after the body, with its number (Codex's carry the body's turn).
      const { n, json: bytes } = w.body();
      const headers = w.headers(side[w.key], n);
      const [cpu, wall] = await once(side, w, bytes, headers);
      if (i >= w.requests / 2) {
        sums[side.name].cpu += cpu;
        sums[side.name].wall += wall;
      }
    }
  }
  const n = w.requests - Math.ceil(w.requests / 2);
  const per = (s) => ({ cpuUs: s.cpu / n, wallUs: s.wall / n });
  const before = per(sums.before);
  const after = per(sums.after);
  out[w.name] = { requests: n, before, after, cpuRatio: after.cpuUs / before.cpuUs };
  log(`${w.name}: cpu us/request before ${before.cpuUs.toFixed(1)}, after ${after.cpuUs.toFixed(1)} (${((after.cpuUs / before.cpuUs) * 100).toFixed(1)}%)`);
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    profiler.disconnect();
    if (PROFILE !== '1') writeFileSync(join(PROFILE, `${w.name.replace(/[^a-z0-9.]+/gi, '-')}.cpuprofile`), JSON.stringify(profile));
    // The samples whose stack holds a frame of one build: what that build's own code cost, without the collector and
    // the client (in neither), so far steadier than the process's CPU; per request of the measured half.
    const split = profileSides(profile, beforeRoot, afterRoot, 12);
    const own = { before: (split.ms.before * 1000) / n, after: (split.ms.after * 1000) / n };
    out[w.name].profile = { usPerRequest: own, ratio: own.after / own.before, differing: split.differing };
    log(`${w.name}: profiled, us/request in each build's own frames: before ${own.before.toFixed(1)}, after ${own.after.toFixed(1)} (${((own.after / own.before) * 100).toFixed(1)}%); differing most (self ms, before after):`);
    for (const r of split.differing) log(`  ${String(r.before).padStart(7)} ${String(r.after).padStart(7)}  ${r.fn}`);
  }
}
for (const s of sides) {
  await s.pool.close();
  await s.server.close();
}
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
