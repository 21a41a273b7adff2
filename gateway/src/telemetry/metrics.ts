import { Registry, collectDefaultMetrics } from 'prom-client';
import type { UsageRecord } from '../storage/store.js';
import { type CounterSeries, CounterFamily, HistogramFamily, type HistogramSeries } from './series.js';

/** How a tool call was decided (CONTRACT: the `decision` of a step's `tool_calls`). */
export type ToolCallDecision = 'allowed' | 'denied' | 'approved' | 'rejected' | 'timed_out' | 'abandoned';

/**
 * agentgw_tool_calls_total{decision}: the tool calls tool rules decided (proposed in a model's answer, or made on /mcp).
 * One family for the process, listed by every registry: the dialects and /mcp count where they decide, with no handle.
 */
const toolCalls = new CounterFamily('agentgw_tool_calls_total', 'Tool calls decided by tool rules (proposed by a model, or made on /mcp), by decision.', ['decision'], new Registry());
const toolCallSeries = new Map<string, CounterSeries>();

/** Counts one decided tool call. */
export function countToolDecision(decision: ToolCallDecision): void {
  let s = toolCallSeries.get(decision);
  if (!s) toolCallSeries.set(decision, (s = toolCalls.with(decision)));
  s.inc();
}

const BUDGET_CODES = new Set(['daily_budget_exceeded', 'monthly_budget_exceeded', 'trace_budget_exceeded']);

/** Prometheus metrics of the data plane, served at GET /metrics. */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new CounterFamily('agentgw_requests_total', 'Data-plane requests by outcome.', ['status', 'code', 'provider', 'stream'], this.registry);
  private readonly latency = new HistogramFamily(
    'agentgw_request_duration_seconds',
    'Time from request to the last byte of the response.',
    ['provider'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    this.registry,
  );
  private readonly ttft = new HistogramFamily(
    'agentgw_time_to_first_token_seconds',
    'Time from request to the first streamed chunk.',
    ['provider'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    this.registry,
  );
  private readonly tokens = new CounterFamily('agentgw_tokens_total', 'Tokens processed, by kind.', ['kind', 'provider'], this.registry);
  private readonly cost = new CounterFamily('agentgw_cost_usd_total', 'Spend in USD.', ['provider'], this.registry);
  private readonly budgetBlocks = new CounterFamily('agentgw_budget_blocks_total', 'Requests refused by a budget.', ['code'], this.registry);
  private readonly upstreamErrors = new CounterFamily('agentgw_upstream_errors_total', 'Failed upstream calls, by provider and code.', ['provider', 'code'], this.registry);

  constructor() {
    this.registry.registerMetric(toolCalls as never);
    collectDefaultMetrics({ register: this.registry, prefix: 'agentgw_process_' });
  }

  /** Series by provider (and by outcome), looked up once each. */
  private readonly byProvider = new Map<string, ProviderSeries>();
  private readonly byOutcome = new Map<string, CounterSeries>();

  observe(r: UsageRecord): void {
    const provider = r.provider ?? 'none';
    let pm = this.byProvider.get(provider);
    if (!pm) {
      pm = {
        latency: this.latency.with(provider),
        ttft: this.ttft.with(provider),
        prompt: this.tokens.with('prompt', provider),
        completion: this.tokens.with('completion', provider),
        cost: this.cost.with(provider),
      };
      this.byProvider.set(provider, pm);
    }
    const code = r.error_code ?? 'none';
    const outcomeKey = `${r.status}|${code}|${provider}|${r.stream ? 1 : 0}`;
    let requests = this.byOutcome.get(outcomeKey);
    if (!requests) {
      requests = this.requests.with(r.status, code, provider, r.stream ? 'true' : 'false');
      this.byOutcome.set(outcomeKey, requests);
    }
    requests.inc();
    pm.latency.observe(r.latency_ms / 1000);
    if (r.ttft_ms !== null) pm.ttft.observe(r.ttft_ms / 1000);
    if (r.prompt_tokens) pm.prompt.inc(r.prompt_tokens);
    if (r.completion_tokens) pm.completion.inc(r.completion_tokens);
    if (r.cost) pm.cost.inc(r.cost);
    if (r.error_code && BUDGET_CODES.has(r.error_code)) this.budgetBlocks.with(r.error_code).inc();
    if (r.error_code?.startsWith('upstream_')) this.upstreamErrors.with(provider, r.error_code).inc();
  }
}

interface ProviderSeries {
  latency: HistogramSeries;
  ttft: HistogramSeries;
  prompt: CounterSeries;
  completion: CounterSeries;
  cost: CounterSeries;
}
