// Route health on the System page: per alias and target, this node's view (state, cooldown, in flight, latency, error
// rate and the keys of a pool), refreshed every few seconds from GET /api/route-health (admin keys only).
import { Badge, Card, ErrorNote, Loading } from '../components/bits';
import { ms, time } from '../format';
import { useSession } from '../session';
import { usePoll } from '../use-poll';

type HealthState = 'healthy' | 'cooling_down' | 'probing';

interface TargetHealth {
  model: string;
  weight: number;
  priority: number;
  rpm: number | null;
  tpm: number | null;
  state: HealthState;
  cooldown_until: string | null;
  in_flight: number;
  latency_ms_p50: number | null;
  error_rate: number;
  keys: Array<{ key_index: number; state: HealthState; cooldown_until: string | null }>;
}

interface RouteHealthReport {
  routes: Array<{ alias: string | null; strategy: string; targets: TargetHealth[] }>;
}

/** How often the card asks again. */
export const ROUTE_HEALTH_REFRESH_MS = 3000;

const TONE: Record<HealthState, 'ok' | 'warn' | 'bad'> = { healthy: 'ok', probing: 'warn', cooling_down: 'bad' };
const LABEL: Record<HealthState, string> = { healthy: 'healthy', probing: 'probing', cooling_down: 'cooling down' };

function StateBadge(props: { state: HealthState; until: string | null }) {
  return (
    <Badge tone={TONE[props.state]} title={props.until ? `until ${time(props.until)}` : undefined}>
      {LABEL[props.state]}
    </Badge>
  );
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(rate > 0 && rate < 0.1 ? 1 : 0)}%`;
}

export function RouteHealth() {
  const { api, isAdmin } = useSession();
  const health = usePoll(
    // Other keys would only be refused (403): they ask nothing.
    () => (isAdmin ? api.get<RouteHealthReport>('/route-health') : Promise.resolve<RouteHealthReport>({ routes: [] })),
    [api, isAdmin],
    () => (isAdmin ? ROUTE_HEALTH_REFRESH_MS : null),
    (a, b) => JSON.stringify(a) === JSON.stringify(b),
  );
  if (!isAdmin) {
    return (
      <Card title="Route health" testId="route-health">
        <p className="muted">Only an admin key may read route health.</p>
      </Card>
    );
  }
  const routes = health.data?.routes;
  return (
    <Card title="Route health" testId="route-health">
      <p className="muted small">This node's view of each route target, refreshed every {ROUTE_HEALTH_REFRESH_MS / 1000} s; cooldowns are shared between nodes.</p>
      <ErrorNote error={health.error} what="route health" />
      {!routes ? (
        health.error ? null : <Loading />
      ) : routes.length === 0 ? (
        <p className="muted" data-testid="route-health-none">
          No routes yet: aliases of agentgw.yaml and routes written with PUT /api/routes appear here.
        </p>
      ) : (
        <div className="table-scroll">
          <table className="table">
            <thead>
              <tr>
                <th>Alias</th>
                <th>Target</th>
                <th>State</th>
                <th>Cooldown until</th>
                <th className="num">In flight</th>
                <th className="num">Latency p50</th>
                <th className="num">Error rate</th>
                <th>Keys</th>
              </tr>
            </thead>
            <tbody>
              {routes.flatMap((r) =>
                r.targets.map((t, i) => (
                  <tr key={`${r.alias ?? ''}\u0000${t.model}`} data-testid="route-target" data-alias={r.alias ?? ''} data-model={t.model} data-state={t.state}>
                    <td className="mono">{i === 0 ? (r.alias ?? <span className="muted">(direct)</span>) : ''}{i === 0 && r.alias ? <span className="muted small"> {r.strategy}</span> : null}</td>
                    <td className="mono">{t.model}</td>
                    <td>
                      <StateBadge state={t.state} until={t.cooldown_until} />
                    </td>
                    <td className="small" data-testid="cooldown-until">{t.cooldown_until ? time(t.cooldown_until) : '—'}</td>
                    <td className="num">{t.in_flight}</td>
                    <td className="num">{ms(t.latency_ms_p50)}</td>
                    <td className="num">{percent(t.error_rate)}</td>
                    <td className="small">
                      {t.keys.length === 0
                        ? '—'
                        : t.keys.map((k) => (
                            <span key={k.key_index} data-testid="route-key">
                              #{k.key_index} <StateBadge state={k.state} until={k.cooldown_until} />{' '}
                            </span>
                          ))}
                    </td>
                  </tr>
                )),
              )}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
