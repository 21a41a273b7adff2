// The hold point every dialect shares: a call the model proposed, decided by the request's tool rules (CONTRACT: "Tool
// rules and approvals"), and the record of each decision that goes on the step's trace.
import type { Approval } from '../../contract/index.js';
import { argumentsAsWritten, callHash } from '../../approvals/call-hash.js';
import { type Approvals, type HoldSignal, NODE_STOPPED } from '../../approvals/approvals.js';
import { redactToolResult } from '../../policy/tool-result-pii.js';
import { type ProposedToolCall, type ToolDecision, type ToolRules, toolRulesOf, withoutApprovals } from '../../policy/tool-rules.js';
import { stoppedTraceKey } from '../../storage/snapshot.js';
import { countToolDecision } from '../../telemetry/metrics.js';
import type { RequestContext } from '../request-context.js';

/** A decided call as the step's trace lists it (CONTRACT: Traces and usage). */
export interface ToolCallRecord {
  id: string;
  name: string;
  decision: ToolCallDecision;
  rule: { policy_id: string; index: number } | null;
  reason: string | null;
  approval_id: string | null;
  wait_ms: number;
}
export type ToolCallDecision = 'allowed' | 'denied' | 'approved' | 'rejected' | 'timed_out' | 'abandoned';

/** The trace record of one decided call: a model's proposed call (held by a ToolGate) or a tools/call on /mcp. */
export function toolCallRecord(id: string, name: string, d: ToolDecision, waitMs: number): ToolCallRecord {
  return {
    id,
    name,
    decision: d.action === 'allow' ? 'allowed' : 'denied',
    rule: d.policyId !== null && d.rule !== null ? { policy_id: d.policyId, index: d.rule } : null,
    reason: d.reason,
    approval_id: null,
    wait_ms: waitMs,
  };
}

/** How a held call ended, as the trace names it. */
const HELD_DECISION: Record<Exclude<Approval['status'], 'pending'>, ToolCallDecision> = {
  approved: 'approved',
  denied: 'rejected',
  timed_out: 'timed_out',
  abandoned: 'abandoned',
};

/** The decision a held call ends with: approved passes as proposed; anything else is refused, naming the approval. */
export function heldOutcome(d: ToolDecision, a: Approval, timeoutS: number): ToolDecision {
  if (a.status === 'approved') return { ...d, action: 'allow' };
  const why =
    a.status === 'denied'
      ? `denied by ${a.decided_by ?? 'a person'} (approval ${a.id})${a.comment ? `: ${a.comment}` : ''}`
      : a.status === 'timed_out'
        ? `not approved within ${timeoutS} s (approval ${a.id} timed out; approving it now lets the same call pass once in this trace)`
        : a.comment === NODE_STOPPED
          ? `the gateway node stopped while approval ${a.id} was pending (send the request again to ask anew)`
          : `the client left while approval ${a.id} was pending`;
  return { ...d, action: 'deny', reason: why };
}

/** The arguments of a held call as the policy's PII rules would forward them (tool arguments count as `user`). */
export function approvalArguments(ctx: RequestContext, call: ProposedToolCall): unknown {
  const value = argumentsAsWritten(call);
  if (!ctx.policy) return value;
  return redactToolResult(ctx.policy.policies, { arguments: value }).result.arguments;
}

/** A call whose input is one string (a custom tool): the rules read that string. */
export function stringCallView(name: string, input: string): ProposedToolCall {
  return { name, input, text: input };
}

/**
 * Decides the calls of one answer and keeps their records. The hold is a promise so that a decision can wait: a call an
 * `approve` rule holds waits for a person (with keep-alives while it does), or is refused when approvals are off.
 */
