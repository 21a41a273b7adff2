import { useMemo } from 'react';
import { ApiError, query } from '../api/client';
import type { AgentWithSpend, TenantWithSpend, UsagePoint } from '../api/types';
import { TimeChart } from '../components/chart';
import { Card, ErrorNote, Loading, Meter } from '../components/bits';
import { bucketSeconds, compact, int, startOfUtcDay, startOfUtcMonth, usd } from '../format';
import { Link } from '../router';
import { useSession } from '../session';
import { usePoll } from '../use-poll';

const TOP = 8;
/** Groupings of /api/usage this gateway refused (400): an older gateway has no hourly or per-tool usage. */
const lacks = new Set<string>();
const REFRESH = () => 10_000;

export function Overview() {
  const { me } = useSession();
  return (
    <div className="page">
      <div className="page-head">
        <h1>Overview</h1>
        <p className="muted">{me.tenant_id ? `Tenant ${me.tenant_id}` : 'Every tenant'} · spend resets at 00:00 UTC (day) and on the 1st (month)</p>
      </div>
      <Totals />
      <div className="grid-2">
        <TenantSpend />
        <AgentSpend />
      </div>
      <Activity />
      <div className="grid-2">
        <TopUsage groupBy="model" title="Top models this month" />
        <TopUsage groupBy="tool" title="Top tools this month" />
      </div>
    </div>
  );
}

function useUsage(groupBy: string, from: Date, deps: unknown[] = []) {
  const { api } = useSession();
  return usePoll(() => api.get<{ data: UsagePoint[] }>(`/usage${query({ group_by: groupBy, from: from.toISOString() })}`).then((r) => r.data), [api, groupBy, ...deps], REFRESH);
}

const sum = (rows: UsagePoint[] | undefined, f: (r: UsagePoint) => number) => (rows ?? []).reduce((a, r) => a + f(r), 0);

function Totals() {
  const today = useUsage('tenant', startOfUtcDay());
  const month = useUsage('tenant', startOfUtcMonth());
  const hasErrors = today.data?.some((r) => r.errors !== undefined);
  return (
    <div className="kpis" data-testid="kpis">
      <Kpi label="Spend today" value={usd(sum(today.data, (r) => r.cost))} />
      <Kpi label="Spend this month" value={usd(sum(month.data, (r) => r.cost))} />
      <Kpi label="Requests today" value={compact(sum(today.data, (r) => r.requests))} />
      <Kpi label="Errors today" value={hasErrors ? compact(sum(today.data, (r) => r.errors ?? 0)) : '—'} />
    </div>
  );
}

const Kpi = (p: { label: string; value: string }) => (
  <div className="kpi">
    <span className="kpi-label">{p.label}</span>
    <span className="kpi-value">{p.value}</span>
  </div>
);

/** The ids worth showing: the biggest spenders this month first, then any others, TOP at most. */
function ranked(rows: UsagePoint[] | undefined, others: string[]): string[] {
  const ids = [...(rows ?? [])].sort((a, b) => b.cost - a.cost).map((r) => r.key);
  for (const id of others) if (!ids.includes(id)) ids.push(id);
  return ids.slice(0, TOP);
}

