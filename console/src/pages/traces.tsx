import { useMemo, useState } from 'react';
import { query } from '../api/client';
import type { Page, TraceSummary } from '../api/types';
import { Badge, Card, ErrorNote, Loading } from '../components/bits';
import { useDirectory } from '../directory';
import { ago, compact, ms, usd } from '../format';
import { Link, navigate } from '../router';
import { useSession } from '../session';
import { usePoll } from '../use-poll';

const SINCE: Record<string, number | null> = { '15m': 15 * 60_000, '1h': 3600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, all: null };
const SINCE_LABEL: Record<string, string> = { '15m': 'Last 15 minutes', '1h': 'Last hour', '24h': 'Last 24 hours', '7d': 'Last 7 days', all: 'All time' };

export const traceHref = (t: { trace_id: string; tenant_id: string }) => `/trace${query({ id: t.trace_id, tenant: t.tenant_id })}`;

/** Traces, newest first, fetched again every 2 s. */
export function Traces() {
  const { api, me } = useSession();
  const [tenant, setTenant] = useState(me.tenant_id ?? '');
  const [agent, setAgent] = useState('');
  const [since, setSince] = useState('24h');
  const [status, setStatus] = useState<'all' | 'errors' | 'stopped'>('all');
  const [text, setText] = useState('');
  const dir = useDirectory(tenant || undefined);

  const traces = usePoll(
    () => {
      const window = SINCE[since];
      const q = query({ tenant_id: tenant, agent_id: agent, since: window ? new Date(Date.now() - window).toISOString() : undefined, limit: 200 });
      return api.get<Page<TraceSummary>>(`/traces${q}`);
    },
    [api, tenant, agent, since],
    () => 2000,
  );

  const rows = useMemo(() => {
    const needle = text.trim().toLowerCase();
    return (traces.data?.data ?? []).filter(
      (t) =>
        (status === 'all' || (status === 'errors' ? t.error_count > 0 : t.stopped)) &&
        (!needle || t.trace_id.toLowerCase().includes(needle) || dir.agentName(t.agent_id).toLowerCase().includes(needle)),
    );
  }, [traces.data, status, text, dir]);

  return (
    <div className="page">
      <div className="page-head">
        <h1>Traces</h1>
        <p className="muted">
          <span className="live-dot" aria-hidden /> Live: updated every 2 s
        </p>
      </div>
      <Card>
        <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter traces">
          {!me.tenant_id && (
            <label>
              Tenant
              <select
                value={tenant}
                onChange={(e) => {
                  setTenant(e.target.value);
                  setAgent('');
                }}
              >
                <option value="">All tenants</option>
                {dir.tenants.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label>
            Agent
            <select value={agent} onChange={(e) => setAgent(e.target.value)}>
              <option value="">All agents</option>
              {dir.agents.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                  {me.tenant_id || tenant ? '' : ` (${a.tenant_id})`}
                </option>
              ))}
            </select>
          </label>
          <label>
            Started
            <select value={since} onChange={(e) => setSince(e.target.value)}>
              {Object.keys(SINCE).map((k) => (
                <option key={k} value={k}>
                  {SINCE_LABEL[k]}
                </option>
              ))}
            </select>
          </label>
          <label>
            Status
            <select value={status} onChange={(e) => setStatus(e.target.value as typeof status)}>
              <option value="all">Any</option>
              <option value="errors">With errors</option>
              <option value="stopped">Stopped</option>
            </select>
          </label>
          <label className="grow">
            Search
            <input type="search" placeholder="trace id or agent" value={text} onChange={(e) => setText(e.target.value)} />
          </label>
        </form>
        <ErrorNote error={traces.error} />
        {!traces.data ? (
          <Loading />
        ) : rows.length === 0 ? (
          <p className="muted empty">No traces match.</p>
        ) : (
          <div className="table-scroll">
            <table className="table traces-table" data-testid="traces-table">
              <thead>
                <tr>
                  <th>Trace</th>
                  {!me.tenant_id && <th className="wide-only">Tenant</th>}
                  <th className="wide-only">Agent</th>
                  <th className="wide-only">Started</th>
                  <th className="num wide-only">Duration</th>
                  <th className="num">Steps</th>
                  <th className="num">Errors</th>
                  <th className="num wide-only">Tokens</th>
                  <th className="num">Cost</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((t) => (
                  <tr key={`${t.tenant_id}/${t.trace_id}`} data-testid="trace-row" className="clickable" onClick={(e) => !(e.target as HTMLElement).closest('a') && navigate(traceHref(t))}>
                    <td className="trace-cell">
                      <span className="trace-id-line">
                        <Link to={traceHref(t)} className="mono trace-id" title={t.trace_id}>
                          {t.trace_id}
                        </Link>
                        {t.stopped && <Badge tone="bad">stopped</Badge>}
                      </span>
                      {/* On a narrow screen the columns that carry no number the list is read for are stacked here. */}
                      <span className="narrow-only muted small">
                        {me.tenant_id ? '' : `${t.tenant_id} · `}
                        {dir.agentName(t.agent_id)} · {ago(t.started_at)} · {ms(Date.parse(t.ended_at) - Date.parse(t.started_at))} ·{' '}
                        {compact(t.prompt_tokens + t.completion_tokens)} tokens
                      </span>
                    </td>
                    {!me.tenant_id && <td className="wide-only">{t.tenant_id}</td>}
                    <td className="wide-only">{dir.agentName(t.agent_id)}</td>
                    <td className="wide-only" title={t.started_at}>
                      {ago(t.started_at)}
                    </td>
                    <td className="num wide-only">{ms(Date.parse(t.ended_at) - Date.parse(t.started_at))}</td>
                    <td className="num">{t.request_count}</td>
                    <td className={t.error_count ? 'num bad' : 'num'}>{t.error_count}</td>
                    <td className="num wide-only">{compact(t.prompt_tokens + t.completion_tokens)}</td>
                    <td className="num">{usd(t.cost)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {traces.data?.next_cursor && <p className="muted small">Showing the newest 200: narrow the filters to see older traces.</p>}
      </Card>
    </div>
  );
}
