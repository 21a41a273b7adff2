import { type ReactNode, useEffect, useRef, useState } from 'react';
import { ApiError, query } from '../api/client';
import type { Agent, Approval, Page, TraceDetail } from '../api/types';
import { Badge, Card, ErrorNote, Loading } from '../components/bits';
import { Dialog } from '../components/dialog';
import { Waterfall } from '../components/waterfall';
import { compact, ms, time, usd } from '../format';
import { Link } from '../router';
import { useSession } from '../session';
import { usePoll } from '../use-poll';

/** A trace is live while a step runs or for a minute after its last one ended (an agent running a tool between calls). */
export const LIVE_MS = 60_000;

/** A trace opened before its first step is recorded is asked for again after 250 ms, then 500 ms, 1 s, up to 4 s. */
const FIRST_TRY_MS = 250;
const MAX_WAIT_MS = 4000;

/**
 * A live trace is fetched every 250 ms (500 ms past 300 steps), so a new step shows within a second of the gateway
 * recording it; others every 5 s (a new step makes them live again).
 */
function pollEvery(t: TraceDetail | null | undefined, misses: number): number {
  if (t === null) return Math.min(MAX_WAIT_MS, FIRST_TRY_MS * 2 ** Math.max(0, misses - 1));
  if (!t || !isLive(t)) return 5000;
  return t.requests.length > 300 ? 500 : 250;
}

export function isLive(t: TraceDetail, now = Date.now()): boolean {
  return !t.stopped && (t.requests.some((r) => r.status === 'running') || now - Date.parse(t.ended_at) < LIVE_MS);
}

/** What a poll can change: new steps, a step finishing, the stop (a running step's bar grows: always drawn again). */
const sameTrace = (a: TraceDetail | null, b: TraceDetail | null): boolean =>
  a === null || b === null ? a === b : sameDetail(a, b);
const sameDetail = (a: TraceDetail, b: TraceDetail) =>
  !a.requests.some((r) => r.status === 'running') &&
  a.request_count === b.request_count &&
  a.requests.length === b.requests.length &&
  a.ended_at === b.ended_at &&
  a.cost === b.cost &&
  a.error_count === b.error_count &&
  (a.stopped?.at ?? null) === (b.stopped?.at ?? null) &&
  a.requests.every((r, i) => r.status === b.requests[i]!.status && r.latency_ms === b.requests[i]!.latency_ms);

export function TracePage(props: { id: string; tenant?: string }) {
  const { api, canWrite } = useSession();
  const [stopping, setStopping] = useState(false);
  const marked = useRef<string | null>(null);
  /** Answers of trace_not_found in a row: the trace was opened before the gateway recorded its first step. */
  const misses = useRef(0);
  const path = `/traces/${encodeURIComponent(props.id)}${query({ tenant_id: props.tenant })}`;
  const trace = usePoll<TraceDetail | null>(
    async () => {
      let t: TraceDetail;
      try {
        t = await api.get<TraceDetail>(path);
      } catch (e) {
        if (e instanceof ApiError && e.code === 'trace_not_found') {
          misses.current++;
          return null;
        }
        throw e;
      }
      misses.current = 0;
      if (marked.current !== path) {
        marked.current = path;
        performance.mark('agentgw:trace-data', { detail: { steps: t.requests.length } });
      }
      return t;
    },
    [api, path],
    (t) => pollEvery(t, misses.current),
    sameTrace,
  );
  const t = trace.data;
  const agentId = t?.agent_id;
  const agent = usePoll(() => (agentId ? api.get<Agent>(`/agents/${encodeURIComponent(agentId)}`).catch(() => null) : Promise.resolve(null)), [api, agentId]);
  const approvals = useTraceApprovals(t ?? null);
  // A live trace whose answers no longer change is drawn again when its minute is up: the badge and Stop button go.
  const [, redraw] = useState(0);
  useEffect(() => {
    if (!t || !isLive(t) || t.requests.some((r) => r.status === 'running')) return;
    const id = setTimeout(() => redraw((n) => n + 1), Math.max(0, Date.parse(t.ended_at) + LIVE_MS - Date.now()) + 50);
    return () => clearTimeout(id);
  }, [t]);
  if (!props.id) return <ErrorNote error={new Error('No trace id: open a trace from the traces list.')} />;

  return (
    <div className="page">
      <div className="page-head">
        <p className="crumbs">
          <Link to="/traces">Traces</Link> /
        </p>
        <h1 className="mono trace-title">
          <span title={props.id}>{props.id}</span>
          <CopyButton text={props.id} />
        </h1>
      </div>
      <ErrorNote error={trace.error} />
      {t === null ? (
        <p className="muted waiting" data-testid="trace-waiting" role="status">
          Waiting for the first step of this trace: it shows here as soon as the gateway records it.
          {misses.current > 8 ? ' Nothing yet: check the trace id (and tenant) if no request of it was sent.' : ''}
        </p>
      ) : !t ? (
        <Loading />
      ) : (
        <>
          <Card
            testId="trace-summary"
            actions={
              canWrite && isLive(t) ? (
                <button type="button" className="danger" onClick={() => setStopping(true)} data-testid="stop-trace">
                  Stop trace
                </button>
              ) : undefined
            }
            title={
              <>
                Summary {t.stopped ? <Badge tone="bad">stopped</Badge> : isLive(t) ? <Badge tone="info">live</Badge> : null}
              </>
            }
          >
            {t.stopped && (
              <p className="stopped-banner" data-testid="stopped-banner">
                Stopped {time(t.stopped.at)}
                {t.stopped.reason ? ` — ${t.stopped.reason}` : ''}. Every later request of this trace is refused (403 trace_stopped).
              </p>
            )}
            <dl className="facts">
              <Fact label="Tenant" value={t.tenant_id} />
              <Fact label="Agent" value={<Link to={`/agents?agent=${encodeURIComponent(t.agent_id)}`}>{agent.data?.name ?? t.agent_id}</Link>} />
              <Fact label="Started" value={time(t.started_at)} />
              <Fact label="Duration" value={ms(Date.parse(t.ended_at) - Date.parse(t.started_at))} />
              <Fact label="Steps" value={String(t.request_count)} />
              <Fact label="Errors" value={String(t.error_count)} />
              <Fact label="Tokens in / out" value={`${compact(t.prompt_tokens)} / ${compact(t.completion_tokens)}`} />
              <Fact label="Cost" value={<span data-testid="trace-cost">{usd(t.cost)}</span>} />
            </dl>
          </Card>
          <Card title={`Waterfall · ${t.requests.length} step${t.requests.length === 1 ? '' : 's'}`} testId="waterfall-card">
            <Waterfall trace={t} approvals={approvals} />
          </Card>
        </>
      )}
      {stopping && t && (
        <StopDialog
          traceId={t.trace_id}
          tenantId={t.tenant_id}
          onClose={() => setStopping(false)}
          onStopped={() => {
            setStopping(false);
            trace.refresh();
          }}
        />
      )}
    </div>
  );
}

