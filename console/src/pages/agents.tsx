import { useEffect, useMemo, useState } from 'react';
import { query } from '../api/client';
import type { Agent, AgentWithSpend, PolicyView, RotatedKey } from '../api/types';
import { Badge, Card, ErrorNote, Loading, Meter } from '../components/bits';
import { Dialog } from '../components/dialog';
import { useDirectory } from '../directory';
import { Link } from '../router';
import { useSession } from '../session';
import { usePoll } from '../use-poll';

const MAX_AGENTS = 200;

/** Each agent's GET /agents/{id} (its spend), a few at a time. */
async function withSpend(get: (id: string) => Promise<AgentWithSpend>, agents: Agent[]): Promise<AgentWithSpend[]> {
  const out: AgentWithSpend[] = [];
  for (let i = 0; i < agents.length; i += 8) {
    const batch = await Promise.all(agents.slice(i, i + 8).map((a) => get(a.id).catch(() => null)));
    for (const a of batch) if (a) out.push(a);
  }
  return out;
}

export function Agents(props: { focus?: string }) {
  const { api, me, canWrite } = useSession();
  const [tenant, setTenant] = useState('');
  const [text, setText] = useState('');
  const [rotating, setRotating] = useState<AgentWithSpend | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const dir = useDirectory();
  const agents = usePoll(
    async () => {
      const list = await api.all<Agent>(`/agents${query({ tenant_id: tenant })}`, MAX_AGENTS);
      return { total: list.length, rows: await withSpend((id) => api.get<AgentWithSpend>(`/agents/${encodeURIComponent(id)}`), list.slice(0, MAX_AGENTS)) };
    },
    [api, tenant],
    () => 15_000,
  );
  const policies = usePoll(() => api.all<PolicyView>('/policies'), [api], () => 60_000);
  const policyIds = useMemo(() => new Set((policies.data ?? []).map((p) => p.id)), [policies.data]);

  const rows = useMemo(() => {
    const needle = text.trim().toLowerCase();
    return (agents.data?.rows ?? []).filter((a) => !needle || a.name.toLowerCase().includes(needle) || a.id.toLowerCase().includes(needle));
  }, [agents.data, text]);

  useEffect(() => {
    if (props.focus && agents.data) document.getElementById(`agent-${props.focus}`)?.scrollIntoView({ block: 'center' });
  }, [props.focus, agents.data]);

  const setSuspended = async (a: AgentWithSpend, suspended: boolean) => {
    setBusy(a.id);
    setActionError(null);
    try {
      await api.send('PATCH', `/agents/${encodeURIComponent(a.id)}`, { suspended });
      agents.refresh();
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy(null);
    }
  };

  const actionsOf = (a: AgentWithSpend) => (
    <>
      <button type="button" disabled={busy === a.id} onClick={() => setSuspended(a, !a.suspended)}>
        {a.suspended ? 'Resume' : 'Suspend'}
      </button>
      <button type="button" onClick={() => setRotating(a)}>
        Rotate key
      </button>
    </>
  );

  return (
    <div className="page">
      <div className="page-head">
        <h1>Agents</h1>
        <p className="muted">Spend against the limits of each agent's policy; a suspended agent's key gets 403 agent_suspended.</p>
      </div>
      <Card>
        <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter agents">
          {!me.tenant_id && (
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
          )}
          <label className="grow">
            Search
            <input type="search" placeholder="name or id" value={text} onChange={(e) => setText(e.target.value)} />
          </label>
        </form>
        <ErrorNote error={agents.error} />
        <ErrorNote error={actionError} what="The change failed" />
        {!agents.data ? (
          <Loading />
        ) : rows.length === 0 ? (
          <p className="muted empty">No agents.</p>
        ) : (
          <div className="table-scroll">
            <table className="table agents-table" data-testid="agents-table">
              <thead>
                <tr>
                  <th>Agent</th>
                  {!me.tenant_id && <th className="wide-only">Tenant</th>}
                  <th className="wide-only">Policy</th>
                  <th className="meter-col">Today</th>
                  <th className="meter-col">This month</th>
                  <th className="wide-only">State</th>
                  {canWrite && <th className="wide-only">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {rows.map((a) => (
                  <tr key={a.id} id={`agent-${a.id}`} data-testid="agent-row" data-agent={a.name} className={props.focus === a.id ? 'focused' : undefined}>
                    <td className="agent-cell">
                      <strong title={a.name}>{a.name}</strong>
                      <div className="muted mono small agent-id" title={a.id}>
                        {a.id} · key {a.key_prefix}…
                      </div>
                      {/* On a narrow screen the columns without a number are stacked here, the actions under them. */}
                      {/* The state is drawn by CSS from data-state: the State column's badge stays the one element saying it. */}
                      <div className="narrow-only small muted agent-facts" data-state={a.suspended ? 'suspended' : 'active'}>
                        {me.tenant_id ? '' : <span>{a.tenant_id}</span>}
                        {me.tenant_id ? '' : ' · '}
                        <span>{a.policy_id ?? 'no policy'}</span>
                      </div>
                      {canWrite && <div className="narrow-only narrow-actions">{actionsOf(a)}</div>}
                    </td>
                    {!me.tenant_id && <td className="wide-only">{a.tenant_id}</td>}
                    <td className="wide-only">
                      {a.policy_id ? (
                        <Link to={`/policies#${a.policy_id}`} className="mono">
                          {a.policy_id}
                        </Link>
                      ) : (
                        <span className="muted">none</span>
                      )}
                      {a.policy_id && policies.data && !policyIds.has(a.policy_id) && <span className="muted small"> (not visible)</span>}
                    </td>
                    <td className="meter-col">
                      <Meter label="" spent={a.spend.day} limit={a.spend.daily_limit} />
                    </td>
                    <td className="meter-col">
                      <Meter label="" spent={a.spend.month} limit={a.spend.monthly_limit} />
                    </td>
                    <td className="wide-only">{a.suspended ? <Badge tone="warn">suspended</Badge> : <Badge tone="ok">active</Badge>}</td>
                    {canWrite && (
                      <td className="actions wide-only">
                        <div>{actionsOf(a)}</div>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {agents.data && agents.data.total > MAX_AGENTS && <p className="muted small">Showing {MAX_AGENTS} agents: pick a tenant or search to narrow.</p>}
      </Card>
      {rotating && (
        <RotateDialog
          agent={rotating}
          onClose={() => {
            setRotating(null);
            agents.refresh();
          }}
        />
      )}
    </div>
  );
}

/** Asks first; then shows the new key once. Closing the dialog drops it: the console keeps no agent key. */
function RotateDialog(props: { agent: Agent; onClose(): void }) {
  const { api } = useSession();
  const [key, setKey] = useState<RotatedKey | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [copied, setCopied] = useState(false);
  const rotate = async () => {
    setBusy(true);
    try {
      setKey(await api.send<RotatedKey>('POST', `/agents/${encodeURIComponent(props.agent.id)}/rotate-key`));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const copy = async () => {
    if (!key) return;
    try {
      await navigator.clipboard.writeText(key.api_key);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <Dialog title={key ? `New key for ${props.agent.name}` : `Rotate the key of ${props.agent.name}?`} onClose={props.onClose} testId="rotate-dialog">
      {!key ? (
        <>
          <p>The current key stops working at once; spend carries over. The new key is shown once, here.</p>
          <ErrorNote error={error} />
          <div className="dialog-actions">
            <button type="button" onClick={props.onClose}>
              Cancel
            </button>
            <button type="button" className="danger" onClick={rotate} disabled={busy} data-testid="confirm-rotate">
              {busy ? 'Rotating…' : 'Rotate key'}
            </button>
          </div>
        </>
      ) : (
        <>
          <p>
            Copy it now: <strong>this is the only time the key is shown</strong>. The gateway keeps only its hash.
          </p>
          <div className="key-once">
            <input readOnly value={key.api_key} aria-label="New agent key" data-testid="new-key" onFocus={(e) => e.target.select()} />
            <button type="button" onClick={copy}>
              {copied ? 'Copied' : 'Copy'}
            </button>
          </div>
          <div className="dialog-actions">
            <button type="button" className="primary" onClick={props.onClose} data-testid="key-done">
              Done
            </button>
          </div>
        </>
      )}
    </Dialog>
  );
}
