import type { Approval } from '../admin-client/types.js';
import { duration } from './format-usage.js';
import { line, seg, type Line, type Tone } from './lines.js';

/**
 * Characters a terminal would hide, reorder or act on (controls, escape sequences, bidirectional overrides, zero-width
 * and other invisible characters, tags): a person approving a call must see every character of its arguments, so these
 * are written as escapes (`\u202e`) instead.
 */
const HIDDEN =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]|[\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]|[\ud800-\udfff]/gu;

/** `text` with every hidden character written as an escape; the rest as it is. */
export function revealHidden(text: string): string {
  return text.replace(HIDDEN, (c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}

/** The inside of a JSON string literal, hidden characters escaped too. */
function jsonInside(text: string): string {
  return revealHidden(JSON.stringify(text).slice(1, -1));
}

/** A JSON string literal as pieces ending at each newline it holds, so a multi-line value reads line by line. */
function stringPieces(text: string): string[] {
  const parts = text.split('\n');
  const pieces = parts.map((p, i) => jsonInside(p) + (i < parts.length - 1 ? '\\n' : ''));
  pieces[0] = `"${pieces[0]}`;
  pieces[pieces.length - 1] += '"';
  return pieces;
}

interface RawLine {
  indent: number;
  /** The line's text; a string value's later pieces continue it on lines of their own. */
  pieces: string[];
}

function jsonLines(value: unknown, indent: number, prefix: string, suffix: string, out: RawLine[]): void {
  if (Array.isArray(value)) {
    if (value.length === 0) return void out.push({ indent, pieces: [`${prefix}[]${suffix}`] });
    out.push({ indent, pieces: [`${prefix}[`] });
    value.forEach((v, i) => jsonLines(v, indent + 2, '', i < value.length - 1 ? ',' : '', out));
    out.push({ indent, pieces: [`]${suffix}`] });
    return;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return void out.push({ indent, pieces: [`${prefix}{}${suffix}`] });
    out.push({ indent, pieces: [`${prefix}{`] });
    entries.forEach(([k, v], i) => jsonLines(v, indent + 2, `"${jsonInside(k)}": `, i < entries.length - 1 ? ',' : '', out));
    out.push({ indent, pieces: [`}${suffix}`] });
    return;
  }
  if (typeof value === 'string') {
    const pieces = stringPieces(value);
    pieces[0] = prefix + pieces[0];
    pieces[pieces.length - 1] += suffix;
    return void out.push({ indent, pieces });
  }
  out.push({ indent, pieces: [`${prefix}${value === undefined ? 'null' : JSON.stringify(value)}${suffix}`] });
}

/** An escape sequence, or one character: a fold never cuts through an escape. */
const UNIT = /\\u\{[0-9a-f]+\}|\\u[0-9a-f]{4}|\\./gsu;

function units(text: string): string[] {
  const out: string[] = [];
  let last = 0;
  for (const m of text.matchAll(UNIT)) {
    out.push(...Array.from(text.slice(last, m.index)), m[0]);
    last = m.index + m[0].length;
  }
  out.push(...Array.from(text.slice(last)));
  return out;
}

/** Cuts `text` into runs of at most `first` characters, then `rest`, after a space where one is in a run's second half. */
function fold(text: string, first: number, rest: number): string[] {
  const all = units(text);
  const runs: string[] = [];
  let start = 0;
  while (start < all.length) {
    const width = runs.length === 0 ? first : rest;
    let len = 0;
    let end = start;
    while (end < all.length && len + all[end]!.length <= width) len += all[end++]!.length;
    if (end === start) end = start + 1;
    if (end < all.length) {
      let upTo = len;
      for (let i = end - 1; i > start; i--) {
        upTo -= all[i]!.length;
        if (all[i] === ' ' && upTo + 1 >= width / 2) {
          end = i + 1;
          break;
        }
        if (upTo + 1 < width / 2) break;
      }
    }
    runs.push(all.slice(start, end).join(''));
    start = end;
  }
  return runs.length > 0 ? runs : [''];
}

/** How far folded text is indented past its line. */
const FOLD_INDENT = 4;

/**
 * A call's arguments as people read them: pretty JSON, each string's lines on lines of their own, lines longer than
 * `width` folded (indented further) rather than cut, hidden characters escaped. Nothing of the value is left out.
 */
export function argumentLines(args: unknown, width: number): string[] {
  const raw: RawLine[] = [];
  jsonLines(args, 0, '', '', raw);
  const out: string[] = [];
  for (const r of raw) {
    r.pieces.forEach((piece, i) => {
      const indent = r.indent + (i === 0 ? 0 : FOLD_INDENT);
      const runs = fold(piece, Math.max(20, width - indent), Math.max(20, width - indent - FOLD_INDENT));
      runs.forEach((run, j) => out.push(' '.repeat(indent + (j === 0 ? 0 : FOLD_INDENT)) + run));
    });
  }
  return out;
}

/** How an approval's agent is shown: `tenant/name` when known. */
export type ApprovalAgentLabel = (a: Approval) => string;

const byId: ApprovalAgentLabel = (a) => `${a.tenant_id}/${a.agent_id}`;

const STATUS_TONE: Record<string, Tone> = { pending: 'warning', approved: 'success', denied: 'error', timed_out: 'error', abandoned: 'muted' };

export interface ApprovalTextOptions {
  agent?: ApprovalAgentLabel;
  now?: number;
  /** Columns to fold the arguments at. */
  width?: number;
  /** Show at most this many lines of arguments (the rest counted); all when absent. */
  maxArgumentLines?: number;
  /** Leave the arguments out (already shown). */
  withoutArguments?: boolean;
}

const INDENT = '  ';

/** `rule 3 of policy coding-agents: deploys need a person` */
export function ruleText(a: Pick<Approval, 'rule' | 'reason'>): string {
  const rule = a.rule ? `rule ${a.rule.index} of policy ${a.rule.policy_id}` : 'a tool rule';
  return a.reason ? `${rule}: ${revealHidden(a.reason)}` : rule;
}

/** `in 4m48s` or `2m10s ago` */
function relative(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  return ms >= 0 ? `in ${duration(ms)}` : `${duration(-ms)} ago`;
}

/** What became of it: who decided and when, or how it ended without a decision. */
export function outcomeText(a: Approval): string {
  const by = a.decided_by ? ` by ${revealHidden(a.decided_by)}` : '';
  const at = a.decided_at ? ` at ${a.decided_at}` : '';
  const after = a.decided_at ? `, ${duration(Math.max(0, Date.parse(a.decided_at) - Date.parse(a.created_at)))} after it was held` : '';
  const comment = a.comment ? `: "${revealHidden(a.comment)}"` : '';
  switch (a.status) {
    case 'timed_out':
      return `timed out at ${a.decided_at ?? a.expires_at} (nobody decided in time): the call was refused${comment}`;
    case 'abandoned':
      return `abandoned${at}: the client left before a decision${comment}`;
    default:
      return `${a.status}${by}${at}${after}${comment}`;
  }
}

/** One approval as a block of lines: what waits (or waited), whose, why it was held, and the call's arguments. */
export function approvalLines(a: Approval, opts: ApprovalTextOptions = {}): Line[] {
  const now = opts.now ?? Date.now();
  const agent = opts.agent ?? byId;
  const out: Line[] = [
    { ...line(seg(a.id), seg('  '), seg(a.status, STATUS_TONE[a.status] ?? 'plain'), seg('  '), seg(revealHidden(a.tool))), bold: true },
    line(seg(`${INDENT}agent ${agent(a)}, trace ${revealHidden(a.trace_id)}, request ${a.request_id}`, 'muted')),
    line(seg(`${INDENT}held ${a.created_at} by ${ruleText(a)}`)),
  ];
  if (a.status === 'pending') {
    out.push(line(seg(`${INDENT}waiting ${duration(Math.max(0, now - Date.parse(a.created_at)))}, expires ${a.expires_at} (${relative(a.expires_at, now)})`, 'warning')));
  } else {
    out.push(line(seg(`${INDENT}${outcomeText(a)}`, STATUS_TONE[a.status] ?? 'plain')));
  }
  if (opts.withoutArguments) return out;
  const width = opts.width ?? 100;
  const args = argumentLines(a.arguments, width - 2 * INDENT.length);
  const shown = opts.maxArgumentLines !== undefined && args.length > opts.maxArgumentLines + 1 ? args.slice(0, opts.maxArgumentLines) : args;
  out.push(line(seg(`${INDENT}arguments:`, 'muted')));
  for (const l of shown) out.push(line(seg(`${INDENT}${INDENT}${l}`)));
  if (shown.length < args.length) out.push(line(seg(`${INDENT}${INDENT}... ${args.length - shown.length} more lines (--json prints them all)`, 'muted')));
  return out;
}
