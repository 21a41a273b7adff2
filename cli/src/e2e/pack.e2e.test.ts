import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from './__fixtures__/harness.js';

/**
 * The package a user installs without cloning: `npm pack` at the root makes agentgw-VERSION.tgz (the gateway, the CLI
 * and the built console, as bundled workspace packages, with what they need at run time); installed into an empty
 * folder from the npm cache, `npx agentgw serve` there answers /healthz, /ui and a chat call through a local
 * OpenAI-compatible upstream, and the install holds no test client, no build tool and no development dependency.
 *
 * It packs this checkout's build (`npm test` builds first; `npm run build` otherwise). The install runs with
 * --ignore-scripts and then takes better-sqlite3's native binding from this checkout's install (the same version, built
 * for this Node.js): a user's `npm install` of the tarball compiles it for theirs, which would add minutes of compiling
 * SQLite to this test and nothing it checks. The install's size and time are printed.
 */

const MINUTE = 60_000;
const ADMIN_KEY = 'adk_pack_check_a_long_random_secret_value';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A user's shell: no node_modules/.bin on PATH (it would lend the test this checkout's agentgw), no npm run-script or AGENTGW_ variables. */
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

function run(cmd: string, args: string[], cwd: string, env = userEnv(), timeoutMs = 5 * MINUTE): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} took longer than ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** npm's registry requests: a minute each at most, retried, instead of five minutes three times (a hung connection). */
const NPM_FETCH = ['--fetch-timeout=60000', '--fetch-retries=5'];

/** Every installed package under `nodeModules` (nested ones too): name -> how many copies. */
function installedPackages(nodeModules: string, into = new Map<string, number>()): Map<string, number> {
  if (!existsSync(nodeModules)) return into;
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith('.')) continue;
    const names = entry.startsWith('@') ? readdirSync(join(nodeModules, entry)).map((sub) => `${entry}/${sub}`) : [entry];
    for (const name of names) {
      into.set(name, (into.get(name) ?? 0) + 1);
      installedPackages(join(nodeModules, name, 'node_modules'), into);
    }
  }
  return into;
}

/** Bytes and files under `dir` (symlinks not followed). */
function sizeOf(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const sub = sizeOf(path);
      bytes += sub.bytes;
      files += sub.files;
    } else {
      bytes += lstatSync(path).size;
      files++;
    }
  }
  return { bytes, files };
}

