import { checkedUsage } from '../../../accounting/usage-counts.js';
import type { CancelSignal, ChatResult, ChatStream, OpenAIChatRequest } from '../../../providers/spec.js';
import { checkContentPresent } from '../../../providers/shared/message-content.js';
import { type Admission, type PricedTarget, actualCost, admit, withFallback } from '../../admission.js';
import type { DataPlane } from '../../data-plane.js';
import { ChatCompletionRequest } from '../../../contract/data-plane-requests.js';
import { ClientAbort } from '../../client-abort.js';
import { fastValidChat } from '../../fast-validate.js';
import { checkKeyCase } from '../../key-case.js';
import { parseBody } from '../../parse-body.js';
import { type Exchange, clampedHeader, sendJson } from '../../exchange.js';
import { recordStreamed, relayFrames, startEventStream } from '../../relay-stream.js';
import { chatPolicyView } from './chat-policy-view.js';
import { ChatToolFilter, gateChatCompletion } from '../../tool-calls/chat-tool-calls.js';
import { type ToolGate, toolGateOf } from '../../tool-calls/gate.js';
import { ToolGatedSource } from '../../tool-calls/gated-source.js';
import { HeldJsonAnswer, keepStreamAlive } from '../../tool-calls/held-answer.js';
import { withoutDeniedTools } from '../../tool-calls/offered-tools.js';

/** POST /v1/chat/completions: checks, then the first target that answers, streamed or not, then settle and record. */
export async function chatCompletions(dp: DataPlane, ex: Exchange, rawBody: unknown): Promise<void> {
  const ctx = ex.ctx;
  // Ordinary bodies pass the hand-written check; anything else (and every error message) is zod's.
  const body = fastValidChat(rawBody) ? (rawBody as ChatCompletionRequest) : parseBody(ChatCompletionRequest, rawBody);
  checkKeyCase(body);
  // A message without content is refused as OpenAI refuses it, whichever provider serves the model.
  const messages = body.messages as OpenAIChatRequest['messages'];
  for (let i = 0; i < messages.length; i++) checkContentPresent(messages[i]!, `messages[${i}]`);
  ctx.stream = body.stream === true;
  const admission = await admit(dp, ctx, body, chatPolicyView);
  // Tool rules: only when some policy has them (else nothing below changes what is relayed).
  const gate = toolGateOf(ctx, dp.approvals);
  if (gate) admission.body = withoutDeniedTools(admission.body, gate.rules, 'chat');
  const abort = new ClientAbort(ex.res);
  // A call held for approval is abandoned when the client leaves.
  if (gate) gate.signal = abort;
  try {
    if (ctx.stream) await streamChat(dp, ex, admission, abort, gate);
    else await completeChat(dp, ex, admission, abort, gate);
  } finally {
    abort.dispose();
  }
}

async function completeChat(dp: DataPlane, ex: Exchange, a: Admission, signal: CancelSignal, gate: ToolGate | null): Promise<void> {
  const ctx = ex.ctx;
  let answer: { result: ChatResult; target: PricedTarget };
  try {
    answer = await withFallback(ctx, a.targets, (t) =>
      t.provider.chat({ model: t.model, signal, requestId: ctx.requestId }, a.body as unknown as OpenAIChatRequest),
    );
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
  const held = new HeldJsonAnswer(ex, gate, clampedHeader(a));
  if (gate) gate.beforeWait = settle;
  // Denied calls are taken out; an answer with none goes on as the upstream wrote it.
  const edited = gate !== null && (await gateChatCompletion(result.body as unknown as Record<string, unknown>, gate));
  // The usage row is journaled before the answer leaves (a crash after it loses no billed row); settling the budget
  // hold (a round trip with Redis) comes after the answer and adds nothing to the caller's wait.
  // (A literal, not a spread of outcome(): an object spread and then added to is slow to make and to read.)
  const { httpStatus, error } = held.outcome();
  await dp.record(ctx, { httpStatus, error, usage, cost, provider: target.provider.name, model: target.id, ttftMs: null, toolCalls: gate?.records });
  held.send(edited ? JSON.stringify(result.body) : (result.raw ?? JSON.stringify(result.body)));
  await settle();
}

async function streamChat(dp: DataPlane, ex: Exchange, a: Admission, abort: ClientAbort, gate: ToolGate | null): Promise<void> {
  const ctx = ex.ctx;
  let stream: ChatStream;
  let target: PricedTarget;
  try {
    ({ result: stream, target } = await withFallback(ctx, a.targets, (t) =>
      t.provider.chatStream(
        { model: t.model, signal: abort, requestId: ctx.requestId, includeUsage: (a.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true },
        a.body as unknown as OpenAIChatRequest,
      ),
    ));
  } catch (e) {
    await dp.release(a);
    throw e;
  }
  // From here on the status is sent: failures become an SSE error event, and what was streamed is billed. A failed
  // stream ends with its error and no [DONE], as OpenAI ends one: [DONE] says the answer is whole.
  startEventStream(ex, clampedHeader(a));
  keepStreamAlive(gate, ex.res, 'comment');
  const gated = gate ? new ToolGatedSource(stream, new ChatToolFilter(gate)) : null;
  const relayed = await relayFrames(ex, abort, gated ?? stream);
  const failure = relayed.failure;
  let last = failure ? `data: ${JSON.stringify(failure.toBody())}\n\n` : 'data: [DONE]\n\n';
  if (gated) last = await gated.filter.close(last, failure !== undefined);
  await recordStreamed(dp, ex, a, target, stream, relayed, last, undefined, gate?.records);
}