export class ToolGate {
  readonly records: ToolCallRecord[] = [];
  /** Written to the client every keep-alive interval while a call waits (an SSE comment, a ping, a space); set by the dialect. */
  keepAlive: (() => void) | null = null;
  /** Runs when the first call starts waiting (a non-streamed answer sends its status and headers there). */
  onHoldStart: (() => void) | null = null;
  /** Runs once, before the first wait (the dialect settles a finished upstream answer there, so no budget waits on a person). */
  beforeWait: (() => Promise<void>) | null = null;
  /** The client leaving abandons a held call. */
  signal: HoldSignal | undefined;
  private waiting = 0;
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    readonly rules: ToolRules,
    private readonly counted: (decision: ToolCallDecision) => void = () => {},
    private readonly approvals: Approvals | null = null,
    private readonly ctx: RequestContext | null = null,
  ) {}

  /** Decides one call; resolves with `allow` or `deny` once any hold ended. */
  decide(id: string, call: ProposedToolCall): Promise<ToolDecision> {
    const started = performance.now();
    const d = this.rules.decide(call);
    if (d.action === 'approve' && this.approvals !== null && this.ctx !== null) return this.hold(id, call, d, started, this.approvals, this.ctx);
    return Promise.resolve(this.decided(id, call.name, withoutApprovals(d), started, null));
  }

  private decided(id: string, name: string, d: ToolDecision, started: number, held: { decision: ToolCallDecision; approvalId: string } | null): ToolDecision {
    const record = toolCallRecord(id, name, d, Math.round((performance.now() - started) * 1000) / 1000);
    if (held) {
      record.decision = held.decision;
      record.approval_id = held.approvalId;
    }
    this.records.push(record);
    this.counted(record.decision);
    return d;
  }

  private async hold(id: string, call: ProposedToolCall, d: ToolDecision, started: number, approvals: Approvals, ctx: RequestContext): Promise<ToolDecision> {
    const hash = callHash(call);
    // Approved after its timeout: the same call of the same agent passes once in the same trace.
    const granted = await approvals.takeGrant(ctx.agent.tenant_id, ctx.agent.id, ctx.traceId, hash);
    if (granted !== null) return this.decided(id, call.name, { ...d, action: 'allow' }, started, { decision: 'approved', approvalId: granted });
    this.startWaiting();
    // The answer's cost is settled before the wait and its usage row written after it: meanwhile the trace's spend stays
    // in the counters' memory, or a request of the same trace after AGENTGW_TRACE_IDLE_SECONDS would read it back from
    // the usage rows without this step's cost (and pass max_cost_per_trace).
    const letGo = ctx.traceFromClient ? approvals.keepTrace(stoppedTraceKey(ctx.agent.tenant_id, ctx.traceId)) : () => undefined;
    try {
      if (this.beforeWait) {
        const settle = this.beforeWait;
        this.beforeWait = null;
        await settle();
      }
      let approval: Approval;
      try {
        approval = await approvals.hold(
          {
            tenant_id: ctx.agent.tenant_id,
            agent_id: ctx.agent.id,
            trace_id: ctx.traceId,
            request_id: ctx.requestId,
            tool: call.name,
            arguments: approvalArguments(ctx, call),
            call_hash: hash,
            rule: d.policyId !== null && d.rule !== null ? { policy_id: d.policyId, index: d.rule } : null,
            reason: d.reason,
          },
          this.signal,
        );
      } catch {
        // The approval could not be written: nobody could approve it, so the call is refused (fail closed).
        return this.decided(id, call.name, { ...d, action: 'deny', reason: 'needs approval, and the approval could not be recorded' }, started, null);
      }
      const outcome = heldOutcome(d, approval, approvals.timeoutS);
      return this.decided(id, call.name, outcome, started, { decision: HELD_DECISION[approval.status as Exclude<Approval['status'], 'pending'>] ?? 'rejected', approvalId: approval.id });
    } finally {
      letGo();
      this.stopWaiting();
    }
  }

  private startWaiting(): void {
    if (this.waiting++ > 0) return;
    this.onHoldStart?.();
    if (!this.keepAlive || !this.approvals) return;
    const tick = this.keepAlive;
    this.ticker = setInterval(tick, this.approvals.keepAliveMs);
  }

  private stopWaiting(): void {
    if (--this.waiting > 0) return;
    clearInterval(this.ticker);
    this.ticker = undefined;
  }
}

/** The gate of a request whose policies have tool rules; null otherwise (nothing is held, edited or recorded). */
export function toolGateOf(ctx: RequestContext, approvals: Approvals | null = null): ToolGate | null {
  const rules = ctx.policy ? toolRulesOf(ctx.policy) : null;
  return rules === null ? null : new ToolGate(rules, countToolDecision, approvals, ctx);
}

/** Splits a run of complete SSE frames into frames (each with its closing blank line). */
export function sseFrames(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let at = text.indexOf('\n\n'); at !== -1; at = text.indexOf('\n\n', start)) {
    out.push(text.slice(start, at + 2));
    start = at + 2;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/**
 * The JSON of a frame's data, or undefined (a comment, `[DONE]`, or not JSON). Every `data:` line counts, joined with
 * line breaks as an SSE client joins them: a frame that spreads its JSON over several lines is read as the client reads it.
 */
export function frameData(frame: string): Record<string, unknown> | undefined {
  let text = '';
  let lines = 0;
  for (const line of frame.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const value = line.charCodeAt(5) === 0x20 ? line.slice(6) : line.slice(5);
    text = lines++ === 0 ? value : `${text}\n${value}`;
  }
  text = text.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** A frame with its data replaced, keeping its `event:` line when it had one. */
export function withData(frame: string, data: unknown): string {
  const event = frame.startsWith('event:') ? frame.slice(0, frame.indexOf('\n') + 1) : '';
  return `${event}data: ${JSON.stringify(data)}\n\n`;
}
