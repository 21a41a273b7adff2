// One tools/call through /mcp: the checks table with the tool-call view (CONTRACT's decision order), the upstream call,
// PII redaction of the result, the budget settled, and a trace step with endpoint mcp and the tool.
import type { ProgressCallback } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolRequest, CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { PiiType } from '../contract/index.js';
import { AgentgwError } from '../contract/index.js';
import type { DataPlane } from '../data-plane/data-plane.js';
import type { Outcome } from '../data-plane/outcome.js';
import { toUsageRecord } from '../data-plane/outcome.js';
import { type ToolCallRecord, ToolGate, toolCallRecord } from '../data-plane/tool-calls/gate.js';
import { type RequestContext, requestContext } from '../data-plane/request-context.js';
import { toAgentgwError } from '../http/error-handler.js';
import { newRequestId } from '../http/request-id.js';
import type { Admitting } from '../policy/admitting.js';
import { currentAgent } from '../policy/auth.js';
import { TOOL_CHECKS, TOOL_ROUND_CHECKS } from '../policy/checks.js';
import type { EffectivePolicy } from '../policy/effective-policy.js';
import { redactRequestPii, EVERY_PART } from '../policy/pii/index.js';
import { PII_TYPES } from '../contract/index.js';
import { perCallPrice, toolCallArguments, toolCallBody, toolCallView } from '../policy/tool-call-view.js';
import { redactToolResult } from '../policy/tool-result-pii.js';
import { type ToolDecision, proposedToolCall, refusalSentence } from '../policy/tool-rules.js';
import { traceStoppedError } from '../policy/trace-stop.js';
import { stoppedTraceKey } from '../storage/snapshot.js';
import { countToolDecision } from '../telemetry/metrics.js';
import type { StoredAgent } from '../storage/store.js';
import type { McpMetrics } from './mcp-metrics.js';
import { namingOf, policyToolName } from './names.js';
import { refusedCall, unknownName } from './refusal.js';
import type { ToolPins } from './tool-pins.js';
import type { Upstream } from './upstream.js';
import type { Upstreams } from './upstreams.js';
import { type RoundBinding, RoundRefused, argumentsDigest, completeAnswer, inputRequiredAnswer, isInputRequired, retryParams } from './input-rounds.js';
import { type ModernCall, type ModernChannel, type ModernNotification, MODERN_REVISION } from './modern-upstream.js';

/** Who sent one /mcp request, as its HTTP request said: the agent, X-Agent-Policy, and the trace it belongs to. */
export interface McpCaller {
  agent: StoredAgent;
  headerPolicyId: string | undefined;
  /** X-Agent-Trace-Id (or x-gateway-trace-id, or an agent client's session header), else the MCP session id. */
  traceId: string;
  sessionId: string;
  /** The one server the endpoint serves (/mcp/<server>: its own names and URIs), else undefined (/mcp). */
  scope?: string;
  /**
   * A request of the 2026-07-28 revision (stateless /mcp): what goes upstream with it when the server serves that
   * revision too, and where the notifications of its answer go besides progress (log messages).
   */
  modern?: ModernCall & { relay?(n: ModernNotification, server: string): void };
}

export interface ToolCallDeps {
  dp: DataPlane;
  upstreams: Upstreams;
  metrics: McpMetrics;
  /** MCP tool pinning: a changed (or, with pin strict, unaccepted) tool is refused with tool_changed. */
  pins: ToolPins;
  /** The effective policy of the caller (the agent's and X-Agent-Policy's), cached per snapshot generation. */
  effective(agent: StoredAgent, headerPolicyId: string | undefined): EffectivePolicy;
}

/** A captured body keeps at most this much (as /v1 does). */
const CAPTURE_LIMIT = 64 * 1024;

/** An upstream JSON-RPC error, as the step records it: bad arguments are the caller's, anything else the upstream's. */
function answerError(e: McpError): AgentgwError {
  return e.code === ErrorCode.InvalidParams || e.code === ErrorCode.MethodNotFound
    ? new AgentgwError('validation_failed', 'The MCP server refused the call as invalid: fix the tool name or arguments.', { param: 'arguments' })
    : new AgentgwError('upstream_bad_response', 'The MCP server answered the call with an error.');
}

