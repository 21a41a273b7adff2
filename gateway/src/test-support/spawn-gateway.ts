import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

export const AGENTGW_BIN = fileURLToPath(new URL('../../../cli/dist/bin.js', import.meta.url));

export interface SpawnedGateway {
  url: string;
  adminUrl: string;
  baseUrl: string;
  process: ChildProcess;
  stderr(): string;
  /** Sends SIGTERM and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs the real `agentgw serve` binary (built by `npm test`) on a free port with the given config. The child gets this
 * process's environment plus `env`, or only `env` when `inheritEnv` is false; it runs in `cwd` when given.
 */
export async function spawnGateway(opts: { config: Record<string, unknown>; env?: NodeJS.ProcessEnv; inheritEnv?: boolean; cwd?: string }): Promise<SpawnedGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-proc-'));
  const configPath = join(dir, 'agentgw.yaml');
  writeFileSync(configPath, stringify({ log_level: 'warn', ...opts.config }));
  const child = spawn(process.execPath, [AGENTGW_BIN, 'serve', '--config', configPath, '--port', '0'], {
    env: opts.inheritEnv === false ? { ...opts.env } : { ...process.env, ...opts.env },
    cwd: opts.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stdout!.resume();
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agentgw did not start within 30 s: ${err}`)), 30_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /agentgw listening: admin (\S+)\/api/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`agentgw exited with ${code}: ${err}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    url,
    adminUrl: `${url}/api`,
    baseUrl: `${url}/v1`,
    process: child,
    stderr: () => err,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
