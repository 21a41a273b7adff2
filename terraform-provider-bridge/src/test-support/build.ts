import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const PACKAGE_DIR = join(REPO_ROOT, 'terraform-provider-bridge');
export const PLUGIN_BIN = join(PACKAGE_DIR, 'bin', 'terraform-provider-agentgw');
export const CLI_BIN = join(REPO_ROOT, 'cli', 'dist', 'bin.js');

const LOCK = join(tmpdir(), 'agentgw-cdktf-build.lock');

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Builds the gateway, the CLI and the bridge with scripts/build.mjs (as `npm run build` does) so that processes started
 * by a test (the plugin binary, the agentgw CLI) run the current code. Test files run in parallel, so one builds while
 * the others wait.
 */
export function buildWorkspace(): void {
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      if (existsSync(LOCK) && Date.now() - statSync(LOCK).mtimeMs > 180_000) rmdirSync(LOCK);
      if (waited > 180_000) throw new Error(`waited 3 minutes for ${LOCK}`);
      sleep(200);
    }
  }
  try {
    execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'build.mjs'), 'gateway', 'cli', 'terraform-provider-bridge'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  } finally {
    rmdirSync(LOCK);
  }
  for (const out of [join(PACKAGE_DIR, 'dist', 'provider-server', 'main.js'), join(PACKAGE_DIR, 'dist', 'index.js')]) {
    if (!existsSync(out)) throw new Error(`${out} was not built: run npm run build`);
  }
}
