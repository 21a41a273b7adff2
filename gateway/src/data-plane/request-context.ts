import type { PiiType } from '../contract/index.js';
import type { EffectivePolicy } from '../policy/effective-policy.js';
import type { Endpoint } from '../policy/policy-view.js';
import type { StoredAgent } from '../storage/store.js';
import type { TargetHealth } from './route-health.js';

/** What the data plane knows about one request as it moves through the checks. */
export interface RequestContext {
  requestId: string;
  traceId: string;
  /** True when the client named the trace (header), false for a trace of one. */
  traceFromClient: boolean;
  startedAt: number;
  startedAtIso: string;
  agent: StoredAgent;
  headerPolicyId: string | undefined;
  policy?: EffectivePolicy;
  model: string | null;
  /** The model the client named (an alias included), as its request spelled it; recorded beside the target that answered. */
  requestedModel?: string;
  provider: string | null;
  stream: boolean;
  operation: 'chat' | 'embeddings';
  /** The API the client spoke, recorded on the trace step. */
  endpoint: Endpoint;
  /** The error body shape the client reads: OpenAI's, Anthropic's on /v1/messages, Google's on the Gemini routes. */
  errorDialect: 'openai' | 'anthropic' | 'gemini';
  piiTypes: PiiType[];
  /** Redacted body kept for the trace when a policy opted in with the capture_bodies label. */
  capturedBody?: string;
  /** Tokens admission counted for the request, charged against a target's own tpm when it is tried. */
  routeTokens?: number;
  /** The target a stream is relayed from: counted in flight until the request ends (see V1Server.dispatch). */
  heldTarget?: TargetHealth;
  /** What the request sent to the target that served it lacks of the client's (fallback across families); recorded on the step. */
  cleaned?: string[];
}

/** The request ended: the target its stream came from has one request fewer in flight. */
export function releaseHeldTarget(ctx: RequestContext): void {
  const h = ctx.heldTarget;
  if (h !== undefined) {
    ctx.heldTarget = undefined;
    h.inFlight--;
  }
}

/** What a request's context starts with; the rest is set along the way (see requestContext). */
export type RequestContextStart = Omit<RequestContext, 'policy' | 'requestedModel' | 'capturedBody' | 'routeTokens' | 'heldTarget' | 'cleaned'>;

/**
 * A request's context with every member present from the start, in one order: the code that reads contexts sees one
 * object shape whatever the dialect or path (members added later, in different orders, would make several).
 */
export function requestContext(c: RequestContextStart): RequestContext {
  return {
    requestId: c.requestId,
    traceId: c.traceId,
    traceFromClient: c.traceFromClient,
    startedAt: c.startedAt,
    startedAtIso: c.startedAtIso,
    agent: c.agent,
    headerPolicyId: c.headerPolicyId,
    model: c.model,
    provider: c.provider,
    stream: c.stream,
    operation: c.operation,
    endpoint: c.endpoint,
    errorDialect: c.errorDialect,
    piiTypes: c.piiTypes,
    policy: undefined,
    requestedModel: undefined,
    capturedBody: undefined,
    routeTokens: undefined,
    heldTarget: undefined,
    cleaned: undefined,
  };
}
