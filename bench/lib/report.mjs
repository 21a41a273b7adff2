// The final table and the pass/fail lines; targets are reported, never enforced through the exit code.

export const TARGETS = {
  throughputShareOfProxy: 0.85,
  addedLatencyP50Ms: 0.15,
  addedTtfbP50Ms: 0.5,
  peakMemoryMb: 120,
};

const LABELS = { direct: 'direct to mock', proxy: 'bare proxy', accounted: 'accounted proxy', gateway: 'gateway', baseline: 'baseline gateway' };

const num = (v, digits) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

/** Target lines from the measured results: {name, value (for display), measured, limit, pass}. */
export function evaluate(results) {
  const out = [];
  for (const mode of ['nonStreaming', 'streaming']) {
    const share = results.ratios?.[mode]?.gatewayOverProxy;
    if (share === undefined) continue;
    out.push({
      name: `gateway req/s >= ${TARGETS.throughputShareOfProxy * 100}% of bare proxy (${mode === 'streaming' ? 'streaming' : 'non-streaming'})`,
      value: `${num(share * 100, 1)}%`,
      measured: share,
      limit: TARGETS.throughputShareOfProxy,
      pass: share >= TARGETS.throughputShareOfProxy,
    });
  }
  for (const [name, k] of Object.entries(results.checks ?? {})) {
    if (k.addedShareOfGatewayCpu === null) continue;
    out.push({
      name: `checks, ${name}: added <= 5% of the gateway's CPU/req`,
      value: `${num(k.addedShareOfGatewayCpu * 100, 1)}%`,
      measured: k.addedShareOfGatewayCpu,
      limit: 0.05,
      pass: k.addedShareOfGatewayCpu <= 0.05,
    });
  }
  if (results.latency) {
    out.push({
      name: `added latency, 1 in flight, p50 <= ${TARGETS.addedLatencyP50Ms} ms`,
      value: `${num(results.latency.addedP50Ms, 3)} ms`,
      measured: results.latency.addedP50Ms,
      limit: TARGETS.addedLatencyP50Ms,
      pass: results.latency.addedP50Ms <= TARGETS.addedLatencyP50Ms,
    });
  }
  if (results.ttfb) {
    out.push({
      name: `added time to first streamed byte, p50 <= ${TARGETS.addedTtfbP50Ms} ms`,
      value: `${num(results.ttfb.addedP50Ms, 3)} ms`,
      measured: results.ttfb.addedP50Ms,
      limit: TARGETS.addedTtfbP50Ms,
      pass: results.ttfb.addedP50Ms <= TARGETS.addedTtfbP50Ms,
    });
  }
  for (const cmp of results.comparisons ?? []) {
    if (cmp.pass === null || cmp.pass === undefined) continue;
    const byRatio = cmp.limit.ratio !== undefined;
    out.push({
      name: byRatio ? `${cmp.name} <= ${num(cmp.limit.ratio * 100, 0)}% (CPU/req, median of rounds)` : `${cmp.name} <= ${cmp.limit.diffUs} (median of rounds)`,
      value: byRatio ? `${num(cmp.medianRatio * 100, 1)}%` : `${num(cmp.medianDiffUs, 1)} us`,
      measured: byRatio ? cmp.medianRatio : cmp.medianDiffUs,
      limit: byRatio ? cmp.limit.ratio : cmp.limit.diffUs,
      pass: cmp.pass,
    });
  }
  if (results.memory) {
    out.push({
      name: `gateway peak memory <= ${TARGETS.peakMemoryMb} MB`,
      value: `${num(results.memory.peakMb, 1)} MB`,
      measured: results.memory.peakMb,
      limit: TARGETS.peakMemoryMb,
      pass: results.memory.peakMb <= TARGETS.peakMemoryMb,
    });
  }
  return out;
}

