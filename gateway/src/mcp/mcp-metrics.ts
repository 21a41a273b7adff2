// Prometheus series of /mcp tool calls, per server, tool and outcome (beside the data plane's agentgw_requests_total).
import type { Registry } from 'prom-client';
import { type CounterSeries, CounterFamily, HistogramFamily, type HistogramSeries } from '../telemetry/series.js';

export class McpMetrics {
  private readonly calls: CounterFamily;
  private readonly duration: HistogramFamily;
  private readonly byCall = new Map<string, CounterSeries>();
  private readonly byServer = new Map<string, HistogramSeries>();

  constructor(registry: Registry) {
    this.calls = new CounterFamily('agentgw_mcp_tool_calls_total', 'MCP tool calls through /mcp, by server, tool and outcome (ok or the error code).', ['server', 'tool', 'outcome'], registry);
    this.duration = new HistogramFamily(
      'agentgw_mcp_tool_call_duration_seconds',
      'Time from tools/call to its result, checks included.',
      ['server'],
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registry,
    );
  }

  /** `tool` is the upstream's name; calls of tools that are not known are counted under "unknown" (agents choose names). */
  observe(server: string, tool: string, outcome: string, seconds: number): void {
    const key = `${server}\u0000${tool}\u0000${outcome}`;
    let s = this.byCall.get(key);
    if (!s) this.byCall.set(key, (s = this.calls.with(server, tool, outcome)));
    s.inc();
    let h = this.byServer.get(server);
    if (!h) this.byServer.set(server, (h = this.duration.with(server)));
    h.observe(seconds);
  }
}
