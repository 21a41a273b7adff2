// agentgw soak: the bench's load on the real gateway for SOAK_MINUTES, with trace ids rotating, printing the gateway's
// RSS over time. Memory that follows the number of distinct traces shows as a last third above the middle third.
// Run with `npm run soak` (builds first), or `node bench/soak.mjs` when the build is current.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { forkServer, killChildren, launcherLine, memoryOf, spawnGateway } from './lib/children.mjs';
import { POLICY, proveChecksAreOn, provisionAgent, recordedRequests } from './lib/gateway-setup.mjs';
import { MODEL } from './lib/workload.mjs';

const num = (name, fallback) => {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, not "${v}"`);
  return n;
};

const config = {
  /** Length of the run. */
  minutes: num('SOAK_MINUTES', 5),
  connections: num('SOAK_CONNECTIONS', 50),
  /** Requests per second over all connections (0: as fast as the gateway answers). */
  rate: num('SOAK_RATE', 2000),
  /** Traces in flight at once: request n goes to slot n % traces. */
  traces: num('SOAK_TRACES', 5000),
  /** Each slot starts a new trace (a new UUID) this often; slots are staggered so traces end evenly over time. */
  traceSeconds: num('SOAK_TRACE_SECONDS', 15),
  /** How often the gateway's RSS is read and printed. */
  sampleSeconds: num('SOAK_SAMPLE_SECONDS', 10),
  /** Share of streamed requests (0-1). */
  streamShare: num('SOAK_STREAM_SHARE', 0.5),
  /** Heap snapshots of the gateway at these fractions of the run (e.g. "0.33,0.66,1"), into SOAK_SNAPSHOT_DIR. */
  snapshots: (process.env.SOAK_HEAP_SNAPSHOTS ?? '').split(',').map((s) => s.trim()).filter(Boolean).map(Number),
  snapshotDir: process.env.SOAK_SNAPSHOT_DIR ?? join(tmpdir(), 'agentgw-soak-heap'),
  gatewayNodeArgs: (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
  launcher: launcherLine(),
  cpus: cpus().length,
  node: process.version,
};
const ADMIN_KEY = `soak-admin-${process.pid}-${Date.now()}`;
const log = (msg) => process.stderr.write(`soak: ${msg}\n`);

const workDir = mkdtempSync(join(tmpdir(), 'agentgw-soak-'));
function cleanUp() {
  killChildren();
  rmSync(workDir, { recursive: true, force: true });
}
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    process.stderr.write(`\nsoak: ${signal}, stopping the child processes\n`);
    cleanUp();
    process.exit(130);
  });
}

// --- The workload: the bench's chat request (distinct text every time, no PII), trace ids rotating per slot. ---

let counter = 0;
function body(stream) {
  const n = counter++;
  const b = {
    model: MODEL,
    messages: [
      { role: 'system', content: 'You are a concise assistant that summarises build logs for an engineering team.' },
      { role: 'user', content: `Summarise step ${n} of the nightly build in one short sentence, naming the slowest stage.` },
    ],
    max_tokens: 64,
    temperature: 0.2,
  };
  if (stream) {
    b.stream = true;
    b.stream_options = { include_usage: true };
  }
  return { n, json: JSON.stringify(b) };
}

/** The trace id of slot `slot` now: a new UUID every traceSeconds, slots staggered over that period. */
const slotIds = new Map();
let distinctTraces = 0;
const startedAt = Date.now();
function traceIdFor(n) {
  const slot = n % config.traces;
  const periodMs = config.traceSeconds * 1000;
  const phase = (slot / config.traces) * periodMs;
  const epoch = Math.floor((Date.now() - startedAt + phase) / periodMs);
  let s = slotIds.get(slot);
  if (!s || s.epoch !== epoch) {
    s = { epoch, id: randomUUID() };
    slotIds.set(slot, s);
    distinctTraces++;
  }
  return s.id;
}

// --- Processes ---

async function startAll() {
  const mock = await forkServer('mock-upstream.mjs', { BENCH_SLOW_CHUNK_MS: '10' });
  const configPath = join(workDir, 'agentgw.yaml');
  writeFileSync(
    configPath,
    JSON.stringify({
      storage: { kind: 'sqlite', path: join(workDir, 'agentgw.db') },
      providers: {
        openai: { type: 'openai', base_url: `${mock.url}/v1`, api_key: 'sk-soak' },
        'openai-slow': { type: 'openai', base_url: `${mock.url}/slow/v1`, api_key: 'sk-soak' },
      },
      log_level: 'warn',
    }),
  );
  const nodeArgs = [...config.gatewayNodeArgs];
  if (config.snapshots.length > 0) {
    mkdirSync(config.snapshotDir, { recursive: true });
    nodeArgs.push('--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${config.snapshotDir}`);
  }
  const gateway = await spawnGateway({ configPath, adminKey: ADMIN_KEY, nodeArgs });
  return { mock, gateway };
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function main() {
  log(`${config.minutes} min, ${config.rate || 'unlimited'} requests/s on ${config.connections} connections, ${config.traces} traces in flight, a new id per slot every ${config.traceSeconds} s (${config.cpus} CPUs, node ${config.node})`);
  log(`gateway flags: ${[...Object.entries(config.launcher.env).map(([k, v]) => `${k}=${v}`), ...config.launcher.flags, ...config.gatewayNodeArgs].join(' ')}`);
  const { gateway } = await startAll();
  const pid = gateway.child.pid;
  const apiKey = await provisionAgent(gateway.url, ADMIN_KEY);
  await proveChecksAreOn(gateway.url, apiKey);
  log('policy checks verified live: allowed_models, pii, retry_block, max_cost_per_request, max_cost_per_trace, budgets, rpm, tpm');

  const durationMs = config.minutes * 60_000;
  const samples = [];
  let completed = 0;
  let failed = 0;
  const t0 = Date.now();
  const sample = () => {
    const m = memoryOf(pid);
    const s = { t: (Date.now() - t0) / 1000, rssMb: (m?.rssKb ?? NaN) / 1024, requests: completed, traces: distinctTraces };
    samples.push(s);
    process.stdout.write(
      `${s.t.toFixed(0).padStart(6)} s  rss ${s.rssMb.toFixed(1).padStart(7)} MB  requests ${String(s.requests).padStart(9)}  traces ${String(s.traces).padStart(8)}\n`,
    );
  };
  process.stdout.write('     t       rss                 requests            distinct traces\n');
  sample();
  const timer = setInterval(sample, config.sampleSeconds * 1000);
  const snapshotTimers = config.snapshots.map((f) =>
    setTimeout(() => {
      log(`heap snapshot at ${Math.round(f * 100)}% into ${config.snapshotDir}`);
      process.kill(pid, 'SIGUSR2');
    }, Math.max(0, Math.min(1, f) * durationMs - (f >= 1 ? 2000 : 0))),
  );

  const result = await new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: gateway.url,
        connections: config.connections,
        duration: Math.max(1, Math.round(durationMs / 1000)),
        pipelining: 1,
        timeout: 10,
        ...(config.rate > 0 ? { overallRate: config.rate } : {}),
        requests: [
          {
            method: 'POST',
            path: '/v1/chat/completions',
            setupRequest: (req) => {
              const { n, json } = body(Math.random() < config.streamShare);
              return {
                ...req,
                headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'x-agent-trace-id': traceIdFor(n) },
                body: json,
              };
            },
          },
        ],
      },
      (err, r) => (err ? reject(err) : resolve(r)),
    );
    instance.on('response', (_client, statusCode) => {
      completed++;
      if (statusCode !== 200) failed++;
    });
  });
  clearInterval(timer);
  for (const t of snapshotTimers) clearTimeout(t);
  sample();

  await new Promise((r) => setTimeout(r, 1500));
  const recorded = await recordedRequests(gateway.url, ADMIN_KEY).catch(() => null);
  const stopped = await gateway.stop();
  if (stopped !== 0) log(`gateway stopped with ${stopped}:\n${gateway.stderr()}`);

  const end = samples[samples.length - 1].t;
  const third = (i) => samples.filter((s) => s.t >= (end * i) / 3 && (i === 2 ? s.t <= end : s.t < (end * (i + 1)) / 3)).map((s) => s.rssMb);
  const middle = mean(third(1));
  const last = mean(third(2));
  const failures = result.errors + result.timeouts + result.non2xx;
  const summary = {
    config: { ...config, launcher: undefined },
    requests: result.requests.total,
    requestsPerSec: result.requests.total / result.duration,
    failures,
    recordedRequests: recorded,
    distinctTraces,
    rss: {
      startMb: samples[0].rssMb,
      endMb: samples[samples.length - 1].rssMb,
      peakMb: Math.max(...samples.map((s) => s.rssMb)),
      middleThirdMeanMb: middle,
      lastThirdMeanMb: last,
      lastOverMiddle: last / middle,
    },
    samples,
  };
  process.stdout.write(
    [
      '',
      `requests ${summary.requests} (${summary.requestsPerSec.toFixed(0)}/s), failures ${failures}, recorded ${recorded ?? '?'}, distinct traces ${distinctTraces}`,
      `RSS start ${summary.rss.startMb.toFixed(1)} MB, end ${summary.rss.endMb.toFixed(1)} MB, peak ${summary.rss.peakMb.toFixed(1)} MB`,
      `RSS mean, middle third ${middle.toFixed(1)} MB, last third ${last.toFixed(1)} MB: last / middle = ${summary.rss.lastOverMiddle.toFixed(3)}`,
      '',
    ].join('\n'),
  );
  if (process.env.SOAK_RESULTS) writeFileSync(process.env.SOAK_RESULTS, `${JSON.stringify(summary, null, 2)}\n`);
  return failures === 0 && failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`soak: failed: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
