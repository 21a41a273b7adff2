// The hold point every dialect shares: a call the model proposed, decided by the request's tool rules (CONTRACT: "Tool
// rules and approvals"), and the record of each decision that goes on the step's trace.
import { type ProposedToolCall, type ToolDecision, type ToolRules, toolRulesOf, withoutApprovals } from '../../policy/tool-rules.js';
import { countToolDecision } from '../../telemetry/metrics.js';
import type { RequestContext } from '../request-context.js';

/** A decided call as the step's trace lists it (CONTRACT: Traces and usage). */
export interface ToolCallRecord {
  id: string;
  name: string;
  decision: 'allowed' | 'denied';
  rule: { policy_id: string; index: number } | null;
  reason: string | null;
  approval_id: null;
  wait_ms: number;
}

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

/** A call whose input is one string (a custom tool): the rules read that string. */
export function stringCallView(name: string, input: string): ProposedToolCall {
  return { name, input, text: input };
}

/**
 * Decides the calls of one answer and keeps their records. The hold is a promise so that a decision can wait (for a
 * person, once approvals exist); today every decision is immediate, and `approve` is refused as approvals are not enabled.
 */
export class ToolGate {
  readonly records: ToolCallRecord[] = [];

  constructor(
    readonly rules: ToolRules,
    private readonly counted: (decision: 'allowed' | 'denied') => void = () => {},
  ) {}

  /** Decides one call; resolves with `allow` or `deny` (an `approve` is a deny until approvals exist). */
  decide(id: string, call: ProposedToolCall): Promise<ToolDecision> {
    const started = performance.now();
    const d = withoutApprovals(this.rules.decide(call));
    const record = toolCallRecord(id, call.name, d, Math.round((performance.now() - started) * 1000) / 1000);
    this.records.push(record);
    this.counted(record.decision);
    return Promise.resolve(d);
  }
}

/** The gate of a request whose policies have tool rules; null otherwise (nothing is held, edited or recorded). */
export function toolGateOf(ctx: RequestContext): ToolGate | null {
  const rules = ctx.policy ? toolRulesOf(ctx.policy) : null;
  return rules === null ? null : new ToolGate(rules, countToolDecision);
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
