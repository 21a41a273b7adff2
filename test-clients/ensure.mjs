#!/usr/bin/env node
// Makes the test clients (test-clients/package.json: Claude Code, Codex, the SDKs, LangChain, the browser driver)
// importable from the repository's tests without `npm install` bringing them:
//   1. `npm ci` in test-clients/ when its node_modules is missing or was installed from another lockfile (the npm
//      cache first, so it works offline once the cache holds them; CI has the registry);
//   2. a symlink node_modules/NAME -> ../test-clients/node_modules/NAME at the root for each package installed there
//      that the root's node_modules lacks, so Node's resolution (ESM too), vitest and the type-checker all find them;
//      and the commands of the development tools among them (tsc, vitest) in node_modules/.bin.
// Run by `npm test` and `npm run typecheck`, and by vitest.config.ts (so `npx vitest run FILE` works too). A root
// `npm install` or `npm ci` removes the links as extraneous; the next run puts them back (nothing is downloaded again).
// It never replaces a package the root installed itself.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(HERE);
const OWN = join(HERE, 'node_modules');
const STAMP = join(OWN, '.agentgw-lock-hash');

function lockHash() {
  return createHash('sha256').update(readFileSync(join(HERE, 'package-lock.json'))).digest('hex');
}

/** The environment of a plain shell: none of the outer npm run-script's variables (they would aim npm at the root). */
function npmEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('npm_') && !k.startsWith('npm_config_')) continue;
    if (['npm_config_local_prefix', 'npm_config_prefix', 'npm_config_global_prefix', 'npm_config_call', 'npm_config_user_agent', 'npm_config_workspace', 'npm_config_workspaces'].includes(k)) continue;
    if (k === 'INIT_CWD') continue;
    env[k] = v;
  }
  return env;
}

function install() {
  process.stderr.write('agentgw: installing the test clients (test-clients/package-lock.json) with npm ci, the npm cache first\n');
  const r = spawnSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', '--fetch-timeout=60000', '--fetch-retries=5'], { cwd: HERE, env: npmEnv(), stdio: ['ignore', 2, 2] });
  if (r.status !== 0) {
    throw new Error(`npm ci in test-clients/ failed (exit ${r.status ?? r.signal}); run it there by hand to see why (offline, the npm cache must hold every package of test-clients/package-lock.json)`);
  }
  const direct = Object.keys(JSON.parse(readFileSync(join(HERE, 'package.json'), 'utf8')).dependencies ?? {});
  const missing = direct.filter((name) => !existsSync(join(OWN, name, 'package.json')));
  if (missing.length) throw new Error(`npm ci in test-clients/ left out ${missing.join(', ')}; run it there by hand to see why`);
  writeFileSync(STAMP, lockHash() + '\n');
}

/**
 * The packages the tests import: test-clients/package.json's dependencies, and the platform packages installed beside
 * them (`@anthropic-ai/claude-code-linux-x64`: the tests run its native binary). Their own dependencies stay inside
 * test-clients/node_modules, where Node finds them from the links' real paths.
 */
function linkedNames() {
  const direct = Object.keys(JSON.parse(readFileSync(join(HERE, 'package.json'), 'utf8')).dependencies ?? {});
  const names = [];
  for (const name of direct) {
    if (existsSync(join(OWN, name))) names.push(name);
    const scope = name.startsWith('@') ? name.split('/')[0] : '';
    const base = scope ? name.slice(scope.length + 1) : name;
    for (const entry of readdirSync(scope ? join(OWN, scope) : OWN)) {
      if (entry.startsWith(`${base}-${process.platform}-`)) names.push(scope ? `${scope}/${entry}` : entry);
    }
  }
  return names;
}

function link(name) {
  const at = join(ROOT, 'node_modules', name);
  const target = relative(dirname(at), join(OWN, name));
  let stat;
  try {
    stat = lstatSync(at);
  } catch {
    stat = undefined;
  }
  if (stat && !stat.isSymbolicLink()) return false; // the root's own install (a product dependency, or an older full install)
  if (stat) {
    if (readlinkSync(at) === target) return false;
    rmSync(at);
  }
  mkdirSync(dirname(at), { recursive: true });
  try {
    symlinkSync(target, at, 'dir');
  } catch (e) {
    if (e.code !== 'EEXIST') throw e; // another process linked it meanwhile
  }
  return true;
}

/**
 * The development tools among the test clients whose commands the root's npm scripts run (`tsc`, `vitest`): linked into
 * node_modules/.bin as npm would link them, unless the root installed a command of that name itself.
 */
const TOOLS = ['typescript', 'vitest'];

function linkBins(name) {
  const pkg = JSON.parse(readFileSync(join(OWN, name, 'package.json'), 'utf8'));
  const bins = typeof pkg.bin === 'string' ? { [name.split('/').pop()]: pkg.bin } : (pkg.bin ?? {});
  let linked = 0;
  for (const [command, file] of Object.entries(bins)) {
    const at = join(ROOT, 'node_modules', '.bin', command);
    const target = relative(dirname(at), join(ROOT, 'node_modules', name, file));
    let stat;
    try {
      stat = lstatSync(at);
    } catch {
      stat = undefined;
    }
    if (stat && (!stat.isSymbolicLink() || readlinkSync(at) === target)) continue;
    if (stat) rmSync(at);
    mkdirSync(dirname(at), { recursive: true });
    try {
      symlinkSync(target, at);
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    linked++;
  }
  return linked;
}

const isCurrent = () => existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === lockHash();

/**
 * Installs under a lock (a directory made atomically), so that processes starting at once (vitest and a type-check, two
 * test runs) do not run npm ci over each other; the others wait for it and then find the install current.
 */
function installLocked() {
  const lock = join(ROOT, 'node_modules', '.agentgw-test-clients-lock');
  const waitUntil = Date.now() + 15 * 60_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 15 * 60_000) rmSync(lock, { recursive: true, force: true }); // left by a killed install
      } catch {
        // removed meanwhile
      }
      if (Date.now() > waitUntil) throw new Error(`another install of the test clients holds ${lock}; remove it if none runs`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    if (isCurrent()) return false;
    install();
    return true;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export function ensureTestClients() {
  if (!existsSync(join(ROOT, 'node_modules'))) throw new Error('run `npm install` (or `npm ci`) at the root of the repository first');
  const current = isCurrent() || !installLocked();
  let linked = 0;
  for (const name of linkedNames()) if (link(name)) linked++;
  for (const name of TOOLS) linked += linkBins(name);
  return { installed: !current, linked };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) ensureTestClients();
