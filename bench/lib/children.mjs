// The benchmark's child processes: the mock upstream, the bare proxy and the real gateway binary; all end when this process does.
import { execFileSync, fork, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));
export const AGENTGW_BIN = fileURLToPath(new URL('../../cli/dist/bin.js', import.meta.url));

const children = new Set();

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Kills every child still running (synchronous, so it also works from an 'exit' handler). */
export function killChildren(signal = 'SIGTERM') {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
}

/** Starts one of bench/*.mjs as a child that reports its port over IPC. */
export function forkServer(script, env = {}) {
  const child = track(fork(`${BENCH_DIR}${script}`, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start within 10 s`)), 10_000);
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve({ child, url: `http://127.0.0.1:${m.port}` });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code} before listening`));
    });
  });
}

/**
 * What the agentgw launcher line (`#!/usr/bin/env -S [NAME=VALUE ...] node [flags]`) sets: environment variables and
 * node flags, so the bench measures the gateway as it is started in use.
 */
export function launcherLine(bin = AGENTGW_BIN) {
  const first = readFileSync(bin, 'utf8').split('\n', 1)[0];
  const m = /^#!\/usr\/bin\/env\s+-S\s+(.*)$/.exec(first);
  const words = m ? m[1].split(/\s+/).filter(Boolean) : [];
  const node = words.indexOf('node');
  const env = {};
  for (const w of words.slice(0, Math.max(node, 0))) {
    const eq = w.indexOf('=');
    if (eq > 0) env[w.slice(0, eq)] = w.slice(eq + 1);
  }
  return { env, flags: node === -1 ? [] : words.slice(node + 1) };
}

const LISTENING = /agentgw listening: admin (\S+)\/api, gateway (\S+)\/v1/;

/**
 * Runs `agentgw serve --config FILE --port 0` as its launcher line starts it and resolves once it prints its addresses;
 * `bin` is this checkout's binary unless another build's is given (BENCH_BASELINE).
 */
export function spawnGateway({ configPath, adminKey, nodeArgs = [], bin = AGENTGW_BIN }) {
  const launcher = launcherLine(bin);
  const child = track(
    spawn(process.execPath, [...launcher.flags, ...nodeArgs, bin, 'serve', '--config', configPath, '--port', '0'], {
      env: { ...process.env, ...launcher.env, AGENTGW_ADMIN_KEY: adminKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stderr = '';
  child.stdout.resume();
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const started = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agentgw did not start within 30 s:\n${stderr}`)), 30_000);
    child.stderr.on('data', (d) => {
      stderr += d.toString();
      const m = LISTENING.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`agentgw exited with ${code} before listening:\n${stderr}`));
    });
  });
  return started.then((url) => ({
    child,
    url,
    stderr: () => stderr,
    /** SIGTERM, then wait: the gateway drains and flushes usage (and writes a CPU profile when asked to). */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 15_000).unref());
      const how = await Promise.race([exited, timeout]);
      if (how === 'timeout') child.kill('SIGKILL');
      return how;
    },
  }));
}

/** Reads VmRSS / VmHWM (kB) of a process from /proc; null where /proc is unavailable. */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') };
  } catch {
    return null;
  }
}

/** Polls a process's RSS; peak() is the larger of the highest sample and the kernel's high-water mark. */
export function sampleMemory(pid, everyMs = 200) {
  let peakKb = 0;
  let lastHwmKb = 0;
  const take = () => {
    const m = memoryOf(pid);
    if (!m) return;
    if (m.rssKb > peakKb) peakKb = m.rssKb;
    if (m.hwmKb > lastHwmKb) lastHwmKb = m.hwmKb;
  };
  take();
  const timer = setInterval(take, everyMs);
  timer.unref();
  return {
    stop() {
      take();
      clearInterval(timer);
      return { peakRssMb: peakKb / 1024, hwmMb: lastHwmKb / 1024 };
    },
  };
}

let clockTicks;
/** User + system CPU time a process has used so far, in ms (from /proc/PID/stat); null where /proc is unavailable. */
export function cpuTimeMs(pid) {
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
  } catch {
    return null;
  }
}
