import { spawn } from 'node:child_process';
import { spawnGateway } from '../../../../gateway/src/test-support/spawn-gateway.js';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
export const BIN = join(REPO, 'cli', 'dist', 'bin.js');
export const EXAMPLE = join(REPO, 'examples', 'policies.yaml');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `agentgw` binary as a user would: no TTY, stdin closed. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, cwd = REPO): Promise<CliResult> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first with npm run build (npm test does)`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface RunningCli {
  /** What it printed so far. */
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves when stdout matches, rejects when the process ends first or time runs out. */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<void>;
  signal(sig: NodeJS.Signals): void;
  exited: Promise<CliResult>;
}

/** Starts the built `agentgw` binary and leaves it running, for commands that run until stopped (traces tail). */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}, cwd = REPO): RunningCli {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first with npm run build (npm test does)`);
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  let ended = false;
  void exited.finally(() => (ended = true));
  return {
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    async waitForStdout(pattern, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(stdout)) {
        if (ended) throw new Error(`agentgw ${args.join(' ')} ended before printing ${pattern}:\n${stdout}${stderr}`);
        if (Date.now() > deadline) throw new Error(`agentgw ${args.join(' ')} did not print ${pattern} in ${timeoutMs} ms:\n${stdout}${stderr}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    signal: (sig) => {
      if (!ended) child.kill(sig);
    },
    exited,
  };
}

export interface ServedGateway {
  url: string;
  adminUrl: string;
  adminKey: string;
  dir: string;
  /** Env for CLI runs against this gateway. */
  env: NodeJS.ProcessEnv;
  /** SIGTERM, then the exit code of `agentgw serve`. */
  stop(): Promise<number | null>;
}

/** Spawns `agentgw serve --port 0` with a temp SQLite file, a known root key and no inherited environment. */
export async function serveGateway(): Promise<ServedGateway> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first with npm run build (npm test does)`);
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-cli-e2e-'));
  const adminKey = 'adk_' + 'e2e'.repeat(10) + 'xy';
  const served = await spawnGateway({
    config: { storage: { kind: 'sqlite', path: join(dir, 'agentgw.db') }, log_level: 'silent' },
    env: { PATH: process.env.PATH, AGENTGW_ADMIN_KEY: adminKey },
    inheritEnv: false,
    cwd: dir,
  });
  return {
    url: served.url,
    adminUrl: served.adminUrl,
    adminKey,
    dir,
    env: { AGENTGW_ADMIN_URL: served.adminUrl, AGENTGW_ADMIN_KEY: adminKey },
    async stop() {
      const code = await served.stop();
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}
