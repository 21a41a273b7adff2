// POST /v1beta/models/{model}:countTokens: asked of a gemini upstream, counted locally (o200k) for any other.
import { countChatPromptTokens } from '../../../accounting/tokens.js';
import { AgentgwError } from '../../../contract/index.js';
import { needCounters } from '../../../policy/counters-unavailable.js';
import { applyPiiRulesAsync } from '../../../policy/pii-rules.js';
import { modelNotAllowed } from '../../../policy/model-allowlist.js';
import { isObject } from '../../../policy/pii/request-texts.js';
import { ClientAbort } from '../../client-abort.js';
import { planFor } from '../../admission.js';
import type { DataPlane } from '../../data-plane.js';
import { type Exchange, sendJson } from '../../exchange.js';
import { visitGeminiTexts } from './gemini-policy-view.js';
import { checkGeminiShape, memberOf } from './gemini-shape.js';

type Json = Record<string, unknown>;

/** The request counted: `generateContentRequest` when the body wraps one, else the body itself (`{contents}`). */
function countedRequest(body: Json): Json {
  const inner = memberOf(body, 'generateContentRequest');
  if (inner === undefined) return body;
  if (!isObject(inner)) throw new AgentgwError('validation_failed', 'generateContentRequest must be an object (a GenerateContentRequest).', { param: 'generateContentRequest' });
  if (memberOf(body, 'contents') !== undefined) {
    throw new AgentgwError('validation_failed', 'Send either contents or generateContentRequest, not both.', { param: 'contents' });
  }
  return inner;
}

/** A local count: the texts, tool definitions and framing, as for a chat request of the same conversation. */
function localCount(request: Json): number {
  const contents = memberOf(request, 'contents');
  const system = memberOf(request, 'systemInstruction');
  const messages: unknown[] = Array.isArray(contents) ? [...contents] : [];
  if (system !== undefined) messages.unshift({ content: system });
  const tools = memberOf(request, 'tools');
  return countChatPromptTokens({ messages, tools: Array.isArray(tools) ? (tools as never) : undefined });
}

async function countAgainstRpm(dp: DataPlane, agentId: string, rpm: number): Promise<void> {
  const rl = await needCounters(dp.counters.rateLimit({ agentId, rpm, tpm: null, tokens: 0, now: new Date() }));
  if (rl.ok) return;
  throw new AgentgwError('rpm_exceeded', `Rate limit of ${rpm} requests per minute reached: retry after ${rl.retryAfterSeconds} s.`, {
    headers: { 'retry-after': String(rl.retryAfterSeconds) },
  });
}

/**
 * Not a model call, so it is neither billed nor a trace step; but the model must be one the agent may use, and the
 * conversation leaves for the upstream, so PII rules apply to it as to the request it counts.
 */
export async function geminiCountTokens(dp: DataPlane, ex: Exchange, rawBody: unknown, model: string): Promise<void> {
  const ctx = ex.ctx;
  checkGeminiShape(rawBody);
  countedRequest(rawBody);
  ctx.model = model;
  const plan = planFor(dp, ctx, model);
  if (plan.priced.length === 0) throw modelNotAllowed(model, plan.blockingPolicy);
  const pii = await applyPiiRulesAsync(plan.eff.policies, rawBody, visitGeminiTexts, dp.piiScanBytes);
  if (pii.blocked) throw pii.blocked;
  const body = pii.body as Json;
  if (plan.eff.rpm !== null) await countAgainstRpm(dp, ctx.agent.id, plan.eff.rpm);
  const target = plan.priced[0]!;
  const native = target.provider.gemini;
  if (!native) {
    sendJson(ex, 200, JSON.stringify({ totalTokens: localCount(countedRequest(body)) }));
    return;
  }
  const abort = new ClientAbort(ex.res);
  try {
    const text = await native.countTokens({ model: target.model, signal: abort, requestId: ctx.requestId, estimatePromptTokens: () => localCount(countedRequest(body)) }, body);
    sendJson(ex, 200, text);
  } finally {
    abort.dispose();
  }
}
