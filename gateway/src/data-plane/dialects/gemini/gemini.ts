// POST /v1beta/models/{model}:generateContent and :streamGenerateContent (also under /v1/models/): Google's Gemini API.
// Native to upstreams that speak it (the body and the answer as sent), translated through Chat Completions for every
// other provider, streams included. Without alt=sse a stream is answered as Google does: one JSON array, element by element.
import { randomBytes } from 'node:crypto';
import { checkedUsage } from '../../../accounting/usage-counts.js';
import { geminiErrorEvent } from '../../../contract/gemini-error.js';
import { SKIP_THOUGHT_SIGNATURE } from '../../../providers/gemini/convert-to-gemini-contents.js';
import type { ChatStream, GeminiCallContext, Usage } from '../../../providers/spec.js';
import { GeminiStreamEncoder } from '../../../translate/chat-stream-to-gemini-events.js';
import { chatCompletionToGemini } from '../../../translate/chat-to-gemini-response.js';
import { geminiToChatRequest } from '../../../translate/gemini-to-chat-request.js';
import { isCarriedThinking } from '../../../translate/carried-thinking.js';
import { isObject } from '../../../translate/invalid-field.js';
import { claudeThinks } from '../../../translate/reasoning-budget.js';
import { type Admission, type PricedTarget, actualCost, admit, withFallback } from '../../admission.js';
import { ClientAbort } from '../../client-abort.js';
import type { DataPlane } from '../../data-plane.js';
import { type Exchange, clampedHeader, sendJson } from '../../exchange.js';
import { EncodedStream, type FrameSource, recordStreamed, relayFrames, startEventStream } from '../../relay-stream.js';
import { type ToolGate, toolGateOf } from '../../tool-calls/gate.js';
import { ToolGatedSource } from '../../tool-calls/gated-source.js';
import { HeldJsonAnswer, keepStreamAlive } from '../../tool-calls/held-answer.js';
import { GeminiToolFilter, gateGeminiResponse, withoutDeniedGeminiTools } from '../../tool-calls/gemini-tool-calls.js';
import { geminiPolicyView } from './gemini-policy-view.js';
import { camelGemini, checkGeminiShape } from './gemini-shape.js';

type Json = Record<string, unknown>;

export type GeminiMethod = 'generateContent' | 'streamGenerateContent';

export interface GeminiCall {
  /** The model of the path: `provider/model`, an alias, or a bare id an alias matches. */
  model: string;
  method: GeminiMethod;
  /** `alt=sse`: a stream of server-sent events; else one JSON array. */
  sse: boolean;
}

/** Models that take a reasoning effort on OpenAI-format upstreams (thinkingConfig maps onto it). */
const REASONING_MODEL = /(^|\/)(o\d|gpt-5|gpt-oss|deepseek-r|qwq)/i;

/** The target's own generateContent, when it speaks Gemini's API. */
function nativeOf(t: PricedTarget) {
  return t.provider.gemini;
}

/**
 * Claude's thinking that an earlier translated answer carried in a thoughtSignature is for Claude only: a gemini target
 * gets Gemini's documented skip sentinel in its place. The body itself (its received bytes) when it has none.
 */
function withoutCarriedThinking<T extends Json>(body: T): T {
  const contents = body.contents;
  if (!Array.isArray(contents)) return body;
  const signed = (p: unknown) => isObject(p) && (isCarriedThinking(p.thoughtSignature) || isCarriedThinking(p.thought_signature));
  if (!contents.some((c) => isObject(c) && Array.isArray(c.parts) && c.parts.some(signed))) return body;
  const sentinel = (p: Json) => ({
    ...p,
    ...(isCarriedThinking(p.thoughtSignature) ? { thoughtSignature: SKIP_THOUGHT_SIGNATURE } : {}),
    ...(isCarriedThinking(p.thought_signature) ? { thought_signature: SKIP_THOUGHT_SIGNATURE } : {}),
  });
  return { ...body, contents: contents.map((c) => (isObject(c) && Array.isArray(c.parts) ? { ...c, parts: c.parts.map((p) => (signed(p) ? sentinel(p as Json) : p)) } : c)) };
}


