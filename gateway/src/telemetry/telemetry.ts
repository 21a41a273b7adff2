import type { UsageRecord } from '../storage/store.js';
import { Metrics } from './metrics.js';
import type { GenAiSpans, ToolCallInfo } from './otel.js';

/** Where every finished request goes besides the usage store: Prometheus metrics, and OpenTelemetry spans when configured. */
export class Telemetry {
  readonly metrics = new Metrics();

  private constructor(
    private readonly spans: GenAiSpans | undefined,
    private readonly log?: { warn: (obj: object, msg: string) => void },
  ) {}

  /** OpenTelemetry is loaded only when an endpoint is configured: no memory and no cost otherwise. */
  static async create(version: string, env: NodeJS.ProcessEnv, log?: { warn: (obj: object, msg: string) => void }): Promise<Telemetry> {
    const configured = env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    const spans = configured ? new (await import('./otel.js')).GenAiSpans(env, version) : undefined;
    return new Telemetry(spans, log);
  }

  /** `request`: what the client asked for (the operation, and the model as it named it). */
  requestFinished(r: UsageRecord, request: { operation: 'chat' | 'embeddings'; model: string | null }): void {
    this.metrics.observe(r);
    this.spans?.record(r, request.operation, request.model);
  }

  /** An MCP tool call through /mcp: the data-plane series, and an `execute_tool` span (GenAI semantic conventions). */
  toolCallFinished(r: UsageRecord, call: ToolCallInfo): void {
    this.metrics.observe(r);
    this.spans?.recordToolCall(r, call);
  }

  counterError(err: unknown): void {
    this.log?.warn({ err }, 'budget counter operation failed');
  }

  async close(): Promise<void> {
    await this.spans?.close();
  }
}
