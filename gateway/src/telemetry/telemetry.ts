import type { RequestContext } from '../gateway/request-context.js';
import type { UsageRecord } from '../storage/store.js';
import { Metrics } from './metrics.js';
import { GenAiSpans } from './otel.js';

/** Where every finished request goes besides the usage store: Prometheus metrics, and OpenTelemetry spans when configured. */
export class Telemetry {
  readonly metrics = new Metrics();
  private readonly spans: GenAiSpans | undefined;

  constructor(
    version: string,
    env: NodeJS.ProcessEnv,
    private readonly log?: { warn: (obj: object, msg: string) => void },
  ) {
    // No endpoint, no exporter: spans cost nothing when OpenTelemetry is not configured.
    const configured = env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    this.spans = configured ? new GenAiSpans(env, version) : undefined;
  }

  requestFinished(r: UsageRecord, ctx: RequestContext): void {
    this.metrics.observe(r);
    this.spans?.record(r, ctx.operation, ctx.model);
  }

  counterError(err: unknown): void {
    this.log?.warn({ err }, 'budget counter operation failed');
  }

  async close(): Promise<void> {
    await this.spans?.close();
  }
}
