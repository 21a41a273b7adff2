// POST /v1/responses: OpenAI's Responses API. Native to upstreams that speak it (the body and the answer as sent, but for
// agentgw's response id), translated through Chat Completions for every other provider, streams included. agentgw keeps
// the conversation (store), so previous_response_id works whichever provider answers the next turn.
import { checkedUsage } from '../../../accounting/usage-counts.js';
import { ResponsesRequest, ResponsesRequestParts } from '../../../contract/responses-request.js';
import { AgentgwError } from '../../../contract/index.js';
import type { ChatStream, ResponsesCallContext, ResponsesStream, Usage } from '../../../providers/spec.js';
import { ResponsesStreamEncoder } from '../../../translate/chat-stream-to-responses-events.js';
import { chatCompletionToResponse } from '../../../translate/chat-to-responses-response.js';
import type { ResponsesEcho, ResponsesRequest as ResponsesWire } from '../../../translate/responses-api.js';
import { responsesErrorCode, responsesErrorEvent, responsesObject, SnapshotFields, withRequiredFields } from '../../../translate/responses-response-object.js';
import { type ResponsesToChatResult, responsesToChatRequest } from '../../../translate/responses-to-chat-request.js';
import { isCarriedThinking } from '../../../translate/carried-thinking.js';
import { claudeThinks } from '../../../translate/reasoning-budget.js';
import { type Admission, type PricedTarget, actualCost, admit, withFallback } from '../../admission.js';
import { ClientAbort } from '../../client-abort.js';
import type { DataPlane } from '../../data-plane.js';
import { type Exchange, clampedHeader, sendJson } from '../../exchange.js';
import { checkKeyCase } from '../../key-case.js';
import { checkBody } from '../../parse-body.js';
import { EncodedStream, type FrameSource, recordStreamed, relayFrames, startEventStream } from '../../relay-stream.js';
import { responsesPolicyView } from './responses-policy-view.js';
import { type ToolGate, toolGateOf } from '../../tool-calls/gate.js';
import { ToolGatedSource } from '../../tool-calls/gated-source.js';
import { HeldJsonAnswer, keepStreamAlive } from '../../tool-calls/held-answer.js';
import { withoutDeniedTools } from '../../tool-calls/offered-tools.js';
import { ResponsesToolFilter, gateResponse, replaceItems } from '../../tool-calls/responses-tool-calls.js';
import { STORED_HEADER, inputItems, keepResponse, newResponseId, notStoredEvents, notStoredResponse, refuseWhileStoreDown, withConversation } from './stored-responses.js';

type Json = Record<string, unknown>;

/** Models that take a reasoning effort on OpenAI-format upstreams. */
const REASONING_MODEL = /(^|\/)(o\d|gpt-5|gpt-oss|deepseek-r|qwq)/i;

/** The Chat Completions request a translated target receives, and what translating it left out. */
export function chatRequestFor(t: PricedTarget, body: ResponsesRequest): ResponsesToChatResult {
  const type = t.provider.type;
  // Agents ask for their own models' output limits; the target's own maximum applies instead.
  const cap = t.price?.max_output_tokens;
  // Codex sends no limit: the target's maximum (what the reservation assumed), not an adapter's small default.
  if (cap !== undefined && (typeof body.max_output_tokens !== 'number' || body.max_output_tokens > cap)) body = { ...body, max_output_tokens: cap };
  return responsesToChatRequest(body as ResponsesWire, {
    model: t.model,
    maxTokensField: type === 'openai' || type === 'azure-openai' ? 'max_completion_tokens' : 'max_tokens',
    // Claude and Gemini think on a budget: their adapters turn reasoning_effort into one (Gemini's, for the models that think).
    reasons: REASONING_MODEL.test(t.model) || (type === 'anthropic' && claudeThinks(t.model)) || type === 'gemini',
    carryThinking: type === 'anthropic',
    // Web search runs on the target's own search where it has one (Gemini's cannot be combined with function tools).
    webSearch: type === 'anthropic' ? true : type === 'gemini' ? 'without-client-tools' : false,
  });
}

/** The target's own Responses API, when it has one. */
const nativeOf = (t: PricedTarget) => t.provider.responses;

/** The body for a native target: without Claude's thinking carried from an earlier turn (only Claude can read it). */
function nativeBody(body: ResponsesRequest): ResponsesRequest {
  const input = body.input;
  if (!Array.isArray(input) || !input.some(isCarriedThinkingItem)) return body;
  return { ...body, input: input.filter((item) => !isCarriedThinkingItem(item)) } as ResponsesRequest;
}

