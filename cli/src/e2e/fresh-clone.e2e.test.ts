import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from './__fixtures__/harness.js';

/**
 * A fresh clone works as the README says: the repository is cloned into a temporary folder, the README's set-up commands
 * run there (`npm install`, then `npm start`), and `npx agentgw` and the tour's commands run against that server.
 *
 * The clone is of HEAD, with the working tree's uncommitted changes and new files laid over it (none in CI, which tests a
 * clean clone), so that it holds what committing now would. `npm install` runs as written, with the npm cache preferred
 * to the registry; it takes minutes. The server listens on a free port (`npm start -- --port 0`) and the CLI is pointed
 * at it with AGENTGW_ADMIN_URL, the agent script with its BASE_URL argument; everything else is the README's text, which
 * each command is checked against. AGENTGW_TEST_FRESH_CLONE=skip leaves this test out.
 */

const README = readFileSync(join(REPO, 'README.md'), 'utf8');
const TOUR_KEY = /export AGENTGW_ADMIN_KEY=(\S+)/.exec(README)?.[1] ?? '';
const MINUTE = 60_000;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a user's shell: none of the npm run-script variables (`npm test` runs this file), no
 * node_modules/.bin on PATH (it would lend the clone this checkout's `agentgw`), no AGENTGW_ variables. npm's own
 * configuration (npm_config_*: cache, registry, nodedir under CI's Node 22 pass) is kept.
 */
function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('AGENTGW_') || k === 'INIT_CWD' || k === 'NODE_OPTIONS' || k === 'VITEST' || k.startsWith('VITEST_')) continue;
    if (k.startsWith('npm_') && !k.startsWith('npm_config_')) continue;
    if (['npm_config_local_prefix', 'npm_config_call', 'npm_config_user_agent'].includes(k)) continue;
    env[k] = v;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => p && !/node_modules[\\/]\.bin$/.test(p) && !/node-gyp-bin$/.test(p))
    .join(delimiter);
  return { ...env, NO_COLOR: '1', ...extra };
}

