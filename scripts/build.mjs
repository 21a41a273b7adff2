#!/usr/bin/env node
// Builds what `npm start` and the packed package run, with esbuild (no type-checking: `npm run typecheck` does that):
//   - gateway/, cli/, terraform-provider-bridge/: every source file of src/ (tests, fixtures and test support left out)
//     to dist/ beside it, one JavaScript module per TypeScript module, with source maps;
//   - console/: one bundle (script and stylesheet, named by their content) and index.html in console/dist, served at /ui.
// Usage: node scripts/build.mjs [gateway|cli|terraform-provider-bridge|console ...]   (all four by default)
import { build } from 'esbuild';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const NODE_PACKAGES = ['gateway', 'cli', 'terraform-provider-bridge'];

/** A module that is part of the product: not a test, a benchmark, a fixture, a snapshot or test support. */
function isProductModule(path) {
  return /\.tsx?$/.test(path) && !/\.d\.ts$/.test(path) && !/\.(test|bench)\.tsx?$/.test(path);
}
const SKIPPED_DIRS = new Set(['__fixtures__', '__snapshots__', 'test-support', 'node_modules']);

/** The files under `dir` that `keep` accepts, outside tests' folders. */
function files(dir, keep) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) out.push(...files(path, keep));
    } else if (keep(path)) out.push(path);
  }
  return out;
}

async function buildNodePackage(name) {
  const pkg = join(ROOT, name);
  const src = join(pkg, 'src');
  await build({
    entryPoints: files(src, isProductModule),
    outbase: src,
    outdir: join(pkg, 'dist'),
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20.18',
    // maps point at src/ as tsc's did, without copies of the sources in them (the package ships dist/ alone)
    sourcemap: true,
    sourcesContent: false,
    tsconfig: join(pkg, 'tsconfig.json'),
    logLevel: 'warning',
  });
  // JSON read beside the modules (tsc's resolveJsonModule copied these too)
  for (const file of files(src, (path) => path.endsWith('.json'))) {
    const to = join(pkg, 'dist', relative(src, file));
    mkdirSync(dirname(to), { recursive: true });
    cpSync(file, to);
  }
}

/**
 * The console: main.tsx bundled (React, uPlot and the styles in it), minified, into assets/ under content-hashed names
 * (the gateway serves assets/ as immutable); index.html is console/index.html with its development entry replaced by
 * the built script and stylesheet, and public/ is copied as is. No inline script or style (the gateway's CSP).
 */
async function buildConsole() {
  const dir = join(ROOT, 'console');
  const dist = join(dir, 'dist');
  rmSync(dist, { recursive: true, force: true });
  const result = await build({
    entryPoints: { index: join(dir, 'src', 'main.tsx') },
    bundle: true,
    outdir: join(dist, 'assets'),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    minify: true,
    legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
    tsconfig: join(dir, 'tsconfig.json'),
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => relative(join(dist, 'assets'), join(ROOT, p)));
  const script = outputs.find((p) => p.endsWith('.js'));
  const styles = outputs.filter((p) => p.endsWith('.css'));
  if (!script) throw new Error('the console build wrote no script');
  const entry = '<script type="module" src="/src/main.tsx"></script>';
  const html = readFileSync(join(dir, 'index.html'), 'utf8');
  if (!html.includes(entry)) throw new Error(`console/index.html no longer loads ${entry}`);
  const head = [
    `<script type="module" crossorigin src="/ui/assets/${script}"></script>`,
    ...styles.map((css) => `<link rel="stylesheet" crossorigin href="/ui/assets/${css}">`),
  ].join('\n    ');
  writeFileSync(join(dist, 'index.html'), html.replace(`    ${entry}\n`, '').replace('  </head>', `    ${head}\n  </head>`));
  if (existsSync(join(dir, 'public'))) cpSync(join(dir, 'public'), dist, { recursive: true });
}

const wanted = process.argv.slice(2);
const all = [...NODE_PACKAGES, 'console'];
for (const name of wanted) if (!all.includes(name)) throw new Error(`unknown part ${name}: one of ${all.join(', ')}`);
const parts = wanted.length ? wanted : all;
await Promise.all(parts.map((name) => (name === 'console' ? buildConsole() : buildNodePackage(name))));
if (parts.includes('cli')) chmodSync(join(ROOT, 'cli', 'dist', 'bin.js'), 0o755);
process.stderr.write(`built ${parts.join(', ')}\n`);
