import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { UsageRecord } from '../storage/store.js';

const BUDGET_CODES = new Set(['daily_budget_exceeded', 'monthly_budget_exceeded', 'trace_budget_exceeded']);

/** Prometheus metrics of the data plane, served at GET /metrics. */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'agentgw_requests_total',
    help: 'Data-plane requests by outcome.',
    labelNames: ['status', 'code', 'provider', 'stream'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'agentgw_request_duration_seconds',
    help: 'Time from request to the last byte of the response.',
    labelNames: ['provider'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly ttft = new Histogram({
    name: 'agentgw_time_to_first_token_seconds',
    help: 'Time from request to the first streamed chunk.',
    labelNames: ['provider'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  private readonly tokens = new Counter({
    name: 'agentgw_tokens_total',
    help: 'Tokens processed, by kind.',
    labelNames: ['kind', 'provider'] as const,
    registers: [this.registry],
  });
  private readonly cost = new Counter({
    name: 'agentgw_cost_usd_total',
    help: 'Spend in USD.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });
  private readonly budgetBlocks = new Counter({
    name: 'agentgw_budget_blocks_total',
    help: 'Requests refused by a budget.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  private readonly upstreamErrors = new Counter({
    name: 'agentgw_upstream_errors_total',
    help: 'Failed upstream calls, by provider and code.',
    labelNames: ['provider', 'code'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'agentgw_process_' });
  }

  /** Label children by provider (and outcome), resolved once: prom-client hashes the labels on every plain call. */
  private readonly byProvider = new Map<string, ProviderMetrics>();
  private readonly byOutcome = new Map<string, ReturnType<Counter<string>['labels']>>();

  observe(r: UsageRecord): void {
    const provider = r.provider ?? 'none';
    let pm = this.byProvider.get(provider);
    if (!pm) {
      pm = {
        latency: this.latency.labels(provider),
        ttft: this.ttft.labels(provider),
        prompt: this.tokens.labels('prompt', provider),
        completion: this.tokens.labels('completion', provider),
        cost: this.cost.labels(provider),
      };
      this.byProvider.set(provider, pm);
    }
    const code = r.error_code ?? 'none';
    const outcomeKey = `${r.status}|${code}|${provider}|${r.stream ? 1 : 0}`;
    let requests = this.byOutcome.get(outcomeKey);
    if (!requests) {
      requests = this.requests.labels(r.status, code, provider, r.stream ? 'true' : 'false');
      this.byOutcome.set(outcomeKey, requests);
    }
    requests.inc();
    pm.latency.observe(r.latency_ms / 1000);
    if (r.ttft_ms !== null) pm.ttft.observe(r.ttft_ms / 1000);
    if (r.prompt_tokens) pm.prompt.inc(r.prompt_tokens);
    if (r.completion_tokens) pm.completion.inc(r.completion_tokens);
    if (r.cost) pm.cost.inc(r.cost);
    if (r.error_code && BUDGET_CODES.has(r.error_code)) this.budgetBlocks.inc({ code: r.error_code });
    if (r.error_code?.startsWith('upstream_')) this.upstreamErrors.inc({ provider, code: r.error_code });
  }
}

interface ProviderMetrics {
  latency: ReturnType<Histogram<string>['labels']>;
  ttft: ReturnType<Histogram<string>['labels']>;
  prompt: ReturnType<Counter<string>['labels']>;
  completion: ReturnType<Counter<string>['labels']>;
  cost: ReturnType<Counter<string>['labels']>;
}
