// Module hooks that let the scan worker run from the TypeScript sources (under vitest, on Node 20, which cannot strip
// types itself): `.js` imports are read from the `.ts` file beside them, types stripped by esbuild (what builds agentgw).
// The built gateway starts dist/policy/pii/scan-worker.js and never loads this file (the build does not copy it).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export async function resolve(specifier, context, next) {
  if (specifier.endsWith('.js') && (specifier.startsWith('./') || specifier.startsWith('../')) && context.parentURL?.endsWith('.ts')) {
    const url = new URL(specifier, context.parentURL);
    const ts = new URL(`${url.href.slice(0, -3)}.ts`);
    if (!existsSync(url) && existsSync(ts)) return { url: ts.href, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const { transform } = await import('esbuild');
  const path = fileURLToPath(url);
  // esbuild throws on a syntax error, naming the file and the line
  const { code } = await transform(await readFile(path, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20.18', sourcefile: path });
  return { format: 'module', source: code, shortCircuit: true };
}
