// POST /v1/messages: Anthropic's Messages API. Native to upstreams that speak it (the body and the answer as sent),
// translated through Chat Completions for every other provider, streams included.
import { randomHex } from '../../../http/random-hex.js';
import type { IncomingMessage } from 'node:http';
import { checkedUsage } from '../../../accounting/usage-counts.js';
import { MessagesRequest, MessagesRequestParts } from '../../../contract/messages-request.js';
import type { ChatStream, MessagesCallContext, Usage } from '../../../providers/spec.js';
import { chatCompletionToMessage } from '../../../translate/chat-to-messages-response.js';
import { MessagesStreamEncoder } from '../../../translate/chat-stream-to-messages-events.js';
import { messagesToChatRequest } from '../../../translate/messages-to-chat-request.js';
import { type Admission, type PricedTarget, actualCost, admit, withFallback } from '../../admission.js';
import { ClientAbort } from '../../client-abort.js';
import type { DataPlane } from '../../data-plane.js';
import { type Exchange, clampedHeader, sendJson } from '../../exchange.js';
import { checkKeyCase } from '../../key-case.js';
import { checkBody } from '../../parse-body.js';
import type { RequestContext } from '../../request-context.js';
import { EncodedStream, type FrameSource, recordStreamed, relayFrames, startEventStream } from '../../relay-stream.js';
import { anthropicErrorEvent } from '../../../contract/anthropic-error.js';
import { checkBodyAnthropicBeta, checkedAnthropicBeta, checkedAnthropicVersion } from '../../anthropic-betas.js';
import { messagesPolicyView } from './messages-policy-view.js';
import { type ToolGate, toolGateOf } from '../../tool-calls/gate.js';
import { ToolGatedSource } from '../../tool-calls/gated-source.js';
import { HeldJsonAnswer, keepStreamAlive } from '../../tool-calls/held-answer.js';
import { MessagesToolFilter, gateMessage } from '../../tool-calls/messages-tool-calls.js';
import { withoutDeniedTools } from '../../tool-calls/offered-tools.js';
import { cleanForOtherFamily } from './fallback-cleaning.js';

/**
 * The Anthropic headers a client sets that go on to an Anthropic upstream: anthropic-version, and the betas of
 * anthropic-beta that `anthropic_betas` allows (checked with the headers; here written as the upstream receives them).
 */
export function anthropicClientHeaders(req: IncomingMessage, allowedBetas: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  const version = checkedAnthropicVersion(req.headers['anthropic-version']);
  if (version !== undefined) out['anthropic-version'] = version;
  const betas = checkedAnthropicBeta(req.headers['anthropic-beta'], allowedBetas);
  if (betas !== undefined) out['anthropic-beta'] = betas;
  return out;
}

/** Models that take a reasoning effort on OpenAI-format upstreams (Anthropic's thinking maps onto it). */
const REASONING_MODEL = /(^|\/)(o\d|gpt-5|gpt-oss|deepseek-r|qwq)/i;

/**
 * The Chat Completions request a translated target receives, cleaned of what only Anthropic can take (recorded on the
 * step: see fallback-cleaning.ts). Server tools are dropped when the alias also reaches an Anthropic-format target.
 */
function translatedFor(ctx: RequestContext, t: PricedTarget, body: MessagesRequest, targets: PricedTarget[]) {
  const { body: cleanBody, cleaned } = cleanForOtherFamily(body, targets.some((o) => nativeOf(o) !== undefined));
  ctx.cleaned = cleaned.length > 0 ? cleaned : undefined;
  return chatRequestFor(t, cleanBody);
}

/** The Chat Completions request a translated target receives. */
export function chatRequestFor(t: PricedTarget, body: MessagesRequest) {
  const type = t.provider.type;
  // Agents ask for their own models' output limits (Claude Code: 64k); the target's own maximum applies instead.
  const cap = t.price?.max_output_tokens;
  if (cap !== undefined && body.max_tokens > cap) body = { ...body, max_tokens: cap };
  return messagesToChatRequest(body, {
    model: t.model,
    maxTokensField: type === 'openai' || type === 'azure-openai' ? 'max_completion_tokens' : 'max_tokens',
    // The Gemini adapter turns reasoning_effort into a thinking budget for the Gemini models that think.
    reasons: REASONING_MODEL.test(t.model) || type === 'gemini',
  });
}