function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? userEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      killGroup(child);
      reject(new Error(`${cmd} ${args.join(' ')} took longer than ${opts.timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, opts.timeoutMs ?? 2 * MINUTE);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** The lines of the first ```sh block after `heading`. */
function shBlock(heading: string): string[] {
  const from = README.indexOf(heading);
  expect(from, `README has ${heading}`).toBeGreaterThanOrEqual(0);
  const m = /```sh\n([\s\S]*?)```/.exec(README.slice(from));
  return m![1]!.split('\n').filter((l) => l.trim() !== '');
}

/** The first plain ``` block after the text `after`: an output the README shows. */
function outputBlock(after: string): string {
  const from = README.indexOf(after);
  expect(from, `README has ${after}`).toBeGreaterThanOrEqual(0);
  // an output block opens after a blank line; the fence that closes a command block follows a command
  return /\n\n```\n([\s\S]*?)```/.exec(README.slice(from))![1]!;
}

/** HEAD plus the working tree's changes: tracked edits and deletions as a diff, new files (not ignored) copied. */
async function layWorkingTreeOver(clone: string): Promise<void> {
  const diff = await run('git', ['diff', 'HEAD', '--binary'], { cwd: REPO });
  expect(diff.code, diff.stderr).toBe(0);
  if (diff.stdout.trim()) {
    await new Promise<void>((resolve, reject) => {
      const apply = spawn('git', ['apply', '--binary', '--whitespace=nowarn', '-'], { cwd: clone, stdio: ['pipe', 'inherit', 'pipe'] });
      let err = '';
      apply.stderr.on('data', (d) => (err += d));
      apply.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git apply of the working tree's changes failed:\n${err}`))));
      apply.stdin.end(diff.stdout);
    });
  }
  const untracked = await run('git', ['ls-files', '--others', '--exclude-standard', '-z'], { cwd: REPO });
  for (const file of untracked.stdout.split('\0').filter(Boolean)) {
    const target = join(clone, file);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(REPO, file), target);
    chmodSync(target, statSync(join(REPO, file)).mode & 0o777);
  }
}

interface Installed {
  /** Bytes allocated on disk (what `du -s` counts) and bytes of content (`du -s --apparent-size`). */
  disk: number;
  apparent: number;
  files: number;
  /** The name of every package in the tree, nested ones and links included. */
  packages: Set<string>;
}

/** A node_modules folder measured as du measures it (symlinks not followed, a file with several links once), with its packages. */
function measureInstall(nodeModules: string): Installed {
  const installed: Installed = { disk: 0, apparent: 0, files: 0, packages: new Set() };
  const linked = new Set<string>();
  const walk = (path: string): void => {
    const st = lstatSync(path);
    if (!st.isDirectory() && st.nlink > 1) {
      const inode = `${st.dev}:${st.ino}`;
      if (linked.has(inode)) return;
      linked.add(inode);
    }
    installed.disk += st.blocks * 512;
    installed.apparent += st.size;
    if (!st.isDirectory()) {
      installed.files++;
      return;
    }
    const entries = readdirSync(path);
    if (basename(path) === 'node_modules') {
      for (const entry of entries) {
        if (entry.startsWith('.')) continue;
        const scoped = entry.startsWith('@') && lstatSync(join(path, entry)).isDirectory();
        for (const name of scoped ? readdirSync(join(path, entry)).map((sub) => `${entry}/${sub}`) : [entry]) installed.packages.add(name);
      }
    }
    for (const entry of entries) walk(join(path, entry));
  };
  walk(nodeModules);
  return installed;
}

const MiB = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

interface NpmStart {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  url: string;
  stop(): Promise<void>;
}

/** `npm start` as the README runs it, on a free port; resolves once the server says it listens. */
async function npmStart(cwd: string, env: NodeJS.ProcessEnv, args: string[] = []): Promise<NpmStart> {
  const child = spawn('npm', ['start', '--', ...args, '--port', '0'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not start the server in 5 minutes:\n${stdout}\n${stderr}`)), 5 * MINUTE);
    child.stderr!.on('data', () => {
      const m = /agentgw listening: admin (\S+)\/api, gateway \S+\/v1, console \S+\/ui\n/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void closed.then(() => {
      clearTimeout(timer);
      reject(new Error(`npm start ended before the server listened:\n${stdout}\n${stderr}`));
    });
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    url,
    async stop() {
      killGroup(child);
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 20_000);
      await closed;
      clearTimeout(timer);
    },
  };
}

describe.skipIf(process.env.AGENTGW_TEST_FRESH_CLONE === 'skip')('a fresh clone, set up as the README says', () => {
  let work: string | undefined;
  let clone: string;
  let server: NpmStart | undefined;
  /** `git status` of the clone before anything ran: empty in CI; the working tree's changes when they were laid over it. */
  let asCloned: string;
  let lockfile: string;
  let installSeconds: number;

  /** One line of the README, run by sh in the clone against the running server. */
  async function readmeLine(line: string, opts: { appendArgs?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Result> {
    expect(README).toContain(line);
    return run('sh', ['-c', opts.appendArgs ? `${line} ${opts.appendArgs}` : line], {
      cwd: clone,
      env: userEnv({ AGENTGW_ADMIN_KEY: TOUR_KEY, AGENTGW_ADMIN_URL: `${server!.url}/api`, ...opts.env }),
      timeoutMs: 2 * MINUTE,
    });
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'agentgw-fresh-clone-'));
    clone = join(work, 'agentgw');
    const cloned = await run('git', ['clone', '-q', '--no-hardlinks', REPO, clone], { cwd: work });
    expect(cloned.code, cloned.stderr).toBe(0);
    await layWorkingTreeOver(clone);
    asCloned = (await run('git', ['status', '--porcelain'], { cwd: clone })).stdout;
    lockfile = readFileSync(join(clone, 'package-lock.json'), 'utf8');
    // The README's set-up: `npm install`, run as written (the cache first: CI reaches only the registry).
    const setup = shBlock('## Start it');
    expect(setup).toEqual(['npm install', 'npm start']);
    const started = Date.now();
    const install = await run('sh', ['-c', `${setup[0]} --prefer-offline --no-audit --no-fund --fetch-timeout=60000 --fetch-retries=5`], { cwd: clone, timeoutMs: 15 * MINUTE });
    installSeconds = (Date.now() - started) / 1000;
    expect(install.code, `${install.stdout}\n${install.stderr}`).toBe(0);
  }, 16 * MINUTE);

  afterAll(async () => {
    await server?.stop();
    if (work) await rm(work, { recursive: true, force: true }); // node_modules: over a gigabyte
  }, 5 * MINUTE);

  it('npm install links npx agentgw and leaves the clone as cloned', async () => {
    expect(existsSync(join(clone, 'node_modules', '.bin', 'agentgw'))).toBe(true);
    // No lockfile rewritten (the lockfile agrees with the package files, bin included), nothing untracked.
    expect(readFileSync(join(clone, 'package-lock.json'), 'utf8')).toBe(lockfile);
    const status = await run('git', ['status', '--porcelain'], { cwd: clone });
    expect(status.stdout).toBe(asCloned);
  });

  it('npm install brings what the gateway, the CLI and the console need, and none of the clients the tests drive', () => {
    const installed = measureInstall(join(clone, 'node_modules'));
    console.log(
      `npm install in a fresh clone: ${installSeconds.toFixed(1)} s; node_modules ${MiB(installed.disk)} on disk, ${MiB(installed.apparent)} apparent, ` +
        `${installed.files} files, ${installed.packages.size} packages`,
    );
    // test-clients/package.json's packages (and the native builds beside them), and the biggest of what they bring.
    const testClients = Object.keys((JSON.parse(readFileSync(join(clone, 'test-clients', 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
    expect(testClients).toEqual(
      expect.arrayContaining(['@anthropic-ai/claude-code', '@openai/codex', '@google/gemini-cli', 'playwright-core', 'oidc-provider', 'fast-check', 'typescript', 'vitest', 'openai']),
    );
    const platformBuild = (name: string) => testClients.some((client) => name.startsWith(`${client}-${process.platform}-`));
    const theirs = [
      '@anthropic-ai/claude-agent-sdk-linux-x64', '@anthropic-ai/claude-code-linux-x64', '@openai/codex-linux-x64', '@openai/agents-core', 'js-tiktoken', 'langsmith', 'pure-rand',
      // the development tools: the type-checker and the test runner with the bundler it brings
      '@typescript/typescript-linux-x64', 'vite', 'rolldown', 'lightningcss',
    ];
    // (@types/node and @types/react come with the product too: protobufjs and ink name them.)
    const testOnly = (name: string) => !name.startsWith('@types/') && (testClients.includes(name) || theirs.includes(name) || platformBuild(name));
    const present = [...installed.packages].filter(testOnly);
    expect(present, 'test-only packages in the install').toEqual([]);
    // The product's own packages are there (the check above looks at the right tree), and what builds it.
    for (const name of ['fastify', 'better-sqlite3', 'ink', 'react-dom', 'esbuild']) expect(installed.packages, name).toContain(name);
    // better-sqlite3 keeps only the module it built (scripts/trim-native-build.mjs, the postinstall).
    expect(readdirSync(join(clone, 'node_modules', 'better-sqlite3', 'build', 'Release')).sort()).toEqual(['better_sqlite3.node']);
    // The target: under 250 MB on disk. One test client would add tens to hundreds of MB.
    expect(installed.disk, MiB(installed.disk)).toBeLessThan(250e6);
  });

  it('npm start builds and serves: a generated key and other text on stderr, its log as JSON lines on stdout', async () => {
    server = await npmStart(clone, userEnv());
    // stderr: text for people (the build's output, if any, then the server's sentences), no JSON.
    const stderr = server.stderr().split('\n').filter((l) => l.trim());
    expect(stderr.filter((l) => l.startsWith('agentgw'))).toEqual([
      expect.stringMatching(/^agentgw: generated the root admin key \(shown once, only its hash is stored\): adk_\w+$/),
      expect.stringMatching(/^agentgw listening: admin http:\/\/127\.0\.0\.1:\d+\/api, gateway http:\/\/127\.0\.0\.1:\d+\/v1, console http:\/\/127\.0\.0\.1:\d+\/ui$/),
    ]);
    for (const line of stderr) expect(line, 'a JSON line on stderr').not.toMatch(/^\{".*\}$/);
    // stdout: npm's banner (lines starting "> "), then the server's JSON log only (a pipe of its own: it may come later).
    for (let i = 0; i < 100 && !server.stdout().includes('Server listening at'); i++) await new Promise((r) => setTimeout(r, 100));
    const log = server.stdout().split('\n').filter((l) => l.trim() && !l.startsWith('> '));
    expect(log.length).toBeGreaterThan(0);
    for (const line of log) expect(() => JSON.parse(line), line).not.toThrow();
  }, 6 * MINUTE);

  it('npx agentgw --help, and serve --help names AGENTGW_ADMIN_KEY, the defaults and the port', async () => {
    const help = await run('npx', ['agentgw', '--help'], { cwd: clone });
    expect(help.stderr).toBe('');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: agentgw /);
    const serveHelp = await run('npx', ['agentgw', 'serve', '--help'], { cwd: clone });
    expect(serveHelp.code).toBe(0);
    for (const text of ['AGENTGW_ADMIN_KEY', '--port <n>', 'default 8080', 'default 127.0.0.1', './data/agentgw.db']) expect(serveHelp.stdout).toContain(text);
  });

  it("the tour: the chosen key replaces the generated one, plan shows the README's plan, apply, agents call the mock", async () => {
    await server!.stop();
    expect(TOUR_KEY).toMatch(/^adk_/);
    expect(README).toContain(`export AGENTGW_ADMIN_KEY=${TOUR_KEY}\nnpm start\n`);
    server = await npmStart(clone, userEnv({ AGENTGW_ADMIN_KEY: TOUR_KEY }));
    expect(server.stderr()).toContain('agentgw: AGENTGW_ADMIN_KEY replaces the root admin key generated on an earlier start; that key no longer works.\n');

    const plan = await readmeLine('npx agentgw plan -f examples/policies.yaml');
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toBe(outputBlock('npx agentgw plan -f examples/policies.yaml\n```'));

    const apply = await readmeLine('npx agentgw apply -f examples/policies.yaml --auto-approve --keys-out keys.json');
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toContain('Apply complete: 8 added, 0 changed, 0 destroyed.');
    const again = await readmeLine('npx agentgw plan -f examples/policies.yaml --detailed-exitcode   # exit 0: nothing left to change');
    expect(again.code, again.stdout + again.stderr).toBe(0);

    // The agents call the gateway's /v1 on its port: the script's BASE_URL argument (the README's default is :8080).
    const base = `${server.url}/v1`;
    const research = await readmeLine(`node examples/openai-agent.mjs "$(node -p 'require("./keys.json")["acme/research-agent"]')"`, { appendArgs: base });
    expect(research.code, research.stderr).toBe(0);
    const traceId = /^trace: (\S+) /m.exec(research.stdout)?.[1];
    expect(traceId).toBeDefined();
    const traces = await readmeLine('npx agentgw traces list');
    expect(traces.code, traces.stderr).toBe(0);
    expect(traces.stdout).toContain(traceId);
    const show = await run('sh', ['-c', `npx agentgw traces show ${traceId}`], { cwd: clone, env: userEnv({ AGENTGW_ADMIN_KEY: TOUR_KEY, AGENTGW_ADMIN_URL: `${server.url}/api` }) });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('Total: 3 requests, 0 errors');
    const usage = await readmeLine('npx agentgw usage --group-by model');
    expect(usage.code, usage.stderr).toBe(0);
    expect(usage.stdout).toContain('mock/mock-1');

    const allowed = await readmeLine(`node examples/openai-agent.mjs "$(node -p 'require("./keys.json")["acme/support-bot"]')"`, { appendArgs: base });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain('embeddings: 2 vectors');
    const refused = await readmeLine(`MODEL=mock/mock-2 node examples/openai-agent.mjs "$(node -p 'require("./keys.json")["acme/support-bot"]')"`, { appendArgs: base });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(outputBlock('MODEL=mock/mock-2 node examples/openai-agent.mjs'));
  }, 8 * MINUTE);

  it('the CDKTF example synthesizes without the CDKTF CLI, says what it wrote, and plans', async () => {
    const synth = await readmeLine('npx esbuild examples/cdktf/main.ts --outdir=examples/cdktf/dist --platform=node --format=esm --log-level=warning && node examples/cdktf/dist/main.js');
    expect(synth.code, synth.stdout + synth.stderr).toBe(0);
    expect(synth.stdout).toBe(outputBlock('npx agentgw plan --cdktf cdktf.out/stacks/support\n```'));
    const plan = await readmeLine('npx agentgw plan --cdktf cdktf.out/stacks/support');
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/^Plan: \d+ to add, \d+ to change, 0 to destroy\.$/m);
  }, 4 * MINUTE);

  it('after the tour the clone is as cloned: keys.json, data/, dist/ and cdktf.out/ are ignored', async () => {
    expect(existsSync(join(clone, 'keys.json'))).toBe(true);
    const status = await run('git', ['status', '--porcelain'], { cwd: clone });
    expect(status.stdout).toBe(asCloned);
  });
});