export async function callTool(
  deps: ToolCallDeps,
  caller: McpCaller,
  params: CallToolRequest['params'],
  signal?: AbortSignal,
  onprogress?: ProgressCallback,
): Promise<CallToolResult> {
  const { dp } = deps;
  const naming = namingOf(caller.scope);
  const split = naming.splitName(params.name);
  const upstream = split ? deps.upstreams.get(split.server) : undefined;
  // An unknown name is the agent's text: recorded, but at most 256 characters of it.
  const serverTool = split && upstream ? policyToolName(split.server, split.name) : params.name.slice(0, 256);
  const ctx = requestContext({
    requestId: newRequestId(),
    traceId: caller.traceId,
    traceFromClient: true,
    startedAt: performance.now(),
    startedAtIso: new Date().toISOString(),
    agent: caller.agent,
    headerPolicyId: caller.headerPolicyId,
    model: null,
    provider: upstream?.name ?? null,
    stream: false,
    operation: 'chat',
    endpoint: 'mcp',
    errorDialect: 'openai',
    piiTypes: [],
  });
  const step: Step = { deps, ctx, caller, tool: serverTool, server: upstream?.name ?? 'unknown', metricTool: 'unknown', federated: params.name };
  try {
    // The agent as this snapshot knows it: suspended meanwhile is refused and recorded as a blocked step of its trace;
    // a key rotated or deleted meanwhile is refused like a revoked key, not recorded.
    ctx.agent = currentAgent(caller.agent, dp.snapshot);
  } catch (e) {
    const err = toAgentgwError(e);
    if (err.code === 'agent_suspended') await record(step, { httpStatus: err.status, error: err });
    return refusedCall(err);
  }
  let a: Admitting | undefined;
  let settled = false;
  /** Set once the call went upstream: a JSON-RPC error after that is the upstream's answer, before it ours. */
  let sent = false;
  try {
    if (dp.snapshot.isTraceStopped(ctx.agent.tenant_id, ctx.traceId)) throw traceStoppedError(ctx.traceId);
    if (!split || !upstream) throw unknownName('tool', params.name);
    // A client of the 2026-07-28 revision reaches a server that serves it over it: its list may hold tools only that
    // revision has, and its answers may ask the client for input (input_required).
    // Body validation: the tool must exist upstream (reading its list connects a server on first use).
    const { channel, tools: listed } = await upstream.toolsFor(caller.modern !== undefined);
    const tool = listed.find((t) => t.name === split.name);
    if (!tool) throw unknownName('tool', params.name);
    await deps.pins.ready();
    deps.pins.check(upstream.name, tool, listed);
    step.metricTool = split.name;
    const eff = deps.effective(ctx.agent, ctx.headerPolicyId);
    ctx.policy = eff;
    // A retried round's answers and state, read before any check: a state agentgw did not issue is refused here.
    const round: RoundBinding = { agentId: ctx.agent.id, server: upstream.name, method: 'tools/call', name: split.name, args: channel && caller.modern ? argumentsDigest(params.arguments) : '' };
    const retry = channel && caller.modern ? retryParams(dp.hasher, caller.modern, eff, round) : undefined;
    // A later round of a call is the same call: not a repeat, not another call of the trace, not approved again.
    const continues = retry?.continues === true;
    const price = upstream.priceOf(split.name);
    a = admitting(dp, ctx, eff, serverTool, params.arguments, price);
    try {
      for (const check of continues ? TOOL_ROUND_CHECKS : TOOL_CHECKS) await check.run(a);
    } finally {
      ctx.piiTypes = a.piiTypes;
      if (a.toolDecision && a.toolDecision.action !== 'approve') step.toolCalls = [decidedCall(ctx.requestId, serverTool, a.toolDecision)];
    }
    // A call an `approve` rule names waits for a person once every check passed (its arguments as PII rules left them).
    dp.running.begin(ctx, serverTool);
    if (a.toolDecision?.action === 'approve' && !continues) await holdForApproval(dp, ctx, step, serverTool, a.toolDecision, a.body, signal, onprogress);
    if (eff.captureBodies) ctx.capturedBody = capture(a.body);
    const args = toolCallArguments(a.body);
    sent = true;
    let upstreamResult: CallToolResult;
    if (channel && caller.modern) {
      const wire = upstream.modernDefinition(split.name) ?? tool;
      const answer = await modernCall(upstream, channel, caller.modern, retry?.params, split.name, args, wire.inputSchema, signal, onprogress);
      if (isInputRequired(answer)) {
        // A round that asks the client for input costs nothing: the call is charged once, when it completes.
        await release(dp, a);
        settled = true;
        await record(step, { httpStatus: 200, cost: 0 });
        return inputRequiredAnswer(dp.hasher, answer, eff, round) as CallToolResult;
      }
      upstreamResult = completeAnswer(CallToolResultSchema, answer, upstream.name);
    } else {
      upstreamResult = (await upstream.request(
        // With onprogress the SDK asks the upstream for progress under a token of its own and hands each notification back.
        (client, options) => client.request({ method: 'tools/call', params: { name: split.name, arguments: args } }, CallToolResultSchema, onprogress ? { ...options, onprogress } : options),
        signal,
      )) as CallToolResult;
    }
    const { result, found } = redactToolResult(eff.policies, naming.toolResult(upstream.name, upstreamResult));
    ctx.piiTypes = union(ctx.piiTypes, found);
    // A call costs its price, whatever the tool answered.
    await settle(dp, a, price);
    settled = true;
    await record(step, { httpStatus: 200, cost: price });
    return result;
  } catch (e) {
    if (a && !settled) await release(dp, a);
    if (e instanceof McpError) {
      // Unknown tools and the upstream's own JSON-RPC errors stay JSON-RPC errors (CONTRACT: unknown tool is -32602).
      // A retry refused by agentgw is recorded as its refusal; other errors before sending are an unknown tool.
      const err = e instanceof RoundRefused ? e.refusal : sent ? answerError(e) : unknownTool();
      await record(step, { httpStatus: err.status, error: err });
      throw e;
    }
    // The agent cancelled the call (notifications/cancelled): recorded as a client that left, answered to nobody.
    const err = signal?.aborted ? new AgentgwError('client_closed', 'The client cancelled the tool call before it was answered.') : toAgentgwError(e);
    await record(step, { httpStatus: err.status, error: err });
    return refusedCall(err);
  }
}

