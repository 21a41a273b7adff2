import { type CSSProperties, memo, useCallback, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { Approval, Step, TraceDetail } from '../api/types';
import { revealHidden } from '../arguments';
import { compact, ms, usd } from '../format';
import { Badge, StatusBadge } from './bits';
import { useWindowRows } from './use-window-rows';

const DIALECT: Record<string, string> = {
  'chat.completions': 'Chat Completions',
  messages: 'Anthropic Messages',
  responses: 'Responses',
  gemini: 'Gemini',
  embeddings: 'Embeddings',
  mcp: 'MCP tool',
};

/** Longer traces draw only the rows in view (and a few around), so a trace of any length draws as fast as a short one. */
const WINDOWED_FROM = 200;

/**
 * The time axis: 0, round values (1, 2 or 5 times a power of ten, at least 1 ms) and the span's end, each label once:
 * a 3 ms trace reads 0 ms, 1 ms, 2 ms, 3 ms instead of repeating rounded quarters.
 */
export function axisTicks(span: number): { at: number; label: string }[] {
  const raw = span / 4;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(1, ([1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag));
  const ticks = [{ at: 0, label: ms(0) }];
  for (let v = step; v < span * 0.75; v += step) ticks.push({ at: v / span, label: ms(v) });
  ticks.push({ at: 1, label: ms(span) });
  return ticks.filter((t, i) => ticks.findIndex((o) => o.label === t.label) === i);
}

interface Timing {
  /** Milliseconds from the trace's start to the step's. */
  start: number;
  latency: number;
}

/**
 * A trace as a waterfall: one row per step, its bar placed on the trace's time line (time to first token shaded); a
 * click opens a step's details. The span is a CSS variable of the whole list, so a growing trace re-renders only its
 * new and changed rows.
 */
export function Waterfall(props: { trace: TraceDetail; approvals?: ReadonlyMap<string, Approval> }) {
  const approvals = props.approvals ?? NO_APPROVALS;
  const steps = props.trace.requests;
  const [open, setOpen] = useState<string | null>(null);
  const list = useRef<HTMLDivElement>(null);
  const windowed = steps.length >= WINDOWED_FROM;
  // Rows have one height (measured: it differs between wide and narrow screens); the open row's details add theirs.
  const [rowHeight, setRowHeight] = useState(37);
  const [detailsHeight, setDetailsHeight] = useState(0);
  const openIndex = useMemo(() => (open === null ? -1 : steps.findIndex((s) => s.request_id === open)), [steps, open]);
  const rows = useWindowRows(list, windowed, steps.length, rowHeight, openIndex >= 0 ? { index: openIndex, height: detailsHeight } : null);
  const t0 = Date.parse(props.trace.started_at);
  const now = Date.now();
  const span = useMemo(() => {
    let end = Date.parse(props.trace.ended_at) - t0;
    for (const s of steps) {
      const start = Date.parse(s.started_at) - t0;
      end = Math.max(end, s.status === 'running' ? now - t0 : start + s.latency_ms);
    }
    return Math.max(1, end);
  }, [steps, t0, props.trace.ended_at, now]);

  const toggle = useCallback((id: string) => setOpen((prev) => (prev === id ? null : id)), []);

  useLayoutEffect(() => {
    const row = list.current?.querySelector<HTMLElement>('.wf-step');
    if (row && row.offsetHeight > 0 && row.offsetHeight !== rowHeight) setRowHeight(row.offsetHeight);
    const details = list.current?.querySelector<HTMLElement>('.wf-details');
    const h = details?.offsetHeight ?? 0;
    if (h !== detailsHeight && (details || open === null)) setDetailsHeight(h);
  });

  useLayoutEffect(() => {
    // After this commit is painted: the browser test reads it to time a large trace's render.
    const n = steps.length;
    const id = requestAnimationFrame(() => performance.mark('agentgw:waterfall-painted', { detail: { steps: n } }));
    return () => cancelAnimationFrame(id);
  }, [steps.length]);

  const ticks = useMemo(() => axisTicks(span), [span]);
  return (
    <div className="waterfall" data-testid="waterfall" data-steps={steps.length} style={{ '--span': span } as CSSProperties}>
      <div className="wf-row wf-head">
        <span className="wf-n">#</span>
        <span className="wf-what">Step</span>
        <span className="wf-status">Status</span>
        <span className="wf-num wf-tokens">Tokens in / out</span>
        <span className="wf-num wf-cost">Cost</span>
        <span className="wf-num wf-lat">Latency</span>
        <span className="wf-num wf-ttft">TTFT</span>
        <span className="wf-time wf-axis">
          {ticks.map((t) => (
            <span key={t.label} className="wf-tick" style={{ '--at': t.at } as CSSProperties}>
              {t.label}
            </span>
          ))}
        </span>
      </div>
      {steps.length === 0 && <p className="muted empty">No steps recorded yet.</p>}
      <div ref={list} className={windowed ? 'wf-list wf-windowed' : 'wf-list'}>
        {rows.before > 0 && <div style={{ height: rows.before }} aria-hidden />}
        {steps.slice(rows.start, rows.end).map((s) => (
          <StepRow
            key={s.request_id}
            step={s}
            timing={{ start: Date.parse(s.started_at) - t0, latency: s.latency_ms }}
            expanded={open === s.request_id}
            onToggle={toggle}
            approvals={approvals}
          />
        ))}
        {rows.after > 0 && <div style={{ height: rows.after }} aria-hidden />}
      </div>
    </div>
  );
}

const NO_APPROVALS: ReadonlyMap<string, Approval> = new Map();

const same = (a: RowProps, b: RowProps) =>
  a.expanded === b.expanded &&
  a.approvals === b.approvals &&
  a.timing.start === b.timing.start &&
  a.timing.latency === b.timing.latency &&
  a.step.status === b.step.status &&
  a.step.cost === b.step.cost &&
  a.step.completion_tokens === b.step.completion_tokens &&
  a.step.prompt_tokens === b.step.prompt_tokens &&
  a.step.ttft_ms === b.step.ttft_ms &&
  a.step.error_code === b.step.error_code &&
  a.step.pii_types.length === b.step.pii_types.length &&
  (a.step.tool_calls?.length ?? 0) === (b.step.tool_calls?.length ?? 0);

interface RowProps {
  step: Step;
  timing: Timing;
  expanded: boolean;
  onToggle(id: string): void;
  /** The trace's approvals by id: who decided a held call. */
  approvals: ReadonlyMap<string, Approval>;
}

const StepRow = memo(function StepRow({ step: s, timing, expanded, onToggle, approvals }: RowProps) {
  const running = s.status === 'running';
  const what = s.endpoint === 'mcp' ? (s.tool ?? 'tool') : (s.model ?? '—');
  const ttftShare = s.ttft_ms !== null && s.latency_ms > 0 ? Math.min(1, s.ttft_ms / s.latency_ms) : 0;
  const bar = { '--start': timing.start, '--len': running ? 0 : timing.latency, '--ttft': ttftShare } as CSSProperties;
  return (
    <>
      <div
        className={`wf-row wf-step wf-${s.status}${expanded ? ' wf-open' : ''}`}
       
        data-testid="step-row"
        data-status={s.status}
        tabIndex={0}
        aria-expanded={expanded}
        onClick={() => onToggle(s.request_id)}
        onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), onToggle(s.request_id))}
      >
        <span className="wf-n">{s.step}</span>
        <span className="wf-what">
          <span className="wf-dialect" title={DIALECT[s.endpoint] ?? s.endpoint}>
            {s.endpoint}
          </span>
          <span className="wf-model mono" title={s.provider ? `${s.provider} · ${what}` : what}>
            {what}
          </span>
          {s.pii_types.map((p) => (
            <Badge key={p} tone="warn" title="PII found in this step">
              PII {p}
            </Badge>
          ))}
          <ToolCallsBadge calls={s.tool_calls} approvals={approvals} />
        </span>
        <span className="wf-status">
          <StatusBadge status={s.status} />
          {s.error_code && <span className="wf-code mono">{s.error_code}</span>}
        </span>
        <span className="wf-num wf-tokens">
          {compact(s.prompt_tokens)} / {compact(s.completion_tokens)}
        </span>
        <span className="wf-num wf-cost">{usd(s.cost)}</span>
        <span className="wf-num wf-lat">{running ? '…' : ms(s.latency_ms)}</span>
        <span className="wf-num wf-ttft">{ms(s.ttft_ms)}</span>
        <span className="wf-time">
          <span className={running ? 'wf-bar wf-bar-running' : 'wf-bar'} style={bar}>
            <span className="wf-bar-ttft" />
          </span>
        </span>
      </div>
      {expanded && (
        <dl className="wf-details" data-testid="step-details">
          <Detail k="Request" v={s.request_id} id />
          <Detail k="Dialect" v={`${DIALECT[s.endpoint] ?? s.endpoint} (${s.endpoint})${s.stream ? ', streamed' : ''}`} />
          <Detail k="Provider" v={s.provider ?? '—'} />
          <Detail k={s.endpoint === 'mcp' ? 'Tool' : 'Model'} v={what} />
          <Detail k="HTTP status" v={String(s.http_status)} />
          <Detail k="Error / blocked reason" v={s.error_code ?? '—'} />
          <Detail k="Tokens" v={`${s.prompt_tokens} in (${s.cached_tokens} cached) · ${s.completion_tokens} out (${s.reasoning_tokens} reasoning)`} />
          <Detail k="Cost" v={usd(s.cost)} />
          <Detail k="Latency · TTFT" v={`${ms(s.latency_ms)} · ${ms(s.ttft_ms)}`} />
          <Detail k="PII types" v={s.pii_types.length ? s.pii_types.join(', ') : 'none'} />
          {s.tool_calls && s.tool_calls.length > 0 && <ToolCalls calls={s.tool_calls} approvals={approvals} />}
          {s.response_id && <Detail k="Response" v={s.response_id} id />}
          <Detail k="Started" v={s.started_at} />
        </dl>
      )}
    </>
  );
}, same);