export function renderTable(results) {
  const lines = [];
  const c = results.config;
  lines.push('');
  lines.push(`agentgw overhead benchmark: ${c.cpus} CPUs (${c.cpuModel}), Node ${c.node}`);
  const launcherEnv = Object.entries(c.gatewayLauncherEnv ?? {}).map(([k, v]) => `${k}=${v}`);
  if (c.traces) lines.push(`traces: ${c.traces === 'concurrent' ? 'concurrent (500 agent runs in flight, random UUID trace ids, 50 steps each)' : 'sequential (one run at a time, 50 steps each)'} (BENCH_TRACES)`);
  lines.push(`gateway started as: ${[...launcherEnv, 'node', ...(c.gatewayLauncherFlags ?? []), ...(c.gatewayNodeArgs ?? [])].join(' ')} (launcher line${c.gatewayNodeArgs?.length ? ' + BENCH_GATEWAY_NODE_ARGS' : ''})`);
  lines.push(
    c.gatewayBuild
      ? `gateway: built from ${c.gatewayBuild.sha.slice(0, 12)} (BENCH_GATEWAY_REV=${c.gatewayRev})`
      : `gateway: this checkout's build (commit ${c.commit?.slice(0, 12) ?? 'unknown'}${c.uncommitted ? `; ${c.uncommitted}` : ''})`,
  );
  if (c.baselineBuild) lines.push(`baseline gateway: built from ${c.baselineBuild.sha.slice(0, 12)} (BENCH_BASELINE=${c.baseline}), same config and launcher flags`);
  lines.push('Load generator, mock upstream and the system under test share these CPUs: compare the ratios, not the absolute numbers.');
  if (results.load) {
    lines.push('');
    lines.push(`Throughput: ${c.connections} connections, ${c.seconds} s per target in ${c.rounds} rotating rounds, after a ${c.warmupSeconds} s warm-up`);
    lines.push(`  ${pad('', 15)}${pad('target', 16)}${lpad('req/s', 10)}${lpad('p50 ms', 9)}${lpad('p99 ms', 9)}${lpad('CPU us/req', 12)}`);
    for (const [mode, title] of [['nonStreaming', 'non-streaming'], ['streaming', 'streaming']]) {
      const runs = results.load[mode];
      if (!runs) continue;
      let first = true;
      for (const name of ['direct', 'proxy', 'accounted', 'gateway', 'baseline']) {
        const r = runs[name];
        if (!r) continue;
        lines.push(`  ${pad(first ? title : '', 15)}${pad(LABELS[name], 16)}${lpad(num(r.requestsPerSec, 0), 10)}${lpad(num(r.p50Ms, 2), 9)}${lpad(num(r.p99Ms, 2), 9)}${lpad(num(r.cpuUsPerRequest, 0), 12)}`);
        first = false;
      }
    }
    lines.push('');
    lines.push(`  ${pad('ratio of req/s', 31)}${lpad('non-streaming', 15)}${lpad('streaming', 11)}`);
    const ratio = (mode, key) => `${num((results.ratios[mode]?.[key] ?? NaN) * 100, 1)}%`;
    lines.push(`  ${pad('gateway / bare proxy', 31)}${lpad(ratio('nonStreaming', 'gatewayOverProxy'), 15)}${lpad(ratio('streaming', 'gatewayOverProxy'), 11)}`);
    lines.push(`  ${pad('gateway / direct', 31)}${lpad(ratio('nonStreaming', 'gatewayOverDirect'), 15)}${lpad(ratio('streaming', 'gatewayOverDirect'), 11)}`);
    lines.push(`  ${pad('bare proxy / direct', 31)}${lpad(ratio('nonStreaming', 'proxyOverDirect'), 15)}${lpad(ratio('streaming', 'proxyOverDirect'), 11)}`);
    if (results.ratios.nonStreaming?.accountedOverProxy !== undefined) {
      lines.push(`  ${pad('accounted proxy / bare proxy', 31)}${lpad(ratio('nonStreaming', 'accountedOverProxy'), 15)}${lpad(ratio('streaming', 'accountedOverProxy'), 11)}`);
      lines.push(`  ${pad('gateway / accounted proxy', 31)}${lpad(ratio('nonStreaming', 'gatewayOverAccounted'), 15)}${lpad(ratio('streaming', 'gatewayOverAccounted'), 11)}`);
    }
    const cpu = (mode) => `${num(results.ratios[mode]?.gatewayCpuOverProxyCpu ?? NaN, 2)}x`;
    lines.push(`  ${pad('CPU per request, gateway/proxy', 31)}${lpad(cpu('nonStreaming'), 15)}${lpad(cpu('streaming'), 11)}`);
    lines.push('  (CPU us/req: CPU time of the process in the middle, i.e. the mock when direct, per request served)');
  }
  if (results.agent) {
    lines.push('');
    lines.push(`Agent-sized requests (a recorded Claude Code request, 24 tools): ${c.connections} connections, ${c.agentSeconds} s per target`);
    lines.push(`  ${pad('workload', 32)}${lpad('KB', 5)}${lpad('proxy req/s', 13)}${lpad('gw req/s', 10)}${lpad('proxy us', 10)}${lpad('gw us', 8)}${lpad('gw/proxy CPU', 14)}`);
    for (const [name, r] of Object.entries(results.agent)) {
      lines.push(
        `  ${pad(name, 32)}${lpad(num(r.bodyBytes / 1024, 0), 5)}${lpad(num(r.proxy.requestsPerSec, 0), 13)}${lpad(num(r.gateway.requestsPerSec, 0), 10)}` +
          `${lpad(num(r.proxy.cpuUsPerRequest, 0), 10)}${lpad(num(r.gateway.cpuUsPerRequest, 0), 8)}${lpad(`${num(r.gatewayCpuOverProxyCpu, 2)}x`, 14)}`,
      );
    }
    lines.push('  (us: CPU microseconds per request of the proxy and of the gateway, on the same request bytes)');
    const extra = [
      ['rules', 'the same gateway, an agent with 10 tool rules (BENCH_TOOL_RULES=compare)'],
      ['baseline', `baseline gateway ${c.baselineBuild?.sha?.slice(0, 12) ?? ''} (BENCH_BASELINE)`],
    ].filter(([key]) => Object.values(results.agent).some((r) => r[key]));
    for (const [key, label] of extra) {
      lines.push(`  ${pad(`${label}:`, 70)}`);
      for (const [name, r] of Object.entries(results.agent)) {
        if (!r[key]) continue;
        lines.push(`  ${pad(`  ${name}`, 37)}${lpad(num(r[key].requestsPerSec, 0), 23)}${lpad(num(r[key].cpuUsPerRequest, 0), 18)}`);
      }
    }
    if (Object.keys(results.agent).some((name) => name.startsWith('responses'))) {
      const runs = c.traces === 'sequential' ? 'one run at a time' : '500 runs in flight';
      lines.push(`  (responses: recorded Codex requests, 10 tools, the conversation resent whole as Codex does, ${runs}, steps 0-49; KB is the mean)`);
    }
  }
  if (results.routing) {
    const r = results.routing;
    lines.push('');
    lines.push(`Routing: non-streaming chat load on the gateway, ${c.connections} connections, ${c.seconds} s per alias`);
    lines.push(`  ${pad('alias', 31)}${lpad('req/s', 10)}${lpad('p50 ms', 9)}${lpad('CPU us/req', 12)}`);
    for (const [name, label] of [['single', 'one target'], ['weighted', '4 weighted targets']]) {
      lines.push(`  ${pad(label, 31)}${lpad(num(r[name].requestsPerSec, 0), 10)}${lpad(num(r[name].p50Ms, 2), 9)}${lpad(num(r[name].cpuUsPerRequest, 1), 12)}`);
    }
    lines.push(`  ${pad('routing cost, us per request', 31)}${lpad(num(r.routingCostUsPerRequest, 1), 31)}`);
    if (r.comparison) {
      const k = r.comparison;
      lines.push(`  ${pad('  per round: median [min, max]', 31)}${lpad(`${num(k.medianDiffUs, 1)} [${num(k.minDiffUs, 1)}, ${num(k.maxDiffUs, 1)}]`, 31)}`);
    }
  }
  const cpuComparisons = (results.comparisons ?? []).filter((k) => k.limit?.ratio !== undefined);
  if (cpuComparisons.length > 0) {
    lines.push('');
    lines.push(`Comparisons in this run (CPU us per request; both targets in the same ${c.rounds} rotating rounds):`);
    lines.push(`  ${pad('comparison', 58)}${lpad('before', 8)}${lpad('after', 8)}${lpad('after/before', 14)}${lpad('rounds: median [min, max]', 28)}`);
    for (const k of cpuComparisons) {
      lines.push(
        `  ${pad(k.name, 58)}${lpad(num(k.beforeUs, 0), 8)}${lpad(num(k.afterUs, 0), 8)}${lpad(`${num(k.ratio * 100, 1)}%`, 14)}` +
          `${lpad(`${num(k.medianRatio * 100, 1)}% [${num(k.minRatio * 100, 1)}, ${num(k.maxRatio * 100, 1)}]`, 28)}`,
      );
    }
  }
  if (results.checks) {
    lines.push('');
    lines.push('Request-side checks, paired in one process (us per request: parse, case rule, PII check, prompt bound, retry subject; same bodies, builds in turn)');
    lines.push(`  ${pad('workload', 26)}${lpad('before', 9)}${lpad('after', 9)}${lpad('added', 9)}${lpad('gateway CPU/req', 17)}${lpad('added share', 13)}   after by step`);
    for (const [name, k] of Object.entries(results.checks)) {
      const steps = ['parse', 'keyCase', 'pii', 'bound', 'retry'].map((s) => `${s} ${num(k.after[s], 1)}`).join(', ');
      lines.push(
        `  ${pad(name, 26)}${lpad(num(k.before.total, 1), 9)}${lpad(num(k.after.total, 1), 9)}${lpad(num(k.addedUs, 1), 9)}` +
          `${lpad(k.gatewayCpuUsPerRequest === null ? 'n/a' : num(k.gatewayCpuUsPerRequest, 0), 17)}${lpad(k.addedShareOfGatewayCpu === null ? 'n/a' : `${num(k.addedShareOfGatewayCpu * 100, 1)}%`, 13)}   ${steps}`,
      );
    }
  }
  if (results.firstText) {
    lines.push('');
    lines.push(`Time to first text byte, tool rules off and on (${c.ttfbSamples} streamed requests per agent, one in flight, alternating; upstream sends the rest ${c.slowChunkMs} ms later)`);
    lines.push(`  ${pad('workload', 24)}${lpad('no rules p50', 14)}${lpad('rules p50', 11)}${lpad('diff p50', 10)}${lpad('diff p99', 10)}${lpad('diff per block: median [min, max]', 36)}`);
    for (const [name, k] of Object.entries(results.firstText)) {
      lines.push(
        `  ${pad(name, 24)}${lpad(num(k.beforeP50Ms, 3), 14)}${lpad(num(k.afterP50Ms, 3), 11)}${lpad(num(k.diffP50Ms, 3), 10)}${lpad(num(k.diffP99Ms, 3), 10)}` +
          `${lpad(`${num(k.medianDiffP50Ms, 3)} [${num(k.minDiffP50Ms, 3)}, ${num(k.maxDiffP50Ms, 3)}]`, 36)}`,
      );
    }
    lines.push('  (ms, from sending to the first answer text; p50 per block of samples, as many blocks as BENCH_ROUNDS)');
  }
  const sequential = (title, block, addedLabel) => {
    lines.push('');
    lines.push(title);
    lines.push(`  ${pad('target', 31)}${lpad('p50 ms', 10)}${lpad('p99 ms', 10)}`);
    for (const name of ['direct', 'proxy', 'gateway']) {
      const r = block.byTarget[name];
      lines.push(`  ${pad(LABELS[name], 31)}${lpad(num(r.p50Ms, 3), 10)}${lpad(num(r.p99Ms, 3), 10)}`);
    }
    lines.push(`  ${pad(addedLabel, 31)}${lpad(num(block.addedP50Ms, 3), 10)}${lpad(num(block.addedP99Ms, 3), 10)}`);
  };
  if (results.latency) {
    sequential(`Latency with one request in flight (non-streaming, ${c.sequentialSamples} requests per target, interleaved)`, results.latency, 'gateway minus bare proxy');
  }
  if (results.ttfb) {
    sequential(
      `Time to first streamed byte (${c.ttfbSamples} requests per target; upstream sends the rest ${c.slowChunkMs} ms later)`,
      results.ttfb,
      'gateway minus bare proxy',
    );
  }
  if (results.memory) {
    lines.push('');
    const m = results.memory;
    lines.push(`Gateway memory: peak RSS ${num(m.peakMb, 1)} MB (VmHWM ${num(m.hwmMb, 1)} MB, polled peak ${num(m.polledPeakMb, 1)} MB); ${num(m.startedMb, 1)} MB right after start`);
  }
  if (results.recordedRequests !== undefined) {
    lines.push(`Requests the gateway recorded in its usage table: ${results.recordedRequests ?? 'n/a'}`);
  }
  lines.push('');
  lines.push('Targets');
  for (const t of results.targets) lines.push(`  [${t.pass ? 'PASS' : 'FAIL'}] ${pad(t.name, 58)} ${t.value}`);
  lines.push('');
  return lines.join('\n');
}