/** Whether the client asked for thought parts (thinkingConfig.includeThoughts): a translated answer's reasoning_content. */
function includeThoughts(body: Json): boolean {
  const config = camelGemini<{ generationConfig?: { thinkingConfig?: { includeThoughts?: unknown } } }>(body).generationConfig;
  return config?.thinkingConfig?.includeThoughts === true;
}

function responseId(): string {
  return randomBytes(12).toString('base64url');
}

/** The Chat Completions request a translated target receives. */
function chatRequestFor(t: PricedTarget, body: Json, stream: boolean) {
  const type = t.provider.type;
  return geminiToChatRequest(camelGemini(body), {
    model: t.model,
    maxTokensField: type === 'openai' || type === 'azure-openai' ? 'max_completion_tokens' : 'max_tokens',
    reasons: REASONING_MODEL.test(t.model) || (type === 'anthropic' && claudeThinks(t.model)),
    carryThinking: type === 'anthropic',
    stream,
    maxOutputCap: t.price?.max_output_tokens,
  });
}

export async function gemini(dp: DataPlane, ex: Exchange, rawBody: unknown, call: GeminiCall): Promise<void> {
  const ctx = ex.ctx;
  checkGeminiShape(rawBody);
  // The path names the model; a `model` member of the body is not sent on (the upstream's path names the target's). Set on
  // the body as received, not a copy: its parts are looked up by their bytes (json/part-cache.ts), and it goes upstream
  // as its received bytes when no check edits it.
  const body = rawBody as Json & { model: string };
  body.model = call.model;
  ctx.stream = call.method === 'streamGenerateContent';
  const a = await admit(dp, ctx, body, geminiPolicyView);
  const gate = toolGateOf(ctx, dp.approvals);
  if (gate) a.body = withoutDeniedGeminiTools(a.body, gate.rules) as typeof a.body;
  const abort = new ClientAbort(ex.res);
  // A call held for approval is abandoned when the client leaves.
  if (gate) gate.signal = abort;
  const callOf = (t: PricedTarget): GeminiCallContext => ({
    model: t.model,
    signal: abort,
    requestId: ctx.requestId,
    includeUsage: true,
    estimatePromptTokens: () => Math.ceil(geminiPolicyView.promptTokensUpperBound(a.body) / 4),
  });
  try {
    if (ctx.stream) await streamContent(dp, ex, a, abort, callOf, gate, call);
    else await generateContent(dp, ex, a, callOf, gate, call);
  } finally {
    abort.dispose();
  }
}

