import { useEffect, useMemo, useState } from 'react';
import { ApiError, query } from '../api/client';
import type { Approval, Page } from '../api/types';
import { argumentsText, revealHidden } from '../arguments';
import { Badge, Card, ErrorNote, Loading } from '../components/bits';
import { useDirectory } from '../directory';
import { ms, time } from '../format';
import { Link } from '../router';
import { useSession } from '../session';
import { usePoll } from '../use-poll';
import { traceHref } from './traces';

/** The queue is asked again every second, so a held call shows within about a second of the gateway holding it. */
const PENDING_EVERY_MS = 1000;
const DECIDED_EVERY_MS = 2000;
/** Decided approvals listed below the queue: the newest of the latest page. */
const DECIDED_SHOWN = 50;

export const DECISION_TONE: Record<Approval['status'], 'ok' | 'warn' | 'bad' | 'muted'> = {
  pending: 'warn',
  approved: 'ok',
  denied: 'bad',
  timed_out: 'bad',
  abandoned: 'muted',
};

export const statusLabel = (s: Approval['status']) => s.replace('_', ' ');

/** `rule 3 of policy coding-agents — deploys need a person` */
export function ruleText(a: Pick<Approval, 'rule' | 'reason'>): string {
  const rule = a.rule ? `rule ${a.rule.index} of policy ${a.rule.policy_id}` : 'a tool rule';
  return a.reason ? `${rule} — ${revealHidden(a.reason)}` : rule;
}

/** What a poll can change: which approvals there are and their status. */
const samePage = (a: Page<Approval>, b: Page<Approval>) =>
  a.data.length === b.data.length && a.data.every((x, i) => x.id === b.data[i]!.id && x.status === b.data[i]!.status) && a.next_cursor === b.next_cursor;

/** The time now, again every `every` ms: clocks that count while the page shows. */
function useNow(every: number): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), every);
    return () => clearInterval(id);
  }, [every]);
  return now;
}

/** Admin keys and a tenant_admin of the approval's tenant may decide (a tenant key sees its own tenant only). */
export const mayDecide = (role: string) => role === 'admin' || role === 'tenant_admin';

