import type { Approvals } from '../approvals/approvals.js';
import type { Counters } from '../accounting/counters/spec.js';
import type { PriceTable } from '../accounting/prices.js';
import type { UsageWriter } from '../accounting/usage-writer.js';
import type { Usage } from '../providers/spec.js';
import type { KeyHasher } from '../security/keys.js';
import type { GenerationCache, Snapshot } from '../storage/snapshot.js';
import type { Store } from '../storage/store.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { DEFAULT_PII_SCAN_BYTES } from '../policy/pii/scan-budget.js';
import type { Admission, DataPlaneDeps, Plan } from './admission.js';
import { DEFAULT_ANTHROPIC_BETAS } from './anthropic-betas.js';
import { type Outcome, toUsageRecord } from './outcome.js';
import type { RequestContext } from './request-context.js';
import type { Router } from './router.js';
import { MemoryRunningSteps, type RunningSteps } from './running-steps.js';

/** Everything the /v1 routes use, and the three things every request ends with: settle, release, record. */
export class DataPlane implements DataPlaneDeps {
  constructor(
    readonly snapshot: Snapshot,
    readonly router: Router,
    readonly prices: PriceTable,
    readonly counters: Counters,
    readonly hasher: KeyHasher,
    readonly usage: UsageWriter,
    readonly telemetry: Telemetry,
    /** Stored Responses API responses (previous_response_id, GET /v1/responses/{id}). */
    readonly responses: Pick<Store, 'putResponse' | 'getResponse' | 'deleteResponse' | 'reachable'>,
    anthropicBetas: readonly string[] = DEFAULT_ANTHROPIC_BETAS,
  ) {
    this.plans = snapshot.cache(10_000);
    this.anthropicBetas = new Set(anthropicBetas);
  }

  /** The `anthropic-beta` values passed on (`anthropic_betas` in the server config). */
  readonly anthropicBetas: ReadonlySet<string>;

  readonly plans: GenerationCache<Plan>;

  /** Holds calls an `approve` rule names until a person decides them (set at start); null: such calls are refused. */
  approvals: Approvals | null = null;

  /** Steps admitted and not yet recorded (GET /traces/{trace_id} lists them as running); shared through Redis when set at start. */
  running: RunningSteps = new MemoryRunningSteps();

  /** limits.pii_scan_bytes of the server config (set at start). */
  piiScanBytes = DEFAULT_PII_SCAN_BYTES;

  /** Replaces the budget hold by the real cost and corrects the minute's token count. */
  async settle(a: Admission, ctx: RequestContext, cost: number, usage: Usage): Promise<void> {
    const jobs: Array<Promise<unknown>> = [];
    if (a.reservationId) jobs.push(this.counters.settle(a.reservationId, cost));
    if (ctx.policy?.tpm != null) jobs.push(this.counters.addTokens(ctx.agent.id, usage.prompt_tokens + usage.completion_tokens - a.tpmTokens));
    if (jobs.length) await Promise.all(jobs).catch((err) => this.telemetry.counterError(err));
  }

  async release(a: Admission): Promise<void> {
    if (a.reservationId) await this.counters.release(a.reservationId).catch((err) => this.telemetry.counterError(err));
  }

  /**
   * Records the step. Resolves once its usage row is in the journal's file (at the end of this event-loop turn): a
   * handler writes the answer's last bytes after that, so a crash after them loses no billed row.
   */
  record(ctx: RequestContext, outcome: Outcome): Promise<void> {
    const rec = toUsageRecord(ctx, outcome);
    this.running.end(rec);
    const journaled = this.usage.add(rec);
    this.telemetry.requestFinished(rec, ctx);
    return journaled;
  }
}
