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
 * Builds the workspace with `tsc -b` (as `npm run build` does) so that processes started by a test (the plugin
 * binary, the agentgw CLI) run the current code. Test files run in parallel, so one builds while the others wait.
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
    // Type errors elsewhere in the workspace do not stop tsc -b from emitting; the tests judge the behaviour.
    execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', PACKAGE_DIR], {
      cwd: REPO_ROOT,
      stdio: 'ignore',
    });
  } catch {
    // reported through the missing outputs below, if it matters
  } finally {
    rmdirSync(LOCK);
  }
  for (const out of [join(PACKAGE_DIR, 'dist', 'provider-server', 'main.js'), join(PACKAGE_DIR, 'dist', 'index.js')]) {
    if (!existsSync(out)) throw new Error(`${out} was not built: run npx tsc -b terraform-provider-bridge`);
  }
}
