// A changed MCP tool as a unified diff of its pinned and its current definition (description, input schema,
// annotations), so an admin reads what changed before accepting it. Hidden characters are written as escapes.
import type { McpPinnedTool } from '@agentgw/gateway/contract';
import { revealHidden } from './approval-text.js';

type Definition = NonNullable<McpPinnedTool['pinned_definition']>;

/** Lines shown around each change. */
const CONTEXT = 3;
/** Past this many line pairs the diff is not searched for common lines: the old lines go, the new come. */
const MAX_CELLS = 4_000_000;

/** JSON with keys sorted and two-space indents: the same schema always reads the same. */
function stableJson(v: unknown): string {
  const sort = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sort);
    if (x !== null && typeof x === 'object') return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort((x as Record<string, unknown>)[k])]));
    return x;
  };
  return JSON.stringify(sort(v), null, 2) ?? 'null';
}

function linesOf(text: string): string[] {
  return text.split('\n').map(revealHidden);
}

type Op = { kind: ' ' | '-' | '+'; text: string };

/** The line edits from `a` to `b` (longest common subsequence). */
export function lineDiff(a: string[], b: string[]): Op[] {
  if (a.length * b.length > MAX_CELLS) return [...a.map((text) => ({ kind: '-' as const, text })), ...b.map((text) => ({ kind: '+' as const, text }))];
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: ' ', text: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) ops.push({ kind: '-', text: a[i++]! });
    else ops.push({ kind: '+', text: b[j++]! });
  }
  while (i < n) ops.push({ kind: '-', text: a[i++]! });
  while (j < m) ops.push({ kind: '+', text: b[j++]! });
  return ops;
}

/** Unified-diff hunks (`@@ -a,b +c,d @@`) with CONTEXT lines around each change. */
function hunks(ops: Op[]): string[] {
  const out: string[] = [];
  const changed = ops.map((o, k) => (o.kind !== ' ' ? k : -1)).filter((k) => k >= 0);
  if (changed.length === 0) return out;
  let start = 0;
  while (start < changed.length) {
    let end = start;
    while (end + 1 < changed.length && changed[end + 1]! - changed[end]! <= 2 * CONTEXT) end++;
    const from = Math.max(0, changed[start]! - CONTEXT);
    const to = Math.min(ops.length - 1, changed[end]! + CONTEXT);
    let oldLine = 1;
    let newLine = 1;
    for (let k = 0; k < from; k++) {
      if (ops[k]!.kind !== '+') oldLine++;
      if (ops[k]!.kind !== '-') newLine++;
    }
    const slice = ops.slice(from, to + 1);
    const oldCount = slice.filter((o) => o.kind !== '+').length;
    const newCount = slice.filter((o) => o.kind !== '-').length;
    out.push(`@@ -${oldLine},${oldCount} +${newLine},${newCount} @@`);
    for (const o of slice) out.push(`${o.kind}${o.text}`);
    start = end + 1;
  }
  return out;
}

/** The parts of a definition, each as the lines a diff compares. */
function parts(d: Definition): Array<[string, string[]]> {
  return [
    ['description', linesOf(d.description ?? '')],
    ['inputSchema', linesOf(stableJson(d.inputSchema))],
    ['annotations', linesOf(stableJson(d.annotations))],
  ];
}

/** `--- pinned` / `+++ listed now` and a section per part that changed; empty when nothing did. */
export function definitionDiff(server: string, tool: McpPinnedTool): string[] {
  if (!tool.pinned_definition) return [];
  const before = parts(tool.pinned_definition);
  const after = parts(tool.definition);
  const out: string[] = [];
  before.forEach(([name, lines], k) => {
    const h = hunks(lineDiff(lines, after[k]![1]));
    if (h.length === 0) return;
    out.push(`--- ${server}/${tool.name} ${name} (pinned ${tool.pinned_digest?.slice(0, 12) ?? '-'})`);
    out.push(`+++ ${server}/${tool.name} ${name} (listed now ${tool.digest.slice(0, 12)})`);
    out.push(...h);
  });
  return out;
}
