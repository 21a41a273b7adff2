import type { TraceDetail, TraceRequest } from '../admin-client/types.js';
import { alignedLines, cell, type Cell } from './columns.js';
import { duration, plural, tokenPair, usd } from './format-usage.js';
import { line, seg, type Line, type Segment, type Tone } from './lines.js';

export const DEFAULT_BAR_WIDTH = 40;
const BAR_MIN = 16;
const BAR_MAX = 100;
export const BAR_FULL = '█';
/** The part of a streamed step spent before its first token. */
export const BAR_WAIT = '░';

const STATUS_TONE: Record<TraceRequest['status'], Tone> = { ok: 'success', blocked: 'warning', error: 'error', running: 'update' };

export interface TimelineOptions {
  /** Characters of the time axis; ignored when `columns` is given. */
  barWidth?: number;
  /** Fit the lines to a terminal this wide. */
  columns?: number;
  /** The agent as people name it (`tenant/name`); `tenant/agt_...` when unknown. */
  agentName?: string;
  /** Who decided each approval of the trace (approval id -> name), for calls held for a person. */
  deciders?: ReadonlyMap<string, string>;
}

interface Step {
  request: TraceRequest;
  offsetMs: number;
}

/** Every step placed on one axis that starts with the trace and ends with its last step. */
function placeSteps(trace: TraceDetail): { steps: Step[]; spanMs: number } {
  const origin = Date.parse(trace.started_at);
  const steps = trace.requests.map((request) => ({ request, offsetMs: Math.max(0, Date.parse(request.started_at) - origin || 0) }));
  const spanMs = Math.max(0, ...steps.map((s) => s.offsetMs + s.request.latency_ms));
  return { steps, spanMs: spanMs > 0 ? spanMs : 1 };
}

function statusText(r: TraceRequest): string {
  // A step in flight has answered nothing yet (http_status 0): its latency is the time so far.
  if (r.status === 'running') return 'running';
  return r.status === 'ok' ? 'ok' : [r.status, String(r.http_status), r.error_code].filter(Boolean).join(' ');
}

/** `|   ░░████      |`: where the step ran on the shared axis; at least one character so short steps still show. */
function barCell(step: Step, spanMs: number, width: number): Cell {
  const scale = (ms: number) => (ms / spanMs) * width;
  const from = Math.min(width - 1, Math.floor(scale(step.offsetMs)));
  const length = Math.min(width - from, Math.max(1, Math.round(scale(step.request.latency_ms))));
  const wait = step.request.ttft_ms === null ? 0 : Math.min(length - 1, Math.round(scale(step.request.ttft_ms)));
  const tone = STATUS_TONE[step.request.status];
  const segments: Segment[] = [
    seg('|', 'muted'),
    seg(' '.repeat(from)),
    seg(BAR_WAIT.repeat(wait), tone),
    seg(BAR_FULL.repeat(length - wait), tone),
    seg(' '.repeat(width - from - length)),
    seg('|', 'muted'),
  ];
  return { segments: segments.filter((s) => s.text !== '') };
}

function stepCells(step: Step): Cell[] {
  const r = step.request;
  return [
    cell(String(r.step), 'plain', 'right'),
    cell(r.model ?? '-'),
    cell(statusText(r), STATUS_TONE[r.status]),
    cell(tokenPair(r.prompt_tokens, r.completion_tokens), 'plain', 'right'),
    cell(usd(r.cost), 'plain', 'right'),
    cell(`+${duration(step.offsetMs)}`, 'muted', 'right'),
    cell(duration(r.latency_ms), 'plain', 'right'),
    cell(r.ttft_ms === null ? '-' : duration(r.ttft_ms), 'plain', 'right'),
  ];
}

const HEADERS = ['STEP', 'MODEL', 'STATUS', 'TOKENS', 'COST', 'START', 'LATENCY', 'TTFT'];

/** The axis gets what the other columns leave of the terminal, within bounds that keep it readable. */
function barWidthFor(rows: Cell[][], opts: TimelineOptions): number {
  if (opts.columns === undefined) return opts.barWidth ?? DEFAULT_BAR_WIDTH;
  const used = alignedLines(rows).reduce((n, l) => Math.max(n, l.text.length), 0);
  // the gap before the bar, its two borders, and the last column, where some terminals wrap
  const reserved = 2 + 2 + 1;
  return Math.max(BAR_MIN, Math.min(BAR_MAX, opts.columns - used - reserved));
}

