import type { PiiType } from '../contract/index.js';
import type { EffectivePolicy } from '../policy/effective-policy.js';
import type { StoredAgent } from '../storage/store.js';

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
  provider: string | null;
  stream: boolean;
  operation: 'chat' | 'embeddings';
  piiTypes: PiiType[];
  /** Redacted body kept for the trace when a policy opted in with the capture_bodies label. */
  capturedBody?: string;
}
