import type { ApplyEvent, ApplyResult } from '../reconcile/apply/events.js';
import type { Change, ChangeSet, Op, Summary } from '../reconcile/diff/change.js';
import { describeError } from '../describe-error.js';
import { KINDS } from '../kinds/index.js';
import { formatValue } from './format-value.js';

export type Tone = 'create' | 'update' | 'delete' | 'success' | 'warning' | 'error' | 'muted' | 'plain';

export interface Segment {
  text: string;
  tone: Tone;
}

/** One line of output: plain text for pipes, coloured segments for ink. Both renderers print the same text. */
export interface Line {
  text: string;
  segments: Segment[];
  bold?: boolean;
}

export function line(...segments: Segment[]): Line {
  return { text: segments.map((s) => s.text).join(''), segments };
}

export const seg = (text: string, tone: Tone = 'plain'): Segment => ({ text, tone });

const SYMBOL: Record<Op, string> = { create: '+', update: '~', delete: '-' };
const PAST: Record<Op, string> = { create: 'created', update: 'updated', delete: 'deleted' };
const TONE: Record<Op, Tone> = { create: 'create', update: 'update', delete: 'delete' };
const INDENT = '    ';

export function changeTitle(c: Change): string {
  return `${c.op} ${c.kind} ${c.id}`;
}

function changeLines(c: Change): Line[] {
  const head = line(seg(`${SYMBOL[c.op]} ${c.op}`, TONE[c.op]), seg(` ${c.kind} ${c.id}`));
  const fields = c.changes.map((f) => {
    if (c.op === 'create') return line(seg(`${INDENT}${f.field}: `, 'muted'), seg(formatValue(f.field, f.new), 'create'));
    return line(
      seg(`${INDENT}${f.field}: `, 'muted'),
      seg(formatValue(f.field, f.old), 'delete'),
      seg(' -> ', 'muted'),
      seg(formatValue(f.field, f.new), 'create'),
    );
  });
  // a new agent gets a key from the server: the plan says so without ever holding it
  if (c.op === 'create') {
    for (const secret of KINDS[c.kind].secrets) fields.push(line(seg(`${INDENT}${secret}: `, 'muted'), seg('(sensitive, shown once after apply)', 'muted')));
  }
  return [head, ...fields];
}

export function summaryLine(s: Summary): Line {
  return { ...line(seg(`Plan: ${s.add} to add, ${s.change} to change, ${s.destroy} to destroy.`)), bold: true };
}

/** `+ create`, `~ update` with field-level old -> new, `- delete`, then the summary line. */
export function planLines(cs: ChangeSet): Line[] {
  if (cs.changes.length === 0) {
    return [line(seg('No changes: the gateway matches the desired state.', 'muted')), summaryLine(cs.summary)];
  }
  return [...cs.changes.flatMap(changeLines), line(), summaryLine(cs.summary)];
}

/** The line for one apply event, or null for events that print nothing. */
export function applyEventLine(e: ApplyEvent): Line | null {
  switch (e.type) {
    case 'done':
      return line(seg(`${SYMBOL[e.change.op]} ${PAST[e.change.op]}`, TONE[e.change.op]), seg(` ${e.change.kind} ${e.change.id}`));
    case 'failed':
      return line(seg(`! failed to ${changeTitle(e.change)}`, 'error'), seg(`: ${describeError(e.error)}`));
    case 'skipped':
      return line(seg(`  not done: ${changeTitle(e.change)}`, 'muted'));
    default:
      return null;
  }
}

export function applySummaryLine(r: ApplyResult): Line {
  if (!r.failed) {
    const n = (op: Op) => r.done.filter((c) => c.op === op).length;
    return { ...line(seg(`Apply complete: ${n('create')} added, ${n('update')} changed, ${n('delete')} destroyed.`)), bold: true };
  }
  return {
    ...line(
      seg(`Apply stopped: ${r.done.length} done, 1 failed, ${r.skipped.length} not done.`, 'error'),
      seg(' Fix the cause and run apply again to finish the rest.'),
    ),
    bold: true,
  };
}

export function keyLines(keys: Record<string, string>): Line[] {
  const names = Object.keys(keys);
  if (names.length === 0) return [];
  return [
    line(),
    line(seg('New agent keys (shown once; store them now):', 'update')),
    ...names.map((n) => line(seg(`  ${n}: `, 'muted'), seg(keys[n]))),
  ];
}

export const blankLine = (): Line => line();
export const textLine = (text: string, tone: Tone = 'plain'): Line => line(seg(text, tone));
