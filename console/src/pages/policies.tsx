import { type FormEvent, useEffect, useMemo, useState } from 'react';
import type { Agent, PolicyView } from '../api/types';
import { Badge, Card, ErrorNote, Loading } from '../components/bits';
import { int, usd } from '../format';
import { Link } from '../router';
import { useSession } from '../session';
import { usePoll } from '../use-poll';

/** The rules a policy enforces, in CONTRACT's decision order, as label and value. */
function ruleLines(p: PolicyView): [string, string][] {
  const r = p.rules;
  const lines: [string, string][] = [];
  lines.push(['Models', p.allowed_models === null ? 'any' : p.allowed_models.length === 0 ? 'none' : p.allowed_models.join(', ')]);
  if (p.allowed_tools !== undefined) lines.push(['MCP tools', p.allowed_tools === null ? 'any' : p.allowed_tools.length === 0 ? 'none' : p.allowed_tools.join(', ')]);
  lines.push(['PII', r.pii === 'off' ? 'off' : `${r.pii} ${r.pii_types.join(', ')} in ${r.pii_scope.join(', ')}`]);
  lines.push(['Retry block', r.retry_block ? `more than ${r.retry_block.max_repeats} repeats in ${r.retry_block.window_seconds} s` : 'off']);
  lines.push(['Rate', [r.rpm ? `${int(r.rpm)} requests/min` : null, r.tpm ? `${int(r.tpm)} tokens/min` : null].filter(Boolean).join(', ') || 'no limit']);
  lines.push(['Per request', r.max_cost_per_request === null ? 'no cap' : `${usd(r.max_cost_per_request)}${r.clamp_output ? ' (output clamped to fit)' : ''}`]);
  lines.push(['Per trace', r.max_cost_per_trace === null ? 'no cap' : usd(r.max_cost_per_trace)]);
  if (r.max_tool_calls_per_trace !== undefined) lines.push(['Tool calls per trace', r.max_tool_calls_per_trace === null ? 'no cap' : int(r.max_tool_calls_per_trace)]);
  lines.push(['Budget per agent', `${p.daily_budget === null ? (p.monthly_budget === null ? 'no daily limit' : 'monthly ÷ days a day') : `${usd(p.daily_budget)} a day`} · ${p.monthly_budget === null ? 'no monthly limit' : `${usd(p.monthly_budget)} a month`}`]);
  return lines;
}

/** A tenant_admin or admin changes a policy's monthly budget per agent here (PUT /policies/{id}: only that field). */
function BudgetForm(props: { policy: PolicyView; onSaved(): void }) {
  const { api } = useSession();
  const [value, setValue] = useState(props.policy.monthly_budget === null ? '' : String(props.policy.monthly_budget));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const save = async (e: FormEvent) => {
    e.preventDefault();
    const v = value.trim();
    const n = v === '' ? null : Number(v);
    if (n !== null && !(Number.isFinite(n) && n >= 0)) {
      setError(new Error('The monthly budget is a number of USD, 0 or more (empty: no limit).'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.send('PUT', `/policies/${encodeURIComponent(props.policy.id)}`, { monthly_budget: n });
      props.onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="inline-form" onSubmit={save}>
      <label>
        Monthly budget per agent (USD)
        <input name="monthly_budget" inputMode="decimal" placeholder="no limit" value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      <button type="submit" disabled={busy}>
        {busy ? 'Saving…' : 'Save budget'}
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

export function Policies() {
  const { api, canWrite, me } = useSession();
  const data = usePoll(async () => ({ policies: await api.all<PolicyView>('/policies'), agents: await api.all<Agent>('/agents') }), [api], () => 30_000);
  const users = useMemo(() => {
    const m = new Map<string, Agent[]>();
    for (const a of data.data?.agents ?? []) if (a.policy_id) m.set(a.policy_id, [...(m.get(a.policy_id) ?? []), a]);
    return m;
  }, [data.data]);
  const withoutPolicy = (data.data?.agents ?? []).filter((a) => !a.policy_id);

  useEffect(() => {
    const id = decodeURIComponent(window.location.hash.slice(1));
    if (id && data.data) document.getElementById(`policy-${id}`)?.scrollIntoView({ block: 'start' });
  }, [data.data]);

  return (
    <div className="page">
      <div className="page-head">
        <h1>Policies</h1>
        <p className="muted">Effective rules, with every default filled in, and the agents each policy governs. An X-Agent-Policy header can only tighten them.</p>
      </div>
      <ErrorNote error={data.error} />
      {!data.data ? (
        <Loading />
      ) : data.data.policies.length === 0 ? (
        <Card>
          <p className="muted">No policies yet: agents without one have no budget and may call any model.</p>
        </Card>
      ) : (
        <div className="policy-grid">
          {data.data.policies.map((p) => (
            <Card key={p.id} testId="policy-card" className="policy-card" title={<span id={`policy-${p.id}`} className="mono">{p.id}</span>} actions={p.tenant_id ? <Badge>{p.tenant_id}</Badge> : <Badge tone="info">global</Badge>}>
              <dl className="rules">
                {ruleLines(p).map(([k, v]) => (
                  <div key={k}>
                    <dt>{k}</dt>
                    <dd>{v}</dd>
                  </div>
                ))}
              </dl>
              {canWrite && (p.tenant_id !== null || me.role === 'admin') && <BudgetForm policy={p} onSaved={data.refresh} />}
              <h3>Agents using it ({users.get(p.id)?.length ?? 0})</h3>
              {users.get(p.id)?.length ? (
                <ul className="chips">
                  {users.get(p.id)!.map((a) => (
                    <li key={a.id}>
                      <Link to={`/agents?agent=${encodeURIComponent(a.id)}`}>{a.name}</Link>
                    </li>
                  ))}
                </ul>
              ) : (
                <p className="muted small">None.</p>
              )}
            </Card>
          ))}
        </div>
      )}
      {withoutPolicy.length > 0 && (
        <Card title={`Agents without a policy (${withoutPolicy.length})`}>
          <ul className="chips">
            {withoutPolicy.map((a) => (
              <li key={a.id}>
                <Link to={`/agents?agent=${encodeURIComponent(a.id)}`}>{a.name}</Link>
              </li>
            ))}
          </ul>
        </Card>
      )}
    </div>
  );
}
