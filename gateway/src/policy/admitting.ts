// One request on its way through the checks table: what the checks read, and what they leave for the upstream call.
import type { Counters } from '../accounting/counters/spec.js';
import type { ModelPrice } from '../accounting/prices.js';
import type { PiiType } from '../contract/index.js';
import type { EffectivePolicy } from './effective-policy.js';
import type { PolicyView } from './policy-view.js';
import type { ToolDecision } from './tool-rules.js';

/** A target the request may go to, with its price (undefined: not in the price table). */
export interface PricedModel {
  /** `provider/model` */
  id: string;
  price: ModelPrice | undefined;
}

export interface Admitting {
  readonly view: PolicyView;
  /** The body to forward; PII redaction and a clamped output limit replace it with an edited copy. */
  body: Record<string, unknown>;
  /** The model as the client named it. */
  readonly model: string;
  readonly eff: EffectivePolicy;
  /** The targets every policy allows, in fallback order. */
  readonly targets: readonly PricedModel[];
  /** The policy that refuses the model when no target is allowed. */
  readonly blockingPolicy: string;
  readonly agentId: string;
  /** The request's id: names its budget reservation, so its usage row and its settle can be matched after a crash. */
  readonly requestId?: string;
  /** The trace charged for the request (tenant-qualified), or null for a trace of one. */
  readonly traceKey: string | null;
  /** Traces an operator stopped, by the same key as traceKey (the snapshot's); absent: none. */
  readonly stoppedTraces?: ReadonlySet<string>;
  /** Where repeats of the request are counted: its trace, or the agent when it names none. */
  readonly repeatScope: string;
  readonly now: Date;
  readonly counters: Counters;
  /** The usage journal is at its cap (the database is not taking rows): spend that a budget needs cannot be recorded. */
  readonly usageFull: boolean;
  /** The UTF-8 bytes of text the PII rules may read (limits.pii_scan_bytes); absent: its default. */
  readonly piiScanBytes?: number;

  /** PII types found in the request (recorded in the trace even when the request is refused). */
  piiTypes: PiiType[];
  /** Prompt-token bound, worked out by the first check that needs it. */
  promptUpper: number | null;
  /** Tokens counted against tpm, corrected once the real usage is known. */
  tpmTokens: number;
  /** Worst-case cost over the targets, worked out by the first check that needs it (reset when the body changes). */
  worst: number | null;
  /** The output limit after rules.clamp_output lowered it; null when it was not lowered. */
  clampedMaxTokens: number | null;
  reservationId: string | null;
  /** How the tool rules decided an MCP tool call; absent when no policy has tool rules. */
  toolDecision?: ToolDecision;
}

/** One policy check: throws the CONTRACT error that refuses the request, or returns to let the next check run. */
export interface Check {
  readonly name: string;
  run(a: Admitting): void | Promise<void>;
}
