import { useState } from 'react';
import { ApiError } from '../api/client';
import type { McpServer, SystemConfig } from '../api/types';
import { Badge, Card, ErrorNote, Loading } from '../components/bits';
import { time, usd } from '../format';
import { useSession } from '../session';
import { usePoll } from '../use-poll';
import { RouteHealth } from './route-health';
import { ToolPins } from './tool-pins';

export function System() {
  const { api } = useSession();
  const config = usePoll(() => api.get<SystemConfig>('/system/config'), [api], () => 10_000);
  const c = config.data;
  return (
    <div className="page">
      <div className="page-head">
        <h1>System</h1>
        {c && (
          <p className="muted">
            agentgw {c.version} · storage {c.storage.kind} · counters {c.counters.kind}
          </p>
        )}
      </div>
      <ErrorNote error={config.error} />
      {!c ? (
        <Loading />
      ) : (
        <>
          <Maintenance config={c} onChanged={config.refresh} />
          <Card title="Providers" testId="providers">
            <div className="table-scroll">
              <table className="table">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Type</th>
                    <th>Base URL</th>
                    <th>Models</th>
                    <th>State</th>
                  </tr>
                </thead>
                <tbody>
                  {c.providers.map((p) => (
                    <tr key={p.name}>
                      <td className="mono">{p.name}</td>
                      <td>{p.type}</td>
                      <td className="mono small">{p.base_url ?? '—'}</td>
                      <td className="small">{p.models.length ? p.models.join(', ') : 'any'}</td>
                      <td>{p.configured ? <Badge tone="ok">configured</Badge> : <Badge tone="bad">missing secret</Badge>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Card>
          <RouteHealth />
          <McpServers />
          <ToolPins />
          <Card title="Roles">
            <dl className="rules">
              {c.rbac_roles.map((r) => (
                <div key={r.name}>
                  <dt>{r.name}</dt>
                  <dd className="mono small">{r.permissions.join(' ')}</dd>
                </div>
              ))}
            </dl>
          </Card>
        </>
      )}
    </div>
  );
}

function Maintenance(props: { config: SystemConfig; onChanged(): void }) {
  const { api, isAdmin } = useSession();
  const m = props.config.maintenance;
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const toggle = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.send('PUT', '/system/maintenance', m.enabled ? { enabled: false } : { enabled: true, ...(message.trim() ? { message: message.trim() } : {}) });
      props.onChanged();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card title="Maintenance" testId="maintenance">
      <p>
        {m.enabled ? <Badge tone="warn">on</Badge> : <Badge tone="ok">off</Badge>}{' '}
        {m.enabled ? `since ${time(m.since)}: every /v1 request is answered 503 maintenance${m.message ? ` ("${m.message}")` : ''}. The admin interface keeps working.` : 'The gateway serves requests.'}
      </p>
      {isAdmin ? (
        <div className="inline-form">
          {!m.enabled && <input placeholder="Message for clients (optional)" value={message} maxLength={500} onChange={(e) => setMessage(e.target.value)} aria-label="Maintenance message" />}
          <button type="button" className={m.enabled ? 'primary' : 'danger'} onClick={toggle} disabled={busy} data-testid="maintenance-toggle">
            {m.enabled ? 'End maintenance' : 'Start maintenance'}
          </button>
        </div>
      ) : (
        <p className="muted small">Only an admin key may switch maintenance mode.</p>
      )}
      <ErrorNote error={error} />
    </Card>
  );
}

const MCP_TONE: Record<string, 'ok' | 'info' | 'bad' | 'muted'> = { up: 'ok', connecting: 'info', down: 'bad', idle: 'muted' };

/** GET /api/mcp/servers when the gateway has MCP; "not configured" when it has no such route or no servers. */
function McpServers() {
  const { api } = useSession();
  const servers = usePoll(
    () =>
      api
        .get<{ data: McpServer[] } | McpServer[]>('/mcp/servers')
        .then((r) => (Array.isArray(r) ? r : r.data))
        .catch((e) => (e instanceof ApiError && e.status === 404 ? null : Promise.reject(e))),
    [api],
    () => 15_000,
  );
  return (
    <Card title="MCP servers" testId="mcp-servers">
      <ErrorNote error={servers.error} />
      {servers.data === undefined ? (
        servers.error ? null : <Loading />
      ) : servers.data === null || servers.data.length === 0 ? (
        <p className="muted">MCP servers: not configured.</p>
      ) : (
        <div className="table-scroll">
          <table className="table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Transport</th>
                <th>Status</th>
                <th>Tools</th>
              </tr>
            </thead>
            <tbody>
              {servers.data.map((s) => (
                <tr key={s.name}>
                  <td className="mono">{s.name}</td>
                  <td>{s.transport ?? '—'}</td>
                  <td>
                    {s.status ? <Badge tone={MCP_TONE[s.status] ?? 'muted'}>{s.status}</Badge> : '—'}
                    {s.error && <div className="small bad">{s.error}</div>}
                  </td>
                  <td className="small mono">{s.tools?.map((t) => (s.prices?.[t] ? `${t} (${usd(s.prices[t])})` : t)).join(', ') || '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