/** The pending queue, newest first, live; decided approvals below it with who decided and when. */
export function Approvals() {
  const { api, me } = useSession();
  const [tenant, setTenant] = useState(me.tenant_id ?? '');
  const dir = useDirectory(tenant || undefined);
  const now = useNow(1000);
  const pending = usePoll(
    () => api.get<Page<Approval>>(`/approvals${query({ status: 'pending', tenant_id: tenant, limit: 500 })}`),
    [api, tenant],
    () => PENDING_EVERY_MS,
    samePage,
  );
  const recent = usePoll(
    () => api.get<Page<Approval>>(`/approvals${query({ tenant_id: tenant, limit: 200 })}`),
    [api, tenant],
    () => DECIDED_EVERY_MS,
    samePage,
  );
  const waiting = useMemo(() => [...(pending.data?.data ?? [])].sort((a, b) => b.created_at.localeCompare(a.created_at)), [pending.data]);
  const decided = useMemo(
    () =>
      (recent.data?.data ?? [])
        .filter((a) => a.status !== 'pending')
        .sort((a, b) => (b.decided_at ?? b.created_at).localeCompare(a.decided_at ?? a.created_at))
        .slice(0, DECIDED_SHOWN),
    [recent.data],
  );
  /** A decision someone else made first, said above the queue (the call's card is gone by then). */
  const [notice, setNotice] = useState<unknown>(null);
  const refresh = (why?: unknown) => {
    setNotice(why ?? null);
    pending.refresh();
    recent.refresh();
  };

  return (
    <div className="page">
      <div className="page-head">
        <h1>Approvals</h1>
        <p className="muted">
          <span className="live-dot" aria-hidden /> Live: tool calls a rule holds for a person, newest first
        </p>
      </div>
      {!me.tenant_id && (
        <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter approvals">
          <label>
            Tenant
            <select value={tenant} onChange={(e) => setTenant(e.target.value)}>
              <option value="">All tenants</option>
              {dir.tenants.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
        </form>
      )}
      <Card title={<>Waiting for a decision {pending.data && <Badge tone={waiting.length ? 'warn' : 'muted'}>{waiting.length}</Badge>}</>} testId="pending-approvals">
        <ErrorNote error={pending.error} />
        <ErrorNote error={notice} />
        {!pending.data ? (
          <Loading />
        ) : waiting.length === 0 ? (
          <p className="muted empty" data-testid="queue-empty">
            No call is waiting. A tool rule with <code>action: approve</code> holds a call here until someone approves or denies it.
          </p>
        ) : (
          <div className="approval-list">
            {waiting.map((a) => (
              <PendingApproval key={a.id} approval={a} agentName={dir.agentName(a.agent_id)} now={now} canDecide={mayDecide(me.role)} onDecided={refresh} />
            ))}
          </div>
        )}
        {pending.data?.next_cursor && <p className="muted small">Showing the newest 500: pick a tenant to see the rest.</p>}
      </Card>
      <Card title="Decided" testId="decided-approvals">
        <ErrorNote error={recent.error} />
        {!recent.data ? (
          <Loading />
        ) : decided.length === 0 ? (
          <p className="muted empty">No decisions yet.</p>
        ) : (
          <div className="table-scroll">
            <table className="table approvals-table" data-testid="approvals-table">
              <thead>
                <tr>
                  <th>Tool</th>
                  <th>Decision</th>
                  <th>Decided by</th>
                  <th className="wide-only">Agent</th>
                  <th className="wide-only">Decided</th>
                  <th className="num">Waited</th>
                  <th className="wide-only">Trace</th>
                </tr>
              </thead>
              <tbody>
                {decided.map((a) => (
                  <tr key={a.id} data-testid="decided-row" data-approval={a.id} data-status={a.status}>
                    <td className="approval-tool-cell">
                      <span className="mono approval-tool-name" title={revealHidden(a.tool)}>
                        {revealHidden(a.tool)}
                      </span>
                      {a.comment && <span className="muted small approval-comment">“{revealHidden(a.comment)}”</span>}
                      {/* On a narrow screen the columns without a number are stacked here. */}
                      <span className="narrow-only muted small">
                        {dir.agentName(a.agent_id)} · {time(a.decided_at ?? a.expires_at)} · <Link to={traceHref(a)}>trace</Link>
                      </span>
                    </td>
                    <td>
                      <Badge tone={DECISION_TONE[a.status]}>{statusLabel(a.status)}</Badge>
                    </td>
                    <td className="decided-by">{a.decided_by ? revealHidden(a.decided_by) : <span className="muted">—</span>}</td>
                    <td className="wide-only">{dir.agentName(a.agent_id)}</td>
                    <td className="wide-only">{time(a.decided_at ?? a.expires_at)}</td>
                    <td className="num" data-testid="waited">
                      {ms(Date.parse(a.decided_at ?? a.expires_at) - Date.parse(a.created_at))}
                    </td>
                    <td className="wide-only trace-cell">
                      <Link to={traceHref(a)} className="mono trace-id" title={a.trace_id}>
                        {a.trace_id}
                      </Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </div>
  );
}

function PendingApproval(props: { approval: Approval; agentName: string; now: number; canDecide: boolean; onDecided(why?: unknown): void }) {
  const a = props.approval;
  const waited = Math.max(0, props.now - Date.parse(a.created_at));
  const left = Date.parse(a.expires_at) - props.now;
  return (
    <article className="approval" data-testid="pending-approval" data-approval={a.id}>
      <header className="approval-head">
        <span className="mono approval-tool" title={revealHidden(a.tool)}>
          {revealHidden(a.tool)}
        </span>
        <span className="approval-clock">
          waiting <strong data-testid="waiting">{ms(waited)}</strong>
          {' · '}
          {left > 0 ? (
            <>
              expires in <strong data-testid="expires">{ms(left)}</strong>
            </>
          ) : (
            <strong className="bad">timing out</strong>
          )}
        </span>
      </header>
      <dl className="approval-facts">
        <div>
          <dt>Agent</dt>
          <dd>
            <Link to={`/agents?agent=${encodeURIComponent(a.agent_id)}`}>{props.agentName}</Link> <span className="muted">({a.tenant_id})</span>
          </dd>
        </div>
        <div>
          <dt>Trace</dt>
          <dd className="one-line">
            <Link to={traceHref(a)} className="mono" title={a.trace_id}>
              {a.trace_id}
            </Link>
          </dd>
        </div>
        <div>
          <dt>Held by</dt>
          <dd data-testid="approval-rule">{ruleText(a)}</dd>
        </div>
        <div>
          <dt>Held at</dt>
          <dd>{time(a.created_at)}</dd>
        </div>
      </dl>
      <pre className="approval-args" data-testid="approval-arguments" aria-label={`Arguments of ${a.tool}`}>
        {argumentsText(a.arguments)}
      </pre>
      {props.canDecide && <DecideForm approval={a} onDecided={props.onDecided} />}
    </article>
  );
}

function DecideForm(props: { approval: Approval; onDecided(why?: unknown): void }) {
  const { api } = useSession();
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState<'approve' | 'deny' | null>(null);
  const [error, setError] = useState<unknown>(null);
  const id = props.approval.id;
  const decide = async (verb: 'approve' | 'deny') => {
    setBusy(verb);
    setError(null);
    try {
      await api.send('POST', `/approvals/${encodeURIComponent(id)}/${verb}`, comment.trim() ? { comment: comment.trim() } : {});
      props.onDecided();
    } catch (e) {
      if (e instanceof ApiError && e.code === 'approval_decided') {
        props.onDecided(new ApiError(e.status, e.code, `${props.approval.tool} (${id}) was decided before your ${verb === 'approve' ? 'approval' : 'denial'}: ${e.message.replace(/\.\s*$/, '')}. See Decided below.`));
      } else if (e instanceof ApiError && e.code === 'approval_not_found') {
        props.onDecided(new ApiError(e.status, e.code, `Approval ${id} is gone (its tenant or agent was deleted?).`));
      } else setError(e);
    } finally {
      setBusy(null);
    }
  };
  return (
    <div className="approval-decide">
      <label className="approval-comment-field">
        <span className="muted small">Comment (optional)</span>
        <input type="text" maxLength={2000} value={comment} onChange={(e) => setComment(e.target.value)} placeholder="why, kept with the decision" aria-label={`Comment on ${id}`} />
      </label>
      <div className="approval-buttons">
        <button type="button" className="primary" disabled={busy !== null} onClick={() => decide('approve')} data-testid="approve">
          {busy === 'approve' ? 'Approving…' : 'Approve'}
        </button>
        <button type="button" className="danger" disabled={busy !== null} onClick={() => decide('deny')} data-testid="deny">
          {busy === 'deny' ? 'Denying…' : 'Deny'}
        </button>
      </div>
      <ErrorNote error={error} />
    </div>
  );
}

/**
 * How many calls wait for a person, for the navigation's badge: asked every 2 s on every page. Null while unknown, and
 * for good on a gateway without approvals (404).
 */
export function usePendingCount(): string | null {
  const { api } = useSession();
  const [gone, setGone] = useState(false);
  const count = usePoll(
    () =>
      api.get<Page<Approval>>(`/approvals${query({ status: 'pending', limit: 500 })}`).then(
        (p) => `${p.data.length}${p.next_cursor ? '+' : ''}`,
        (e: unknown) => {
          if (e instanceof ApiError && e.status === 404) setGone(true);
          throw e;
        },
      ),
    [api],
    () => (gone ? null : 2000),
    (a, b) => a === b,
  );
  return gone ? null : (count.data ?? null);
}
