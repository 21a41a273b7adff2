// A CPU profile of two builds in one process (handler-pair.mjs), split by build: each sample is credited to the nearest
// frame of one build's gateway files up its stack (a library or Node frame called from a build's code counts for that
// build); samples with no build frame (the collector, the event loop, the client) are credited to neither.
// Also runnable alone: node bench/lib/profile-sides.mjs <profile> <before root> <after root> [rows]
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Per build, the milliseconds of samples credited to it, and per function (file and name, without the build's root)
 * the self milliseconds; `rows`: the functions whose two builds differ most, largest first.
 */
export function profileSides(profile, beforeRoot, afterRoot, rows = 25) {
  const prefixes = { before: `${pathToFileURL(resolve(beforeRoot)).href}/gateway/`, after: `${pathToFileURL(resolve(afterRoot)).href}/gateway/` };
  const sideOf = (url) => (url.startsWith(prefixes.before) ? 'before' : url.startsWith(prefixes.after) ? 'after' : null);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const sampled = new Map();
  for (let i = 0; i < profile.samples.length; i++) sampled.set(profile.samples[i], (sampled.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const totals = { before: 0, after: 0, neither: 0 };
  const self = { before: new Map(), after: new Map() };
  for (const [id, us] of sampled) {
    let node = byId.get(id);
    let side = null;
    while (node && !(side = sideOf(node.callFrame.url))) node = byId.get(parent.get(node.id));
    if (!side) {
      totals.neither += us;
      continue;
    }
    totals[side] += us;
    const key = `${node.callFrame.url.slice(prefixes[side].length - 'gateway/'.length)} ${node.callFrame.functionName || '(anonymous)'}`;
    self[side].set(key, (self[side].get(key) ?? 0) + us);
  }
  const ms = (us) => Math.round(us / 100) / 10;
  const keys = new Set([...self.before.keys(), ...self.after.keys()]);
  const differing = [...keys]
    .map((fn) => ({ fn, before: ms(self.before.get(fn) ?? 0), after: ms(self.after.get(fn) ?? 0) }))
    .sort((a, b) => Math.abs(b.after - b.before) - Math.abs(a.after - a.before))
    .slice(0, rows);
  return { ms: { before: ms(totals.before), after: ms(totals.after), neither: ms(totals.neither) }, differing };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, before, after, rows] = process.argv.slice(2);
  const { ms, differing } = profileSides(JSON.parse(readFileSync(file, 'utf8')), before, after, Number(rows ?? 25));
  process.stdout.write(`ms credited: before ${ms.before}, after ${ms.after}, neither ${ms.neither}\n`);
  for (const r of differing) process.stdout.write(`${String(r.before).padStart(8)} ${String(r.after).padStart(8)} ${(r.after - r.before).toFixed(1).padStart(8)}  ${r.fn}\n`);
}
