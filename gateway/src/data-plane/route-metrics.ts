// Prometheus series per route target (per deployment, on this node), read when /metrics is scraped.
import { Gauge, type Registry } from 'prom-client';
import type { HealthBoard } from './route-health.js';

export function registerRouteMetrics(registry: Registry, board: HealthBoard): void {
  const gauge = (name: string, help: string, read: (h: ReturnType<HealthBoard['of']>, now: number) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['target'],
      registers: [registry],
      collect() {
        this.reset();
        const now = Date.now();
        for (const h of board.all()) this.set({ target: h.id }, read(h, now));
      },
    });
  gauge('agentgw_route_target_cooling_down', '1 while the target is cooling down after failures or probed once, else 0.', (h, now) => (h.state(now) === 'healthy' ? 0 : 1));
  gauge('agentgw_route_target_in_flight', 'Requests in flight to the target (a stream until it ends).', (h) => Math.max(0, h.inFlight));
  gauge('agentgw_route_target_latency_ms', 'Recent time to the target answer in ms (weighted to the latest calls).', (h) => (Number.isNaN(h.latencyMs) ? 0 : h.latencyMs));
  gauge('agentgw_route_target_error_rate', 'Recent share of failed attempts on the target (0..1).', (h) => h.errorRate);
  gauge('agentgw_route_target_cooldown_seconds', 'Seconds left of the target cooldown (0 when none).', (h, now) => Math.max(0, (h.cooldownUntil - now) / 1000));
}