/** A fact of a step. An id is one line, cut with an ellipsis when narrow (whole in its title, and copied whole). */
const Detail = (p: { k: string; v: string; id?: boolean }) => (
  <div>
    <dt>{p.k}</dt>
    <dd className={p.id ? 'mono one-line' : 'mono'} title={p.id ? p.v : undefined}>
      {p.v}
    </dd>
  </div>
);

type ToolCall = NonNullable<Step['tool_calls']>[number];

const REFUSED = new Set(['denied', 'rejected', 'timed_out', 'abandoned']);

/** Why a call was decided as it was: the rule (policy and number) and its reason. */
function ruleText(c: ToolCall): string {
  const rule = c.rule ? `policy ${c.rule.policy_id}, rule ${c.rule.index}` : 'no rule matched';
  return c.reason ? `${c.reason} (${rule})` : rule;
}

/** Who decided a held call and how long it waited: `approved by ops after 3.2 s: "checked"`. */
function approvalText(c: ToolCall, approvals: ReadonlyMap<string, Approval>): string | null {
  if (!c.approval_id) return null;
  const a = approvals.get(c.approval_id);
  const who = a?.decided_by ? ` by ${revealHidden(a.decided_by)}` : '';
  const comment = a?.comment ? `: “${revealHidden(a.comment)}”` : '';
  return `${c.decision.replace('_', ' ')}${who} after ${ms(c.wait_ms)}${comment}`;
}