const pkg = (path: string) => JSON.parse(readFileSync(join(REPO, path), 'utf8')) as { version?: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
const MB = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

describe('the packed agentgw package, installed into an empty folder', () => {
  let work: string;
  let app: string;
  let upstream: Server;
  let upstreamUrl: string;
  const upstreamBodies: Array<{ model?: string }> = [];
  let server: ChildProcess | undefined;

  beforeAll(async () => {
    for (const built of ['cli/dist/bin.js', 'gateway/dist/index.js', 'console/dist/index.html']) {
      expect(existsSync(join(REPO, built)), `${built} is built (npm run build)`).toBe(true);
    }
    work = mkdtempSync(join(tmpdir(), 'agentgw-pack-'));
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], REPO);
    expect(packed.code, packed.stderr).toBe(0);
    const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; size: number; unpackedSize: number; entryCount: number }>;
    console.log(`agentgw tarball: ${info!.filename}, ${MB(info!.size)} (${MB(info!.unpackedSize)} unpacked, ${info!.entryCount} files)`);

    app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'agentgw-pack-check', private: true }));
    const started = Date.now();
    // A registry request that hangs is given up after a minute and tried again (npm's own default waits five minutes,
    // three times over); each request is logged, so a failure says which one.
    const install = await run(
      'npm',
      ['install', join(work, info!.filename), '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', ...NPM_FETCH, '--loglevel=http'],
      app,
      userEnv(),
      10 * MINUTE,
    );
    expect(install.code, `${install.stdout}\n${install.stderr}`).toBe(0);
    const seconds = (Date.now() - started) / 1000;
    const binding = join('better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    const installedSqlite = join(app, 'node_modules', 'agentgw', 'node_modules', 'better-sqlite3');
    expect(pkg(join('node_modules', 'better-sqlite3', 'package.json')).version).toBe(JSON.parse(readFileSync(join(installedSqlite, 'package.json'), 'utf8')).version);
    mkdirSync(dirname(join(installedSqlite, '..', binding)), { recursive: true });
    copyFileSync(join(REPO, 'node_modules', binding), join(installedSqlite, '..', binding));
    const { bytes, files } = sizeOf(join(app, 'node_modules'));
    console.log(`agentgw installed from the tarball: ${MB(bytes)} in ${files} files, ${seconds.toFixed(1)} s (scripts not run)`);

    upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
        const parsed = JSON.parse(body) as { model?: string };
        upstreamBodies.push(parsed);
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-pack',
            object: 'chat.completion',
            created: 1_700_000_000,
            model: parsed.model,
            choices: [{ index: 0, message: { role: 'assistant', content: 'hello from the local upstream' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  }, 15 * MINUTE);

  afterAll(async () => {
    // npx runs the server as its child: the whole process group is stopped
    if (server?.pid && server.exitCode === null) {
      const closed = new Promise((resolve) => server!.once('close', resolve));
      process.kill(-server.pid, 'SIGTERM');
      await closed;
    }
    await new Promise((resolve) => upstream?.close(resolve));
    if (work) await rm(work, { recursive: true, force: true });
  }, MINUTE);

  it('holds the gateway, the CLI and the built console, links npx agentgw, and has no test client or development dependency', () => {
    const inside = join(app, 'node_modules', 'agentgw', 'node_modules', '@agentgw');
    for (const file of ['gateway/dist/index.js', 'cli/bin/agentgw.js', 'cli/dist/bin.js', 'console/dist/index.html']) {
      expect(existsSync(join(inside, file)), file).toBe(true);
    }
    expect(existsSync(join(inside, 'gateway', 'src')), 'no sources').toBe(false);
    expect(existsSync(join(app, 'node_modules', '.bin', 'agentgw'))).toBe(true);

    const runtime = new Set([...Object.keys(pkg('gateway/package.json').dependencies ?? {}), ...Object.keys(pkg('cli/package.json').dependencies ?? {})]);
    const notForUse = [
      ...Object.keys(pkg('test-clients/package.json').dependencies ?? {}),
      ...Object.keys(pkg('package.json').devDependencies ?? {}),
      ...Object.keys(pkg('console/package.json').devDependencies ?? {}),
      ...Object.keys(pkg('terraform-provider-bridge/package.json').dependencies ?? {}).filter((n) => !n.startsWith('@agentgw/')),
    ].filter((name) => !runtime.has(name));
    expect(notForUse).toContain('@anthropic-ai/claude-code');
    const installed = installedPackages(join(app, 'node_modules'));
    expect(installed.has('fastify')).toBe(true);
    expect(notForUse.filter((name) => installed.has(name))).toEqual([]);
  });

  it('npx agentgw serve answers /healthz, /ui and a chat call through a local OpenAI-compatible upstream', async () => {
    writeFileSync(
      join(app, 'agentgw.yaml'),
      [
        'providers:',
        '  local:',
        '    type: openai-compatible',
        `    base_url: ${upstreamUrl}/v1`,
        '    models: [small-model]',
        'prices:',
        '  local/small-model: { input: 0, output: 0 }',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(app, 'policies.yaml'),
      [
        'version: 1',
        'tenants:',
        '  - { id: acme, name: Acme }',
        'policies:',
        '  - { id: standard, tenant_id: acme, allowed_models: ["local/*"] }',
        'agents:',
        '  - { name: bot, tenant_id: acme, policy_id: standard }',
        '',
      ].join('\n'),
    );
    const env = userEnv({ AGENTGW_ADMIN_KEY: ADMIN_KEY });
    const child = spawn('npx', ['agentgw', 'serve', '--config', 'agentgw.yaml', '--port', '0'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    server = child;
    let stderr = '';
    child.stdout!.resume();
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npx agentgw serve did not listen in a minute:\n${stderr}`)), MINUTE);
      child.stderr!.on('data', (d) => {
        stderr += d;
        const m = /agentgw listening: admin (\S+)\/api, gateway \S+\/v1/.exec(stderr);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        reject(new Error(`npx agentgw serve ended (${code}):\n${stderr}`));
      });
    });

    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    const ui = await fetch(`${url}/ui/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/<!doctype html>/i);

    const apply = await run('npx', ['agentgw', 'apply', '-f', 'policies.yaml', '--auto-approve', '--keys-out', 'keys.json'], app, {
      ...env,
      AGENTGW_ADMIN_URL: `${url}/api`,
    });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const key = (JSON.parse(readFileSync(join(app, 'keys.json'), 'utf8')) as Record<string, string>)['acme/bot'];
    expect(key).toBeDefined();

    const chat = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local/small-model', messages: [{ role: 'user', content: 'Say hello.' }] }),
    });
    const answer = (await chat.json()) as { choices?: Array<{ message: { content: string } }> };
    expect(chat.status, JSON.stringify(answer)).toBe(200);
    expect(answer.choices?.[0]?.message.content).toBe('hello from the local upstream');
    expect(upstreamBodies.map((b) => b.model)).toEqual(['small-model']);
  }, 3 * MINUTE);
});