async function generateContent(dp: DataPlane, ex: Exchange, a: Admission<Json & { model: string }>, callOf: (t: PricedTarget) => GeminiCallContext, gate: ToolGate | null, call: GeminiCall): Promise<void> {
  const ctx = ex.ctx;
  let answer: { result: { text: string; usage: Usage }; target: PricedTarget };
  try {
    answer = await withFallback(ctx, a.targets, async (t) => {
      const native = nativeOf(t);
      if (native) return native.generate(callOf(t), withoutCarriedThinking(a.body));
      const result = await t.provider.chat(callOf(t), chatRequestFor(t, a.body, false));
      const answer = chatCompletionToGemini(result.body, { model: call.model, usage: result.usage, responseId: responseId(), thoughts: includeThoughts(a.body) });
      return { text: JSON.stringify(answer), usage: result.usage };
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
    const response = JSON.parse(text) as Json;
    if (await gateGeminiResponse(response, gate)) text = JSON.stringify(response);
  }
  // Journaled before the answer leaves: a crash after it loses no billed row.
  // (A literal, not a spread of outcome(): an object spread and then added to is slow to make and to read.)
  const { httpStatus, error } = held.outcome();
  await dp.record(ctx, { httpStatus, error, usage, cost, provider: target.provider.name, model: target.id, ttftMs: null, toolCalls: gate?.records });
  held.send(text);
  await settle();
}

/** A translated stream: the target's chat chunks re-encoded as Gemini's events. */
class TranslatedStream extends EncodedStream<GeminiStreamEncoder> {
  constructor(chat: ChatStream, model: string, thoughts: boolean) {
    super(chat, new GeminiStreamEncoder({ model, responseId: responseId(), thoughts }));
  }

  /** The closing event, with the calls and the usage the target reported. */
  finish(): string {
    return this.encoder.close(this.chat.usage());
  }
}

/**
 * Without alt=sse, Google streams one JSON array whose elements are the events' responses: `[{...}` then `,\r\n{...}`
 * for each later one, and `]` at the end. The SSE frames of the stream are re-written as such elements.
 */
class JsonArrayStream implements FrameSource {
  private started = false;

  constructor(private readonly inner: FrameSource) {}

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for await (const first of this.inner) {
      const rest = this.inner.takeReady?.();
      const out = this.elements(rest ? first + rest : first);
      if (out) yield out;
    }
  }

  /** SSE frames -> array elements. */
  elements(frames: string): string {
    let out = '';
    for (const frame of frames.split('\n\n')) {
      const data = frame.startsWith('data: ') ? frame.slice(6) : frame.startsWith('data:') ? frame.slice(5) : '';
      if (!data.trim()) continue;
      out += (this.started ? ',\r\n' : '[') + data;
      this.started = true;
    }
    return out;
  }

  /** The closing frames as elements, and the array's end. */
  closing(last: string): string {
    const out = this.elements(last);
    return out + (this.started ? ']' : '[]');
  }

  usage(): Usage {
    return this.inner.usage();
  }
}

function startJsonArray(ex: Exchange, extra?: Record<string, string>): void {
  const headers = ['content-type', 'application/json; charset=utf-8', 'x-request-id', ex.ctx.requestId, 'x-agent-trace-id', ex.ctx.traceId];
  if (extra) for (const k in extra) headers.push(k, extra[k]!);
  ex.res.writeHead(200, headers);
}

async function streamContent(
  dp: DataPlane,
  ex: Exchange,
  a: Admission<Json & { model: string }>,
  abort: ClientAbort,
  callOf: (t: PricedTarget) => GeminiCallContext,
  gate: ToolGate | null,
  call: GeminiCall,
): Promise<void> {
  const ctx = ex.ctx;
  let stream: ChatStream | TranslatedStream;
  let target: PricedTarget;
  try {
    ({ result: stream, target } = await withFallback<ChatStream | TranslatedStream>(ctx, a.targets, async (t) => {
      const native = nativeOf(t);
      if (native) return native.stream(callOf(t), withoutCarriedThinking(a.body));
      return new TranslatedStream(await t.provider.chatStream(callOf(t), chatRequestFor(t, a.body, true)), call.model, includeThoughts(a.body));
    }));
  } catch (e) {
    await dp.release(a);
    throw e;
  }
  // From here on the status is sent: failures become an error event (element), and what was streamed is billed.
  if (call.sse) startEventStream(ex, clampedHeader(a));
  else startJsonArray(ex, clampedHeader(a));
  const translated = stream instanceof TranslatedStream ? stream : null;
  // While a call waits: an SSE comment, or white space between the elements of a JSON array.
  keepStreamAlive(gate, ex.res, call.sse ? 'comment' : 'whitespace');
  const gated = gate ? new ToolGatedSource(stream, new GeminiToolFilter(gate)) : null;
  const array = call.sse ? null : new JsonArrayStream(gated ?? stream);
  const relayed = await relayFrames(ex, abort, array ?? gated ?? stream);
  let last = relayed.failure ? geminiErrorEvent(relayed.failure) : translated ? translated.finish() : '';
  if (gated && !relayed.failure) last = await gated.filter.close(last, false);
  if (array) last = array.closing(last);
  await recordStreamed(dp, ex, a, target, stream, relayed, last, undefined, gate?.records);
}
