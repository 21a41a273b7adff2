import { useEffect, useState } from 'react';
import type { AuditEntry } from '@agentgw/gateway/contract';
import { query } from '../api/client';
import type { Page } from '../api/types';
import { Badge, Card, ErrorNote, Loading } from '../components/bits';
import { time } from '../format';
import { useSession } from '../session';

const KINDS = ['tenant', 'agent', 'policy', 'admin_key', 'maintenance', 'trace', 'route', 'approval', 'mcp_credentials'];
const SINCE: Record<string, number | null> = { '1h': 3600e3, '24h': 86_400e3, '7d': 7 * 86_400e3, '30d': 30 * 86_400e3, all: null };
const SINCE_LABEL: Record<string, string> = { '1h': 'Last hour', '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days', all: 'Any time' };
const PAGE = 50;

/** One line per member that changed: `name: before → after` (members only one side has show one value). */
export function diffLines(before: Record<string, unknown> | null, after: Record<string, unknown> | null): { key: string; before?: string; after?: string }[] {
  const keys = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].sort();
  const show = (v: unknown) => (v === undefined ? undefined : JSON.stringify(v));
  const out: { key: string; before?: string; after?: string }[] = [];
  for (const k of keys) {
    const b = before ? show(before[k]) : undefined;
    const a = after ? show(after[k]) : undefined;
    if (b === a) continue;
    out.push({ key: k, before: b, after: a });
  }
  return out;
}

/** The audit log: who changed what, when, from what to what; newest first, a page at a time (the API's cursor). */
export function Audit() {
  const { api, me } = useSession();
  const [kind, setKind] = useState('');
  const [actor, setActor] = useState('');
  const [objectId, setObjectId] = useState('');
  const [since, setSince] = useState('7d');
  // The cursors of the pages before this one, so "Newer" goes back without asking the server for a reverse order.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [page, setPage] = useState<{ data: Page<AuditEntry> | null; error: unknown }>({ data: null, error: null });
  const cursor = cursors[cursors.length - 1] ?? null;

  // Filters start again from the newest page.
  useEffect(() => setCursors([null]), [kind, actor, objectId, since]);

  useEffect(() => {
    let live = true;
    const ms = SINCE[since];
    const q = query({
      kind,
      actor: actor.trim(),
      object_id: objectId.trim(),
      since: ms === null || ms === undefined ? undefined : new Date(Date.now() - ms).toISOString(),
      limit: PAGE,
      cursor,
    });
    api.get<Page<AuditEntry>>(`/audit${q}`).then(
      (data) => live && setPage({ data, error: null }),
      (error: unknown) => live && setPage((p) => ({ data: p.data, error })),
    );
    return () => {
      live = false;
    };
  }, [api, kind, actor, objectId, since, cursor]);

  const entries = page.data?.data ?? [];
  return (
    <div className="page">
      <div className="page-head">
        <h1>Audit log</h1>
        <p className="muted">
          Every change made through the admin interface: who, when, and the object before and after (secrets left out).
          {me.tenant_id ? ` Tenant ${me.tenant_id}'s entries only.` : ''}
        </p>
      </div>
      <Card>
        <form className="audit-filters" onSubmit={(e) => e.preventDefault()}>
          <label>
            Object kind
            <select value={kind} onChange={(e) => setKind(e.target.value)}>
              <option value="">Any</option>
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {k.replace('_', ' ')}
                </option>
              ))}
            </select>
          </label>
          <label>
            Who
            <input type="search" placeholder="name or id" value={actor} onChange={(e) => setActor(e.target.value)} />
          </label>
          <label>
            Object id
            <input type="search" placeholder="e.g. acme-standard" value={objectId} onChange={(e) => setObjectId(e.target.value)} />
          </label>
          <label>
            When
            <select value={since} onChange={(e) => setSince(e.target.value)}>
              {Object.keys(SINCE).map((k) => (
                <option key={k} value={k}>
                  {SINCE_LABEL[k]}
                </option>
              ))}
            </select>
          </label>
        </form>
        <ErrorNote error={page.error} />
        {!page.data ? (
          <Loading />
        ) : entries.length === 0 ? (
          <p className="muted empty">No changes match.</p>
        ) : (
          <div className="table-scroll">
            <table className="table audit-table" data-testid="audit-table">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Who</th>
                  <th>Action</th>
                  <th>Object</th>
                  <th>Change</th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => (
                  <tr key={e.id} data-testid="audit-row">
                    <td title={e.at}>{time(e.at)}</td>
                    <td>
                      <span title={e.actor.id}>{e.actor.name}</span> <Badge tone={e.actor.kind === 'oidc' ? 'info' : 'muted'}>{e.actor.kind === 'oidc' ? 'sso' : 'key'}</Badge>
                    </td>
                    <td className="mono">{e.action}</td>
                    <td>
                      <span className="muted">{e.object.kind.replace('_', ' ')}</span> <span className="mono">{e.object.id}</span>
                    </td>
                    <td>
                      <ul className="audit-diff">
                        {diffLines(e.before, e.after).map((d) => (
                          <li key={d.key}>
                            <span className="mono">{d.key}</span>: {d.before !== undefined && <span className="diff-before">{d.before}</span>}
                            {d.before !== undefined && d.after !== undefined && ' → '}
                            {d.after !== undefined && <span className="diff-after">{d.after}</span>}
                          </li>
                        ))}
                      </ul>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <div className="pager">
          <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
            Newer
          </button>
          <span className="muted small">Page {cursors.length}</span>
          <button type="button" disabled={!page.data?.next_cursor} onClick={() => page.data?.next_cursor && setCursors((c) => [...c, page.data!.next_cursor])}>
            Older
          </button>
        </div>
      </Card>
    </div>
  );
}