function TenantSpend() {
  const { api, me } = useSession();
  const tenants = usePoll(
    async () => {
      const ids = me.tenant_id
        ? [me.tenant_id]
        : ranked(
            (await api.get<{ data: UsagePoint[] }>(`/usage${query({ group_by: 'tenant', from: startOfUtcMonth().toISOString() })}`)).data,
            (await api.get<{ data: { id: string }[] }>('/tenants?limit=50')).data.map((t) => t.id),
          );
      return Promise.all(ids.map((id) => api.get<TenantWithSpend>(`/tenants/${encodeURIComponent(id)}`)));
    },
    [api, me.tenant_id],
    REFRESH,
  );
  return (
    <Card title={me.tenant_id ? 'Tenant spend' : 'Tenants: spend against budgets'} testId="tenant-spend">
      <ErrorNote error={tenants.error} />
      {!tenants.data ? (
        <Loading />
      ) : tenants.data.length === 0 ? (
        <p className="muted">No tenants yet.</p>
      ) : (
        <ul className="spend-list">
          {tenants.data.map((t) => (
            <li key={t.id} data-testid="tenant-row">
              <div className="spend-name">
                <strong>{t.name}</strong> <span className="muted mono">{t.id}</span>
              </div>
              <Meter label="Today" spent={t.spend.day} limit={t.spend.daily_limit} />
              <Meter label="This month" spent={t.spend.month} limit={t.spend.monthly_limit} />
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

function AgentSpend() {
  const { api, me } = useSession();
  const agents = usePoll(
    async () => {
      const usage = (await api.get<{ data: UsagePoint[] }>(`/usage${query({ group_by: 'agent', from: startOfUtcMonth().toISOString() })}`)).data;
      const listed = (await api.get<{ data: { id: string }[] }>(`/agents${query({ limit: 50 })}`)).data.map((a) => a.id);
      const ids = ranked(usage, listed);
      const found = await Promise.all(ids.map((id) => api.get<AgentWithSpend>(`/agents/${encodeURIComponent(id)}`).catch(() => null)));
      return found.filter((a): a is AgentWithSpend => a !== null);
    },
    [api, me.tenant_id],
    REFRESH,
  );
  return (
    <Card title="Agents: spend against limits" actions={<Link to="/agents">All agents</Link>} testId="agent-spend">
      <ErrorNote error={agents.error} />
      {!agents.data ? (
        <Loading />
      ) : agents.data.length === 0 ? (
        <p className="muted">No agents yet.</p>
      ) : (
        <ul className="spend-list">
          {agents.data.map((a) => (
            <li key={a.id} data-testid="agent-row">
              <div className="spend-name">
                <Link to={`/agents?agent=${encodeURIComponent(a.id)}`}>
                  <strong>{a.name}</strong>
                </Link>{' '}
                <span className="muted">{a.tenant_id}</span>
                {a.suspended && <span className="badge badge-warn">suspended</span>}
              </div>
              <Meter label="Today" spent={a.spend.day} limit={a.spend.daily_limit} />
              <Meter label="This month" spent={a.spend.month} limit={a.spend.monthly_limit} />
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

/** Requests and errors per hour over two days (per day over 30 days when the gateway has no hourly usage). */
function Activity() {
  const { api } = useSession();
  const usage = usePoll(
    async () => {
      const hourFrom = new Date(Date.now() - 48 * 3600_000);
      if (!lacks.has('hour')) {
        try {
          const r = await api.get<{ data: UsagePoint[] }>(`/usage${query({ group_by: 'hour', from: hourFrom.toISOString() })}`);
          return { unit: 'hour' as const, rows: r.data, from: hourFrom };
        } catch (e) {
          if (!(e instanceof ApiError && e.status === 400)) throw e;
          lacks.add('hour');
        }
      }
      const dayFrom = new Date(startOfUtcDay().getTime() - 29 * 86_400_000);
      const r = await api.get<{ data: UsagePoint[] }>(`/usage${query({ group_by: 'day', from: dayFrom.toISOString() })}`);
      return { unit: 'day' as const, rows: r.data, from: dayFrom };
    },
    [api],
    () => 30_000,
  );
  const chart = useMemo(() => {
    if (!usage.data) return null;
    const step = usage.data.unit === 'hour' ? 3600 : 86_400;
    const start = Math.floor(usage.data.from.getTime() / 1000 / step) * step;
    const end = Math.floor(Date.now() / 1000 / step) * step;
    const byBucket = new Map<number, UsagePoint>();
    for (const r of usage.data.rows) {
      const t = bucketSeconds(r.key);
      if (t !== null) byBucket.set(Math.floor(t / step) * step, r);
    }
    const xs: number[] = [];
    for (let t = start; t <= end; t += step) xs.push(t);
    const hasErrors = usage.data.rows.some((r) => r.errors !== undefined);
    return {
      xs,
      series: [
        { label: 'Requests', color: '#1f4fd1', values: xs.map((t) => byBucket.get(t)?.requests ?? 0), bars: true },
        ...(hasErrors ? [{ label: 'Errors', color: '#d13a1f', values: xs.map((t) => byBucket.get(t)?.errors ?? 0) }] : []),
      ],
      hasErrors,
      step,
      total: usage.data.rows.reduce((a, r) => a + r.requests, 0),
    };
  }, [usage.data]);
  return (
    <Card title={`Requests and errors per ${usage.data?.unit ?? 'hour'}`} testId="activity">
      <ErrorNote error={usage.error} />
      {!chart ? <Loading /> : <TimeChart xs={chart.xs} series={chart.series} step={chart.step} testId="activity-chart" />}
      {chart && (
        <p className="muted small">
          {int(chart.total)} requests {usage.data?.unit === 'hour' ? 'in the last 48 hours' : 'in the last 30 days'}
          {chart.hasErrors ? '' : ' · this gateway reports no error counts in /api/usage'}
        </p>
      )}
    </Card>
  );
}

function TopUsage(props: { groupBy: 'model' | 'tool'; title: string }) {
  const { api } = useSession();
  const usage = usePoll(
    () =>
      lacks.has(props.groupBy)
        ? Promise.resolve(null)
        : api
            .get<{ data: UsagePoint[] }>(`/usage${query({ group_by: props.groupBy, from: startOfUtcMonth().toISOString() })}`)
            .then((r) => r.data)
            .catch((e) => (e instanceof ApiError && e.status === 400 ? (lacks.add(props.groupBy), null) : Promise.reject(e))),
    [api, props.groupBy],
    REFRESH,
  );
  const rows = useMemo(() => [...(usage.data ?? [])].filter((r) => r.key).sort((a, b) => b.cost - a.cost || b.requests - a.requests).slice(0, TOP), [usage.data]);
  const max = Math.max(1e-12, ...rows.map((r) => r.cost));
  return (
    <Card title={props.title} testId={`top-${props.groupBy}s`}>
      <ErrorNote error={usage.error} />
      {usage.data === undefined ? (
        <Loading />
      ) : usage.data === null ? (
        <p className="muted">This gateway does not report usage per {props.groupBy}.</p>
      ) : rows.length === 0 ? (
        <p className="muted">No {props.groupBy} calls this month.</p>
      ) : (
        <table className="table compact-table">
          <thead>
            <tr>
              <th>{props.groupBy === 'model' ? 'Model' : 'Tool'}</th>
              <th className="num">Requests</th>
              <th className="num">Tokens</th>
              <th className="num">Cost</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.key}>
                <td>
                  <span className="mono">{r.key}</span>
                  <div className="mini-bar">
                    <div style={{ width: `${(r.cost / max) * 100}%` }} />
                  </div>
                </td>
                <td className="num">{int(r.requests)}</td>
                <td className="num">{compact(r.prompt_tokens + r.completion_tokens)}</td>
                <td className="num">{usd(r.cost)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}