/** Approvals named by the trace's tool calls: the step learns who decided from them. */
const approvalIdsOf = (t: TraceDetail | null) => [...new Set((t?.requests ?? []).flatMap((r) => (r.tool_calls ?? []).map((c) => c.approval_id).filter((id): id is string => !!id)))];

/**
 * The approvals of a trace (GET /approvals?trace_id=), by id, when one of its tool calls was held for a person; asked
 * again when a step names one not known yet, and every 2 s while one is pending.
 */
function useTraceApprovals(t: TraceDetail | null): ReadonlyMap<string, Approval> {
  const { api } = useSession();
  const ids = approvalIdsOf(t).sort().join(' ');
  const found = usePoll<Map<string, Approval>>(
    async () => {
      if (!t || !ids) return new Map();
      const list = await api.all<Approval>(`/approvals${query({ trace_id: t.trace_id, tenant_id: t.tenant_id })}`, 2000);
      return new Map(list.map((a) => [a.id, a]));
    },
    [api, t?.trace_id, t?.tenant_id, ids],
    (m) => (m && [...m.values()].some((a) => a.status === 'pending') ? 2000 : null),
    (a, b) => a.size === b.size && [...a].every(([id, x]) => b.get(id)?.status === x.status),
  );
  return found.data ?? NO_APPROVALS;
}

const NO_APPROVALS: ReadonlyMap<string, Approval> = new Map();

/** Copies a long id whole (the page may show it cut). */
function CopyButton(props: { text: string }) {
  const [done, setDone] = useState(false);
  const copy = () =>
    void navigator.clipboard?.writeText(props.text).then(
      () => {
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      },
      () => undefined,
    );
  return (
    <button type="button" className="copy" onClick={copy} title="Copy the trace id" aria-label="Copy the trace id">
      {done ? 'Copied' : 'Copy'}
    </button>
  );
}

const Fact = (p: { label: string; value: ReactNode }) => (
  <div className="fact">
    <dt>{p.label}</dt>
    <dd>{p.value}</dd>
  </div>
);

function StopDialog(props: { traceId: string; tenantId: string; onClose(): void; onStopped(): void }) {
  const { api } = useSession();
  const [reason, setReason] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLTextAreaElement>(null);
  useEffect(() => input.current?.focus(), []);
  const stop = async () => {
    setBusy(true);
    try {
      await api.send('POST', `/traces/${encodeURIComponent(props.traceId)}/stop${query({ tenant_id: props.tenantId })}`, reason.trim() ? { reason: reason.trim() } : {});
      props.onStopped();
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <Dialog title="Stop this trace?" onClose={props.onClose} testId="stop-dialog">
      <p>
        Every later request of trace <code>{props.traceId}</code>, on any endpoint, will be refused with 403 <code>trace_stopped</code>. This is
        final: the agent has to start a new trace.
      </p>
      <label htmlFor="stop-reason">Reason (optional, shown on the trace)</label>
      <textarea id="stop-reason" ref={input} rows={2} maxLength={1000} value={reason} onChange={(e) => setReason(e.target.value)} />
      <ErrorNote error={error} />
      <div className="dialog-actions">
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
        <button type="button" className="danger" onClick={stop} disabled={busy} data-testid="confirm-stop">
          {busy ? 'Stopping…' : 'Stop trace'}
        </button>
      </div>
    </Dialog>
  );
}