export async function messages(dp: DataPlane, ex: Exchange, rawBody: unknown, query: string): Promise<void> {
  const ctx = ex.ctx;
  checkBody(MessagesRequest, MessagesRequestParts, rawBody);
  checkKeyCase(rawBody as Record<string, unknown>);
  // Validated, then used as received: the schema has no defaults or transforms, and its output would be a copy (one
  // whose bytes are unknown, so the body could not go upstream as received).
  const body = rawBody as MessagesRequest;
  checkBodyAnthropicBeta(body, dp.anthropicBetas);
  ctx.stream = body.stream === true;
  const a = await admit(dp, ctx, body, messagesPolicyView);
  // Tool rules: only when some policy has them (else nothing below changes what is relayed).
  const gate = toolGateOf(ctx, dp.approvals);
  if (gate) a.body = withoutDeniedTools(a.body, gate.rules, 'messages');
  const abort = new ClientAbort(ex.res);
  // A call held for approval is abandoned when the client leaves.
  if (gate) gate.signal = abort;
  const call = (t: PricedTarget): MessagesCallContext => ({
    model: t.model,
    signal: abort,
    requestId: ctx.requestId,
    includeUsage: true,
    clientHeaders: anthropicClientHeaders(ex.req, dp.anthropicBetas),
    query,
    estimatePromptTokens: () => Math.ceil(messagesPolicyView.promptTokensUpperBound(a.body) / 4),
  });
  try {
    if (ctx.stream) await streamMessage(dp, ex, a, abort, call, gate);
    else await createMessage(dp, ex, a, call, gate);
  } finally {
    abort.dispose();
  }
}

/** The target's own Messages API, when it has one for this model. */
function nativeOf(t: PricedTarget) {
  const native = t.provider.messages;
  return native?.serves(t.model) ? native : undefined;
}

async function createMessage(dp: DataPlane, ex: Exchange, a: Admission<MessagesRequest>, call: (t: PricedTarget) => MessagesCallContext, gate: ToolGate | null): Promise<void> {
  const ctx = ex.ctx;
  const body = a.body;
  let answer: { result: { text: string; usage: Usage }; target: PricedTarget };
  try {
    answer = await withFallback(ctx, a.targets, async (t) => {
      const native = nativeOf(t);
      ctx.cleaned = undefined;
      if (native) return native.create(call(t), a.body);
      const c = call(t);
      const result = await t.provider.chat(c, translatedFor(ctx, t, body, a.targets));
      return { text: JSON.stringify(chatCompletionToMessage(result.body, { model: body.model, usage: result.usage })), usage: result.usage };
    });
  } catch (e) {
    await dp.release(a);
    throw e;
  }
  const { result, target } = answer;
  const usage = checkedUsage(result.usage);
  const cost = actualCost(target, usage);
  let text = result.text;
  // The upstream's answer is complete: a call held for approval does not hold its budget (settled before the wait).
  let settling: Promise<void> | undefined;
  const settle = () => (settling ??= dp.settle(a, ctx, cost, usage));
  const held = new HeldJsonAnswer(ex, gate, clampedHeader(a));
  if (gate) gate.beforeWait = settle;
  if (gate !== null) {
    // Denied calls are taken out; an answer with none goes on as the upstream wrote it.
    const message = JSON.parse(text) as Record<string, unknown>;
    if (await gateMessage(message, gate)) text = JSON.stringify(message);
  }
  // Journaled before the answer leaves: a crash after it loses no billed row.
  // (A literal, not a spread of outcome(): an object spread and then added to is slow to make and to read.)
  const { httpStatus, error } = held.outcome();
  await dp.record(ctx, { httpStatus, error, usage, cost, provider: target.provider.name, model: target.id, ttftMs: null, toolCalls: gate?.records });
  held.send(text);
  await settle();
}

/** A translated stream: the target's chat chunks re-encoded as Anthropic's events. */
class TranslatedStream extends EncodedStream<MessagesStreamEncoder> {
  constructor(chat: ChatStream, model: string) {
    super(chat, new MessagesStreamEncoder({ model, messageId: `msg_${randomHex(12)}`, inputTokensEstimate: 0 }));
  }

  /** The closing events, with the usage the target reported. */
  finish(): string {
    return this.encoder.finish(this.chat.usage());
  }
}

async function streamMessage(
  dp: DataPlane,
  ex: Exchange,
  a: Admission<MessagesRequest>,
  abort: ClientAbort,
  call: (t: PricedTarget) => MessagesCallContext,
  gate: ToolGate | null,
): Promise<void> {
  const ctx = ex.ctx;
  const body = a.body;
  let stream: ChatStream | TranslatedStream;
  let target: PricedTarget;
  try {
    ({ result: stream, target } = await withFallback<ChatStream | TranslatedStream>(ctx, a.targets, async (t) => {
      const native = nativeOf(t);
      ctx.cleaned = undefined;
      if (native) return native.stream(call(t), a.body);
      return new TranslatedStream(await t.provider.chatStream(call(t), translatedFor(ctx, t, body, a.targets)), body.model);
    }));
  } catch (e) {
    await dp.release(a);
    throw e;
  }
  // From here on the status is sent: failures become an error event, and what was streamed is billed.
  startEventStream(ex, clampedHeader(a));
  const translated = stream instanceof TranslatedStream ? stream : null;
  keepStreamAlive(gate, ex.res, 'ping');
  const gated = gate ? new ToolGatedSource(stream, new MessagesToolFilter(gate)) : null;
  const relayed = await relayFrames(ex, abort, gated ?? stream);
  let last = relayed.failure ? anthropicErrorEvent(relayed.failure) : translated ? translated.finish() : '';
  if (gated) last = await gated.filter.close(last, relayed.failure !== undefined);
  await recordStreamed(dp, ex, a, target, stream, relayed, last, undefined, gate?.records);
}
