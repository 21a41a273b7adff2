import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@agentgw/gateway';
import { SERVE_DEFAULTS } from '../commands/serve.js';
import { BIN, runCli } from './__fixtures__/harness.js';

interface Served {
  stdout: string;
  stderr: string;
  adminUrl: string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Every server started, so that a failed test leaves none running. */
const started = new Set<ChildProcess>();

/** `agentgw serve --port 0` in `cwd` (so its SQLite file is ./data/agentgw.db there), with only `env`. */
async function serve(cwd: string, env: NodeJS.ProcessEnv): Promise<Served> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first with npm run build (npm test does)`);
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  child.once('close', () => started.delete(child));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const adminUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agentgw serve did not start in 30 s:\n${stderr}`)), 30_000);
    child.stderr.on('data', () => {
      const m = /agentgw listening: admin (\S+\/api), gateway \S+\/v1, console \S+\/ui\n/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => reject(new Error(`agentgw serve exited with ${code}:\n${stderr}`)));
  });
  return {
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    adminUrl,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The status of an admin read with `key`: 200 for a valid key, 401 for another. */
async function me(adminUrl: string, key: string): Promise<number> {
  return (await fetch(`${adminUrl}/tenants`, { headers: { authorization: `Bearer ${key}` } })).status;
}

describe('agentgw serve', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-serve-'));
  afterAll(() => {
    for (const child of started) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('--help names AGENTGW_ADMIN_KEY, the defaults and the port', async () => {
    const defaults = loadConfig({ env: {} });
    expect(defaults.listen).toBe(`${SERVE_DEFAULTS.host}:${SERVE_DEFAULTS.port}`);
    expect(defaults.storage).toEqual({ kind: 'sqlite', path: SERVE_DEFAULTS.sqlitePath });

    const res = await runCli(['serve', '--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('AGENTGW_ADMIN_KEY');
    expect(res.stdout).toContain('--port <n>');
    expect(res.stdout).toContain(`default ${SERVE_DEFAULTS.port}`);
    expect(res.stdout).toContain(`default ${SERVE_DEFAULTS.host}`);
    expect(res.stdout).toContain(`http://${SERVE_DEFAULTS.host}:${SERVE_DEFAULTS.port}/api`);
    expect(res.stdout).toContain(SERVE_DEFAULTS.sqlitePath);
    expect(res.stdout).toContain('mock');
  });

  it('prints a generated key once, says when AGENTGW_ADMIN_KEY replaces it, and keeps one format per stream', async () => {
    // First start without a key: one is generated and printed once, on stderr.
    const first = await serve(dir, {});
    const generated = /^agentgw: generated the root admin key \(shown once, only its hash is stored\): (adk_\w+)$/m.exec(first.stderr)?.[1];
    expect(generated).toBeDefined();
    expect(await me(first.adminUrl, generated!)).toBe(200);
    expect(await first.stop()).toBe(0);

    // A chosen key replaces it, and the server says so; the generated key no longer works.
    const chosen = 'adk_chosen_for_the_serve_e2e_test_0123456789';
    const second = await serve(dir, { AGENTGW_ADMIN_KEY: chosen });
    expect(second.stderr).toContain('agentgw: AGENTGW_ADMIN_KEY replaces the root admin key generated on an earlier start; that key no longer works.');
    expect(await me(second.adminUrl, chosen)).toBe(200);
    expect(await me(second.adminUrl, generated!)).toBe(401);
    expect(await second.stop()).toBe(0);

    // The same key again: nothing to say. Another key: it names the earlier one as set, not generated.
    const third = await serve(dir, { AGENTGW_ADMIN_KEY: chosen });
    expect(third.stderr).not.toContain('replaces');
    expect(await third.stop()).toBe(0);
    const fourth = await serve(dir, { AGENTGW_ADMIN_KEY: `${chosen}_2` });
    expect(fourth.stderr).toContain('agentgw: AGENTGW_ADMIN_KEY replaces the root admin key an earlier AGENTGW_ADMIN_KEY set; that key no longer works.');
    expect(await fourth.stop()).toBe(0);

    // stdout: the server's log, every line a JSON object; stderr: sentences, none of them JSON.
    for (const s of [first, second, third, fourth]) {
      const out = s.stdout.split('\n').filter(Boolean);
      expect(out.length).toBeGreaterThan(0);
      for (const line of out) expect(() => JSON.parse(line), line).not.toThrow();
      for (const line of s.stderr.split('\n').filter(Boolean)) expect(line).toMatch(/^agentgw[: ]/);
    }
    expect(second.stdout).toMatch(/"msg":"Server listening at http:\/\/127\.0\.0\.1:\d+"/);
    // A stop (SIGTERM here, ctrl-C alike) says the drain started, then when the server stopped.
    for (const s of [first, second, third, fourth]) {
      const lines = s.stderr.split('\n').filter(Boolean);
      expect(lines.at(-2)).toMatch(/^agentgw draining: no new requests; finishing those in flight/);
      expect(lines.at(-1)).toMatch(/^agentgw stopped at \d{4}-\d\d-\d\dT[\d:.]+Z after draining for \d+\.\d s$/);
    }
  });
});