/**
 * The call over 2026-07-28: the client's envelope (capabilities, log level), its answers to an earlier input_required
 * round and that round's state (`retry`, as input-rounds.ts let them through); progress and log notifications of the
 * answer handed on as they come.
 */
async function modernCall(
  upstream: Upstream,
  channel: ModernChannel,
  m: NonNullable<McpCaller['modern']>,
  retry: Record<string, unknown> | undefined,
  tool: string,
  args: Record<string, unknown> | undefined,
  inputSchema: unknown,
  signal: AbortSignal | undefined,
  onprogress: ProgressCallback | undefined,
): Promise<Record<string, unknown>> {
  const progressToken = onprogress ? `agentgw-${newRequestId()}` : undefined;
  return upstream.modernRequest(channel, 'tools/call', {
    name: tool,
    arguments: args ?? {},
    ...retry,
    ...(progressToken ? { _meta: { progressToken } } : {}),
  }, m.envelope, {
    signal,
    inputSchema,
    onnotification: (n) => {
      if (n.method === 'notifications/progress') {
        if (progressToken !== undefined && n.params?.progressToken === progressToken && typeof n.params.progress === 'number') {
          const p = n.params as { progress: number; total?: number; message?: string };
          onprogress!({ progress: p.progress, ...(typeof p.total === 'number' ? { total: p.total } : {}), ...(typeof p.message === 'string' ? { message: p.message } : {}) });
        }
      } else m.relay?.(n, upstream.name);
    },
  });
}

/** Holds the call for a person (CONTRACT: approvals); refused with tool_denied, naming the approval, unless approved. */
async function holdForApproval(
  dp: DataPlane,
  ctx: RequestContext,
  step: Step,
  serverTool: string,
  d: ToolDecision,
  body: Record<string, unknown>,
  signal: AbortSignal | undefined,
  onprogress: ProgressCallback | undefined,
): Promise<void> {
  const gate = new ToolGate({ decide: () => d, deniesOutright: () => false }, countToolDecision, dp.approvals, ctx);
  gate.signal = signal;
  // A client that asked for progress hears of the wait (its SDK may reset its request timeout on each notice).
  let waited = 0;
  if (onprogress) gate.keepAlive = () => onprogress({ progress: ++waited, message: 'waiting for a person to approve the call' });
  const decided = await gate.decide(ctx.requestId, proposedToolCall(serverTool, String(body.arguments ?? '')));
  step.toolCalls = gate.records;
  if (decided.action !== 'allow') throw new AgentgwError('tool_denied', refusalSentence(serverTool, decided));
}