function axisCell(spanMs: number, width: number): Cell {
  const end = duration(spanMs);
  return cell(' 0'.padEnd(width + 2 - end.length) + end, 'muted');
}

function totalsLine(trace: TraceDetail, spanMs: number): Line {
  const blocked = trace.requests.filter((r) => r.status === 'blocked').length;
  const wall = Date.parse(trace.ended_at) - Date.parse(trace.started_at);
  const parts = [
    plural(trace.request_count, 'request'),
    `${plural(trace.error_count, 'error')}${blocked > 0 ? ` (${blocked} blocked)` : ''}`,
    `${plural(trace.prompt_tokens + trace.completion_tokens, 'token')} (${trace.prompt_tokens} prompt, ${trace.completion_tokens} completion)`,
    usd(trace.cost),
    `wall time ${duration(Number.isFinite(wall) && wall >= 0 ? wall : spanMs)}`,
  ];
  return { ...line(seg(`Total: ${parts.join(', ')}`, trace.error_count > 0 ? 'warning' : 'plain')), bold: true };
}

/** `PII: email (steps 2, 4), phone (step 2)`, or nothing when no step matched. */
function piiLine(trace: TraceDetail): Line | null {
  const steps = new Map<string, number[]>();
  for (const r of trace.requests) for (const t of r.pii_types) steps.set(t, [...(steps.get(t) ?? []), r.step]);
  if (steps.size === 0) return null;
  const parts = [...steps].map(([type, s]) => `${type} (${s.length === 1 ? 'step' : 'steps'} ${s.join(', ')})`);
  return line(seg('PII: ', 'muted'), seg(parts.join(', '), 'warning'));
}

const DECISION_TONE: Record<string, Tone> = { allowed: 'success', approved: 'success', denied: 'error', rejected: 'error', timed_out: 'warning', abandoned: 'warning' };

/**
 * `Tool calls:` then one line per call a step's answer proposed (or an MCP step made): the step, the tool, how the tool
 * rules decided it, and the rule and its reason. Nothing when no step decided a call.
 */
function toolCallLines(trace: TraceDetail, deciders: ReadonlyMap<string, string> = new Map()): Line[] {
  const rows: Cell[][] = [];
  for (const r of trace.requests) {
    for (const c of r.tool_calls ?? []) {
      const rule = c.rule ? `policy ${c.rule.policy_id}, rule ${c.rule.index}` : '';
      const decider = c.approval_id ? deciders.get(c.approval_id) : undefined;
      // A call held for a person: which approval, how long it waited, who decided.
      const held = c.approval_id ? `; ${c.approval_id} waited ${duration(c.wait_ms)}${decider ? `, decided by ${decider}` : ''}` : '';
      const why = ([rule, c.reason].filter(Boolean).join(': ') + held).replace(/^; /, '');
      rows.push([cell(`  step ${r.step}`, 'muted'), cell(c.name), cell(c.decision, DECISION_TONE[c.decision] ?? 'plain'), cell(why, 'muted')]);
    }
  }
  if (rows.length === 0) return [];
  return [line(), line(seg('Tool calls:', 'muted')), ...alignedLines(rows)];
}

/** The trace as a table of steps with a bar each on the shared time axis, then the totals. Plain and ink print these lines. */
export function traceTimelineLines(trace: TraceDetail, opts: TimelineOptions = {}): Line[] {
  const { steps, spanMs } = placeSteps(trace);
  const head: Line[] = [
    { ...line(seg(`Trace ${trace.trace_id}`)), bold: true },
    line(seg(`agent ${opts.agentName ?? `${trace.tenant_id}/${trace.agent_id}`}, ${trace.started_at} to ${trace.ended_at}`, 'muted')),
    line(),
  ];
  const rows = [HEADERS.map((h, i) => cell(h, 'muted', i === 0 || i > 2 ? 'right' : 'left')), ...steps.map(stepCells)];
  const width = barWidthFor(rows, opts);
  const table = alignedLines([
    [...rows[0], cell('TIMELINE', 'muted')],
    ...steps.map((s, i) => [...rows[i + 1], barCell(s, spanMs, width)]),
    [...HEADERS.map(() => cell('')), axisCell(spanMs, width)],
  ]);
  const legend = steps.some((s) => s.request.ttft_ms !== null)
    ? [line(seg(`${BAR_FULL} request  ${BAR_WAIT} before the first token`, 'muted'))]
    : [];
  const pii = piiLine(trace);
  return [...head, ...table, ...legend, ...toolCallLines(trace, opts.deciders), line(), totalsLine(trace, spanMs), ...(pii ? [pii] : [])];
}
