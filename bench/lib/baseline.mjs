// BENCH_BASELINE=<git rev> (and BENCH_GATEWAY_REV): the gateway of another revision, built once into a git worktree
// outside the repository and started beside this checkout's gateway, so "before" and "after" are measured in one run.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** What a finished build of the worktree leaves (under dist/, ignored by git): the revision and how its dependencies were installed. */
const STAMP = join('cli', 'dist', 'agentgw-bench-build.json');

const git = (args, cwd = REPO) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/**
 * The packages the revision's gateway and cli need at run time, and esbuild (or typescript and @types/*) to build them, as its
 * lockfile resolves them: lockfile path -> version. Optional peers are left out (npm installs none of them either).
 */
function neededPackages(lock) {
  const pk = lock.packages ?? {};
  const resolve = (name, from) => {
    for (let base = from; ; ) {
      const key = base ? `${base}/node_modules/${name}` : `node_modules/${name}`;
      if (pk[key]) return key;
      if (!base) return null;
      const i = base.lastIndexOf('/node_modules/');
      base = i >= 0 ? base.slice(0, i) : '';
    }
  };
  const deps = (e) => [
    ...Object.keys({ ...e.dependencies, ...e.optionalDependencies }),
    ...Object.keys(e.peerDependencies ?? {}).filter((p) => !e.peerDependenciesMeta?.[p]?.optional),
  ];
  const queue = [];
  for (const ws of ['gateway', 'cli']) for (const d of deps(pk[ws] ?? {})) queue.push([d, ws]);
  for (const d of Object.keys(pk['']?.devDependencies ?? {})) if (d === 'typescript' || d === 'esbuild' || d.startsWith('@types/')) queue.push([d, '']);
  const out = new Map();
  const missing = [];
  const seen = new Set();
  while (queue.length > 0) {
    const [name, from] = queue.pop();
    const key = resolve(name, from);
    if (key === null) {
      missing.push(`${name} (needed by ${from || 'the root'})`);
      continue;
    }
    if (seen.has(key)) continue;
    seen.add(key);
    const e = pk[key];
    if (e.link) {
      for (const d of deps(pk[e.resolved] ?? {})) queue.push([d, e.resolved]);
      continue;
    }
    if (!e.optional) out.set(key, e.version);
    for (const d of deps(e)) queue.push([d, key]);
  }
  return { packages: out, missing };
}

/**
 * Whether this checkout's node_modules holds every package the revision needs at the version its lockfile names:
 * a list of the differences (empty when the revision can run on it).
 */
function differences(worktree) {
  const lock = JSON.parse(readFileSync(join(worktree, 'package-lock.json'), 'utf8'));
  const { packages, missing } = neededPackages(lock);
  const out = missing.map((m) => `${m}: not in the revision's lockfile`);
  for (const [key, version] of packages) {
    let have = null;
    try {
      have = JSON.parse(readFileSync(join(REPO, key, 'package.json'), 'utf8')).version;
    } catch {
      // not installed here
    }
    if (have !== version) out.push(`${key}: ${version} in the revision's lockfile, ${have ?? 'none'} installed here`);
  }
  return out;
}

/**
 * node_modules of the worktree as links into this checkout's, except the workspace links (@agentgw/*), which point at
 * the worktree's own packages, so its cli loads its own gateway.
 */
function linkNodeModules(worktree) {
  const ours = join(REPO, 'node_modules');
  const theirs = join(worktree, 'node_modules');
  mkdirSync(theirs, { recursive: true });
  for (const name of readdirSync(ours)) {
    const target = join(theirs, name);
    if (existsSync(target) || isLink(target)) continue;
    if (name === '@agentgw') {
      mkdirSync(target);
      // The workspace links are relative (../../gateway): copied as they are, they name the worktree's packages.
      for (const ws of readdirSync(join(ours, name))) symlinkSync(readlinkSync(join(ours, name, ws)), join(target, ws));
      continue;
    }
    symlinkSync(join(ours, name), target);
  }
}

function isLink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Builds revision `rev` once into `<tmpdir>/agentgw-bench-<sha>` (a detached git worktree; later runs reuse it) and
 * returns its gateway binary. Its dependencies are this checkout's node_modules, linked, when its lockfile names the
 * same versions of everything its gateway and cli need; otherwise `npm ci` installs its own.
 */
export function buildRevision(rev, log) {
  let sha;
  try {
    sha = git(['rev-parse', '--verify', `${rev}^{commit}`]);
  } catch {
    throw new Error(`BENCH_BASELINE or BENCH_GATEWAY_REV: ${rev} names no commit of this repository`);
  }
  const dir = join(tmpdir(), `agentgw-bench-${sha.slice(0, 12)}`);
  const bin = join(dir, 'cli', 'dist', 'bin.js');
  const stampPath = join(dir, STAMP);
  if (existsSync(stampPath)) {
    const stamp = JSON.parse(readFileSync(stampPath, 'utf8'));
    if (stamp.sha === sha && existsSync(bin)) {
      log(`revision ${sha.slice(0, 12)}: reusing the build in ${dir} (dependencies: ${stamp.dependencies})`);
      return { sha, dir, bin, dependencies: stamp.dependencies };
    }
  }
  if (!existsSync(dir)) {
    log(`revision ${sha.slice(0, 12)}: git worktree add --detach ${dir}`);
    git(['worktree', 'add', '--detach', dir, sha]);
  } else if (git(['rev-parse', 'HEAD'], dir) !== sha) {
    throw new Error(`${dir} exists but is not a checkout of ${sha}: remove it (git worktree remove ${dir}) and run again`);
  }
  const diff = differences(dir);
  let dependencies;
  if (diff.length === 0) {
    dependencies = "this checkout's node_modules, linked (the revision's lockfile names the same versions)";
    linkNodeModules(dir);
  } else {
    dependencies = `npm ci (the lockfiles differ: ${diff.slice(0, 3).join('; ')}${diff.length > 3 ? `; ${diff.length - 3} more` : ''})`;
    log(`revision ${sha.slice(0, 12)}: ${dependencies}`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
  }
  // Revisions with scripts/build.mjs build with it (esbuild); older ones with their own TypeScript (tsc -b).
  const buildScript = join(dir, 'scripts', 'build.mjs');
  const build = existsSync(buildScript) ? [buildScript, 'gateway', 'cli'] : [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'cli'];
  log(`revision ${sha.slice(0, 12)}: building gateway and cli (${existsSync(buildScript) ? 'scripts/build.mjs gateway cli' : 'tsc -b cli'})`);
  execFileSync(process.execPath, build, { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
  if (!existsSync(bin)) throw new Error(`baseline ${sha}: the build left no ${bin}`);
  writeFileSync(stampPath, `${JSON.stringify({ sha, dependencies, builtAt: new Date().toISOString() })}\n`);
  return { sha, dir, bin, dependencies };
}