function isCarriedThinkingItem(item: unknown): boolean {
  return typeof item === 'object' && item !== null && (item as Json).type === 'reasoning' && isCarriedThinking((item as Json).encrypted_content);
}

/** What one request needs on every path. */
interface Turn {
  a: Admission<ResponsesRequest>;
  /** The id agentgw gives the response, whatever the upstream called it. */
  id: string;
  createdAt: number;
  /** The model the client asked for (answers name it). */
  model: string;
  /** The client's own previous_response_id, echoed in the answer. */
  previous: string | null;
  store: boolean;
  call: (t: PricedTarget) => ResponsesCallContext;
  /** The request's tool rules, when some policy has them. */
  gate: ToolGate | null;
  /** See echoOf. */
  echo?: ResponsesEcho;
}

export async function responses(dp: DataPlane, ex: Exchange, rawBody: unknown): Promise<void> {
  const ctx = ex.ctx;
  checkBody(ResponsesRequest, ResponsesRequestParts, rawBody);
  checkKeyCase(rawBody as Json);
  // Validated, then forwarded as received: the schema has no defaults or transforms, and its output reorders keys.
  const parsed = rawBody as ResponsesRequest;
  if ((parsed as Json).background === true) {
    // A background response is queued upstream and answered without usage: its cost could never be settled.
    throw new AgentgwError('validation_failed', 'Field "background": background responses are not supported, as their cost cannot be accounted: send the request without background and wait for the answer (or stream it).', { param: 'background' });
  }
  ctx.stream = parsed.stream === true;
  ctx.endpoint = 'responses';
  refuseWhileStoreDown(dp, parsed);
  const body = await withConversation(dp, ctx, parsed);
  const a = await admit(dp, ctx, body, responsesPolicyView);
  // Tool rules: only when some policy has them (else nothing below changes what is relayed).
  const gate = toolGateOf(ctx, dp.approvals);
  if (gate) a.body = withoutDeniedTools(a.body, gate.rules, 'responses');
  const abort = new ClientAbort(ex.res);
  // A call held for approval is abandoned when the client leaves.
  if (gate) gate.signal = abort;
  const turn: Turn = {
    a,
    id: newResponseId(),
    createdAt: Math.floor(Date.now() / 1000),
    model: parsed.model,
    previous: parsed.previous_response_id ?? null,
    store: parsed.store !== false,
    call: (t) => ({
      model: t.model,
      signal: abort,
      requestId: ctx.requestId,
      includeUsage: true,
      estimatePromptTokens: () => Math.ceil(responsesPolicyView.promptTokensUpperBound(a.body) / 4),
    }),
    gate,
  };
  try {
    if (ctx.stream) await streamResponse(dp, ex, turn, abort);
    else await createResponse(dp, ex, turn);
  } finally {
    abort.dispose();
  }
}

/** The request's settings a response repeats (made once per request). */
function echoOf(turn: Turn): ResponsesEcho {
  return (turn.echo ??= { ...(turn.a.body as ResponsesWire), previous_response_id: turn.previous });
}

const DROPPED_HEADER_MAX = 1024;

function answerHeaders(a: Admission, dropped: string[]): Record<string, string> | undefined {
  const clamped = clampedHeader(a);
  if (dropped.length === 0) return clamped;
  let names = [...new Set(dropped)].join(', ');
  // A header stays small enough for every HTTP client, however many tools were left out.
  if (names.length > DROPPED_HEADER_MAX) names = `${names.slice(0, names.lastIndexOf(', ', DROPPED_HEADER_MAX))}, ...`;
  return { ...clamped, 'x-agentgw-dropped-tools': names };
}

/**
 * The upstream's response as the client sees it: agentgw's id, the previous_response_id it sent, and any field the
 * Open Responses specification requires that the upstream left out.
 */
function asOurs(value: Json, turn: Turn, owned = false): Json {
  // `owned`: the value is this request's own parse of the upstream's body, changed in place (a copy made with a spread
  // and then added to costs more than the rest of this, and makes JSON.stringify slower too); else a copy is.
  const ours = owned ? value : { ...value };
  ours.id = turn.id;
  if (turn.previous) ours.previous_response_id = turn.previous;
  return withRequiredFields(ours, echoOf(turn), true) ?? ours;
}