/** The step's record of how the tool rules decided the call (CONTRACT: MCP steps carry the same decision), counted. */
function decidedCall(id: string, serverTool: string, d: ToolDecision): ToolCallRecord {
  const record = toolCallRecord(id, serverTool, d, 0);
  countToolDecision(record.decision);
  return record;
}

function unknownTool(): AgentgwError {
  return new AgentgwError('validation_failed', 'The tool is not one the gateway lists: call a tool from tools/list.', { param: 'name' });
}

function admitting(dp: DataPlane, ctx: RequestContext, eff: EffectivePolicy, serverTool: string, args: Record<string, unknown> | undefined, usdPerCall: number): Admitting {
  return {
    view: toolCallView,
    body: toolCallBody(serverTool, args),
    model: serverTool,
    eff,
    // One "target": the tool, priced per call (no price: it costs nothing, CONTRACT).
    targets: [{ id: serverTool, price: perCallPrice(usdPerCall) }],
    blockingPolicy: eff.policies[0]?.id ?? '',
    agentId: ctx.agent.id,
    // The members in admit()'s order: the checks see one object shape. No request id: the reservation takes a random name.
    requestId: undefined,
    traceKey: stoppedTraceKey(ctx.agent.tenant_id, ctx.traceId),
    stoppedTraces: dp.snapshot.stoppedTraces,
    repeatScope: `t:${ctx.agent.id}:${ctx.traceId}`,
    now: new Date(),
    counters: dp.counters,
    usageFull: dp.usage.full,
    piiScanBytes: dp.piiScanBytes,
    piiTypes: [],
    promptUpper: null,
    tpmTokens: 0,
    worst: null,
    clampedMaxTokens: null,
    reservationId: null,
  };
}

/** The hold becomes the call's price. */
async function settle(dp: DataPlane, a: Admitting, cost: number): Promise<void> {
  if (a.reservationId) await dp.counters.settle(a.reservationId, cost).catch((err) => dp.telemetry.counterError(err));
}

/** A call that was refused after the reservation, or never answered, costs nothing. */
async function release(dp: DataPlane, a: Admitting): Promise<void> {
  if (a.reservationId) await dp.counters.release(a.reservationId).catch((err) => dp.telemetry.counterError(err));
}

/** Captured only with the capture_bodies label, and then with every PII type redacted, whatever the policy's rule. */
function capture(body: Record<string, unknown>): string {
  return JSON.stringify(redactRequestPii(body, PII_TYPES, (b, visit) => toolCallView.visitTexts(b, visit, EVERY_PART), EVERY_PART).body).slice(0, CAPTURE_LIMIT);
}

function union(a: PiiType[], b: PiiType[]): PiiType[] {
  if (b.length === 0) return a;
  return PII_TYPES.filter((t) => a.includes(t) || b.includes(t));
}

interface Step {
  deps: ToolCallDeps;
  ctx: RequestContext;
  caller: McpCaller;
  /** `server/tool` as policies name it (the agent's name when the server is unknown). */
  tool: string;
  server: string;
  /** The upstream tool name for metrics, "unknown" until the tool is known to exist. */
  metricTool: string;
  federated: string;
  /** The call as the tool rules decided it; absent when no policy has tool rules. */
  toolCalls?: ToolCallRecord[];
}

/** The trace step: journaled before the result goes back (as /v1 does), then metrics and the execute_tool span. */
async function record(s: Step, outcome: Outcome): Promise<void> {
  const { dp, metrics } = s.deps;
  const rec = toUsageRecord(s.ctx, { ...outcome, tool: s.tool, ...(s.toolCalls ? { toolCalls: s.toolCalls } : {}) });
  dp.running.end(rec);
  const journaled = dp.usage.add(rec);
  // A request of 2026-07-28 has no session (its caller's sessionId is the request's id, for agentgw's own bookkeeping).
  const info = s.caller.modern ? { sessionId: undefined, protocolVersion: MODERN_REVISION } : { sessionId: s.caller.sessionId };
  dp.telemetry.toolCallFinished(rec, { tool: s.federated, server: s.server, ...info });
  metrics.observe(s.server, s.metricTool, outcome.error?.code ?? 'ok', rec.latency_ms / 1000);
  await journaled.catch(() => undefined);
}