/** In the row: how many calls the step's answer proposed, how many waited for a person, and how many were refused. */
function ToolCallsBadge(props: { calls: Step['tool_calls']; approvals: ReadonlyMap<string, Approval> }) {
  const calls = props.calls ?? [];
  if (calls.length === 0) return null;
  const refused = calls.filter((c) => REFUSED.has(c.decision));
  const held = calls.filter((c) => c.approval_id);
  const title = calls
    .map((c) => `${c.name}: ${approvalText(c, props.approvals) ?? c.decision}${REFUSED.has(c.decision) ? ` — ${ruleText(c)}` : ''}`)
    .join('\n');
  const noun = `tool ${calls.length === 1 ? 'call' : 'calls'}`;
  const text = refused.length > 0 ? `${refused.length} of ${calls.length} ${noun} denied` : `${calls.length} ${noun}`;
  return (
    <Badge tone={refused.length > 0 ? 'bad' : 'info'} title={title}>
      {text}
      {held.length > 0 ? ` · ${held.length} held for a person` : ''}
    </Badge>
  );
}

/** In the details: every proposed call, denied ones marked with the rule's reason, held ones with who decided and the wait. */
function ToolCalls(props: { calls: ToolCall[]; approvals: ReadonlyMap<string, Approval> }) {
  return (
    <div className="wf-tool-calls" data-testid="tool-calls">
      <dt>Tool calls</dt>
      <dd>
        <ul>
          {props.calls.map((c) => {
            const held = approvalText(c, props.approvals);
            return (
              <li key={c.id} data-decision={c.decision}>
                <span className="mono">{c.name}</span>{' '}
                <Badge tone={REFUSED.has(c.decision) ? 'bad' : 'ok'}>{c.decision.replace('_', ' ')}</Badge>
                {(REFUSED.has(c.decision) || c.rule) && <span className="muted"> {ruleText(c)}</span>}
                {held && (
                  <span className="wf-approval" data-testid="tool-call-approval">
                    {' '}
                    · {held} <span className="muted mono">({c.approval_id})</span>
                  </span>
                )}
              </li>
            );
          })}
        </ul>
      </dd>
    </div>
  );
}