/** Keeps the response for previous_response_id and GET, when the client let it be stored; false when that failed. */
async function keep(dp: DataPlane, ex: Exchange, turn: Turn, target: PricedTarget, response: Json | null): Promise<boolean> {
  if (!turn.store || !response) return true;
  return keepResponse(dp, ex, { id: turn.id, ctx: ex.ctx, model: turn.model, providerType: target.provider.type, input: inputItems(turn.a.body.input), response });
}

async function createResponse(dp: DataPlane, ex: Exchange, turn: Turn): Promise<void> {
  const ctx = ex.ctx;
  const { a } = turn;
  let answer: { result: { text: string; value: Json; usage: Usage; dropped: string[] }; target: PricedTarget };
  try {
    answer = await withFallback(ctx, a.targets, async (t) => {
      const native = nativeOf(t);
      if (native) {
        const r = await native.create(turn.call(t), nativeBody(a.body));
        const value = asOurs(r.value, turn, true);
        return { text: JSON.stringify(value), value, usage: r.usage, dropped: [] };
      }
      const { request, droppedTools, tools } = chatRequestFor(t, a.body);
      const result = await t.provider.chat(turn.call(t), request);
      const value = chatCompletionToResponse(result.body, { id: turn.id, model: turn.model, createdAt: turn.createdAt, request: echoOf(turn), usage: result.usage, tools }) as unknown as Json;
      return { text: JSON.stringify(value), value, usage: result.usage, dropped: droppedTools };
    });
  } catch (e) {
    await dp.release(a);
    throw e;
  }
  const { result, target } = answer;
  const usage = checkedUsage(result.usage);
  const cost = actualCost(target, usage);
  // The upstream's answer is complete: a call held for approval does not hold its budget (settled before the wait).
  let settling: Promise<void> | undefined;
  const settle = () => (settling ??= dp.settle(a, ctx, cost, usage));
  const held = new HeldJsonAnswer(ex, turn.gate, answerHeaders(a, result.dropped));
  if (turn.gate) turn.gate.beforeWait = settle;
  // Denied calls are replaced, in the answer and in the response kept for the next turn.
  if (turn.gate !== null && (await gateResponse(result.value, turn.gate))) result.text = JSON.stringify(result.value);
  const stored = await keep(dp, ex, turn, target, result.value);
  // Journaled before the answer leaves: a crash after it loses no billed row.
  // (A literal, not a spread of outcome(): an object spread and then added to is slow to make and to read.)
  const { httpStatus, error } = held.outcome();
  await dp.record(ctx, { httpStatus, error, usage, cost, provider: target.provider.name, model: target.id, ttftMs: null, responseId: turn.id, toolCalls: turn.gate?.records });
  if (stored) held.send(result.text);
  else held.send(JSON.stringify(notStoredResponse(result.value)), { ...answerHeaders(a, result.dropped), [STORED_HEADER]: 'false' });
  await settle();
}

const NO_PREVIOUS = '"previous_response_id":null';

/** Where a terminal event (`response.completed|incomplete|failed`) starts in a run of frames, or -1. */
function terminalAt(text: string): number {
  for (const type of ['"type":"response.completed"', '"type":"response.incomplete"', '"type":"response.failed"']) {
    const at = text.indexOf(type);
    if (at !== -1) {
      const frameStart = text.lastIndexOf('\n\n', at);
      return frameStart === -1 ? 0 : frameStart + 2;
    }
  }
  return -1;
}

/**
 * A native stream: the upstream's events as sent, with agentgw's response id in place of the upstream's. The terminal
 * event is held back and sent last, once the response is stored and the step journaled.
 */
class NativeStream implements FrameSource {
  private upstreamId: string | null = null;
  private held = '';
  private events = 0;
  private snapshots: SnapshotFields | undefined;

