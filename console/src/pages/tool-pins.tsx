// MCP tool pinning on the System page: per server, the tools withheld from agents (changed since accepted, or new under
// pin: strict), each with a line diff of its accepted and its current definition, and Accept for admin keys.
import { useState } from 'react';
import { ApiError } from '../api/client';
import { Badge, Card, ErrorNote, Loading } from '../components/bits';
import { useSession } from '../session';
import { usePoll } from '../use-poll';

interface ToolDefinition {
  description: string | null;
  inputSchema: unknown;
  annotations: unknown;
}

interface PinnedTool {
  name: string;
  status: 'pinned' | 'changed' | 'new';
  withheld: boolean;
  digest: string;
  pinned_digest: string | null;
  definition: ToolDefinition;
  pinned_definition: ToolDefinition | null;
  pinned_at: string | null;
  pinned_by: string | null;
}

interface ServerTools {
  server: string;
  pin: 'changes' | 'strict' | 'off';
  data: PinnedTool[];
}

/** Characters a browser would hide or reorder (controls, bidi overrides, zero-width): shown as escapes, so a reviewer sees them. */
const HIDDEN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|[\u{e0000}-\u{e0fff}]/gu;

function reveal(text: string): string {
  return text.replace(HIDDEN, (c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}

/** JSON with keys sorted and two-space indents: the same schema always reads the same. */
function stableJson(v: unknown): string {
  const sort = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sort);
    if (x !== null && typeof x === 'object') return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort((x as Record<string, unknown>)[k])]));
    return x;
  };
  return JSON.stringify(sort(v), null, 2) ?? 'null';
}

type Op = { kind: ' ' | '-' | '+'; text: string };

/** Line edits from a to b (longest common subsequence); past a size, the old lines go and the new come. */
function lineDiff(a: string[], b: string[]): Op[] {
  if (a.length * b.length > 1_000_000) return [...a.map((text) => ({ kind: '-' as const, text })), ...b.map((text) => ({ kind: '+' as const, text }))];
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      ops.push({ kind: ' ', text: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) ops.push({ kind: '-', text: a[i++]! });
    else ops.push({ kind: '+', text: b[j++]! });
  }
  while (i < a.length) ops.push({ kind: '-', text: a[i++]! });
  while (j < b.length) ops.push({ kind: '+', text: b[j++]! });
  return ops;
}

function partsOf(d: ToolDefinition | null): Array<[string, string[]]> {
  const lines = (s: string) => s.split('\n').map(reveal);
  return [
    ['description', d ? lines(d.description ?? '') : []],
    ['inputSchema', d ? lines(stableJson(d.inputSchema)) : []],
    ['annotations', d && d.annotations != null ? lines(stableJson(d.annotations)) : []],
  ];
}

/** The accepted and the current definition, part by part (a new tool: its whole definition as added lines). */
function DefinitionDiff(props: { tool: PinnedTool }) {
  const before = partsOf(props.tool.pinned_definition);
  const after = partsOf(props.tool.definition);
  return (
    <div data-testid="tool-diff">
      {after.map(([part, lines], k) => {
        const ops = lineDiff(before[k]![1], lines);
        if (ops.every((o) => o.kind === ' ')) return null;
        return (
          <div key={part}>
            <div className="muted small">{part}</div>
            <pre className="mono small tool-diff">
              {ops.map((o, n) => (
                <div key={n} className={o.kind === '-' ? 'bad' : undefined} style={o.kind === '+' ? { color: 'var(--ok, #1a7f37)' } : undefined}>
                  {`${o.kind} ${o.text}`}
                </div>
              ))}
            </pre>
          </div>
        );
      })}
    </div>
  );
}

/** The tools withheld from agents on each server that pins its tools, with Accept for admins. */
export function ToolPins() {
  const { api, isAdmin } = useSession();
  const listing = usePoll(
    async () => {
      const servers = await api.get<{ data: Array<{ name: string }> }>('/mcp/servers').catch((e) => (e instanceof ApiError && e.status === 404 ? { data: [] } : Promise.reject(e)));
      return Promise.all(
        servers.data.map(({ name }) =>
          api.get<ServerTools>(`/mcp/servers/${encodeURIComponent(name)}/tools`).catch((e) => (e instanceof ApiError ? { server: name, pin: 'changes' as const, data: [], error: e.message } : Promise.reject(e))),
        ),
      );
    },
    [api],
    () => 15_000,
  );
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const accept = async (server: string, tool: PinnedTool) => {
    setBusy(`${server}/${tool.name}`);
    setError(null);
    try {
      await api.send('POST', `/mcp/servers/${encodeURIComponent(server)}/tools/${encodeURIComponent(tool.name)}/accept`, { digest: tool.digest });
      listing.refresh();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  const servers = listing.data ?? [];
  if (listing.data !== undefined && servers.length === 0) return null;
  const waiting = servers.flatMap((s) => s.data.filter((t) => t.withheld).map((t) => ({ server: s, tool: t })));
  return (
    <Card title="MCP tool pinning" testId="tool-pins">
      <ErrorNote error={listing.error ?? error} />
      {listing.data === undefined ? (
        listing.error ? null : <Loading />
      ) : (
        <>
          <p className="small muted">
            {servers.map((s) => `${s.server}: pin ${s.pin}${'error' in s ? ` (${String((s as { error?: string }).error)})` : ''}`).join(' · ')}
          </p>
          {waiting.length === 0 ? (
            <p className="muted" data-testid="tool-pins-none">
              No tool is withheld: every tool agents see is the one accepted.
            </p>
          ) : (
            waiting.map(({ server, tool }) => (
              <div key={`${server.server}/${tool.name}`} className="tool-pin" data-testid="withheld-tool">
                <p>
                  <span className="mono">
                    {server.server}/{tool.name}
                  </span>{' '}
                  <Badge tone={tool.status === 'changed' ? 'bad' : 'warn'}>{tool.status}</Badge>{' '}
                  <span className="small muted mono">
                    {tool.pinned_digest ? `${tool.pinned_digest.slice(0, 12)} → ` : ''}
                    {tool.digest.slice(0, 12)}
                  </span>
                </p>
                <DefinitionDiff tool={tool} />
                {isAdmin ? (
                  <button type="button" className="primary" disabled={busy !== null} onClick={() => void accept(server.server, tool)}>
                    Accept
                  </button>
                ) : (
                  <p className="muted small">Only an admin key may accept a tool definition.</p>
                )}
              </div>
            ))
          )}
        </>
      )}
    </Card>
  );
}