  constructor(
    private readonly inner: ResponsesStream,
    private readonly turn: Turn,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for await (const first of this.inner) {
      const rest = this.inner.takeReady?.();
      let text = rest ? first + rest : first;
      if (this.upstreamId === null) this.upstreamId = /"id":"(resp_[^"]+)"/.exec(text)?.[1] ?? null;
      if (this.upstreamId !== null && text.includes(this.upstreamId)) text = text.replaceAll(this.upstreamId, this.turn.id);
      // The upstream saw the whole conversation, not the client's previous_response_id: its response objects say null.
      if (this.turn.previous !== null && text.includes(NO_PREVIOUS)) text = text.replaceAll(NO_PREVIOUS, `"previous_response_id":${JSON.stringify(this.turn.previous)}`);
      // Response snapshots (created, in_progress, completed, ...) with what the Open Responses specification requires.
      text = (this.snapshots ??= new SnapshotFields(() => echoOf(this.turn))).frames(text);
      for (let at = text.indexOf('\n\n'); at !== -1; at = text.indexOf('\n\n', at + 2)) this.events++;
      if (this.held) {
        this.held += text;
        continue;
      }
      const end = terminalAt(text);
      if (end === -1) {
        yield text;
        continue;
      }
      this.held = text.slice(end);
      if (end > 0) yield text.slice(0, end);
    }
  }

  /** The held terminal event. */
  last(): string {
    return this.held;
  }

  response(): Json | null {
    const r = this.inner.finalResponse();
    return r ? asOurs(r, this.turn) : null;
  }

  /** Events that end a stream the upstream broke off: `error`, then `response.failed`, numbered after the upstream's. */
  failed(f: AgentgwError): string {
    // The upstream's own code when it failed the response (Codex compacts on context_length_exceeded).
    const upstreamError = this.inner.finalResponse()?.error as { code?: unknown } | null | undefined;
    const code = typeof upstreamError?.code === 'string' ? upstreamError.code : responsesErrorCode(f.code);
    const response = responsesObject(
      { id: this.turn.id, model: this.turn.model, createdAt: this.turn.createdAt, request: echoOf(this.turn) },
      { status: 'failed', output: [], usage: null, error: { code, message: f.message } },
    );
    const seq = this.events;
    return (
      `event: error\ndata: ${JSON.stringify(responsesErrorEvent(seq, code, f.message))}\n\n` +
      `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', sequence_number: seq + 1, response })}\n\n`
    );
  }

  usage(): Usage {
    return this.inner.usage();
  }
}

/** A translated stream: the target's chat chunks re-encoded as Responses events. */
class TranslatedStream extends EncodedStream<ResponsesStreamEncoder> {
  constructor(chat: ChatStream, turn: Turn, translated: ResponsesToChatResult) {
    super(chat, new ResponsesStreamEncoder({ id: turn.id, model: turn.model, createdAt: turn.createdAt, request: echoOf(turn), tools: translated.tools }));
  }
}

async function streamResponse(dp: DataPlane, ex: Exchange, turn: Turn, abort: ClientAbort): Promise<void> {
  const ctx = ex.ctx;
  const { a } = turn;
  let dropped: string[] = [];
  let stream: NativeStream | TranslatedStream;
  let target: PricedTarget;
  try {
    ({ result: stream, target } = await withFallback<NativeStream | TranslatedStream>(ctx, a.targets, async (t) => {
      const native = nativeOf(t);
      if (native) {
        dropped = [];
        return new NativeStream(await native.stream(turn.call(t), nativeBody(a.body)), turn);
      }
      const translated = chatRequestFor(t, a.body);
      dropped = translated.droppedTools;
      return new TranslatedStream(await t.provider.chatStream(turn.call(t), translated.request), turn, translated);
    }));
  } catch (e) {
    await dp.release(a);
    throw e;
  }
  // From here on the status is sent: failures become error events, and what was streamed is billed.
  startEventStream(ex, answerHeaders(a, dropped));
  keepStreamAlive(turn.gate, ex.res, 'comment');
  const filter = turn.gate ? new ResponsesToolFilter(turn.gate) : null;
  const relayed = await relayFrames(ex, abort, filter ? new ToolGatedSource(stream, filter) : stream);
  let last: string;
  let response: Json | null;
  // The response object is made only to be kept (store); a turn not stored needs none.
  const kept = relayed.failure === undefined && turn.store;
  if (stream instanceof NativeStream) {
    last = relayed.failure ? stream.failed(relayed.failure) : stream.last();
    response = kept ? stream.response() : null;
  } else {
    last = relayed.failure
      ? stream.encoder.error({ code: responsesErrorCode(relayed.failure.code), message: relayed.failure.message })
      : stream.encoder.finish(stream.usage());
    response = kept ? (stream.encoder.response() as unknown as Json | null) : null;
  }
  if (filter) {
    last = await filter.close(last, relayed.failure !== undefined);
    response = replaceItems(response, filter.replaced);
  }
  // The terminal event, held back until now, tells a turn that could not be stored.
  if (!(await keep(dp, ex, turn, target, response))) last = notStoredEvents(last);
  await recordStreamed(dp, ex, a, target, stream, relayed, last, turn.id, turn.gate?.records);
}
