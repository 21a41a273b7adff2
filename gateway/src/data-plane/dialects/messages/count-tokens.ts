// POST /v1/messages/count_tokens: asked of an Anthropic upstream, counted locally (o200k) for any other.
import { countChatPromptTokens } from '../../../accounting/tokens.js';
import { AgentgwError } from '../../../contract/index.js';
import { needCounters } from '../../../policy/counters-unavailable.js';
import { CountTokensRequest } from '../../../contract/messages-request.js';
import { applyPiiRulesAsync } from '../../../policy/pii-rules.js';
import { modelNotAllowed } from '../../../policy/model-allowlist.js';
import { ClientAbort } from '../../client-abort.js';
import { planFor } from '../../admission.js';
import type { DataPlane } from '../../data-plane.js';
import { type Exchange, sendJson } from '../../exchange.js';
import { checkKeyCase } from '../../key-case.js';
import { parseBody } from '../../parse-body.js';
import { checkBodyAnthropicBeta } from '../../anthropic-betas.js';
import { anthropicClientHeaders } from './messages.js';
import { visitMessagesTexts } from './messages-policy-view.js';

/** A local count: the texts, tool definitions and framing, as for a chat request of the same conversation. */
function localCount(body: CountTokensRequest): number {
  const messages: unknown[] = body.system === undefined ? body.messages : [{ content: body.system }, ...body.messages];
  return countChatPromptTokens({ messages, tools: body.tools });
}

/** One request against the agent's rpm, as every /v1 request is (CONTRACT's order: after PII); it uses no tokens, so no tpm. */
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
export async function countTokens(dp: DataPlane, ex: Exchange, rawBody: unknown, query: string): Promise<void> {
  const ctx = ex.ctx;
  const parsed = parseBody(CountTokensRequest, rawBody);
  checkKeyCase(parsed);
  checkBodyAnthropicBeta(parsed, dp.anthropicBetas);
  ctx.model = parsed.model;
  const plan = planFor(dp, ctx, parsed.model);
  if (plan.priced.length === 0) throw modelNotAllowed(parsed.model, plan.blockingPolicy);
  const pii = await applyPiiRulesAsync(plan.eff.policies, parsed, visitMessagesTexts, dp.piiScanBytes);
  if (pii.blocked) throw pii.blocked;
  const body = pii.body as CountTokensRequest;
  if (plan.eff.rpm !== null) await countAgainstRpm(dp, ctx.agent.id, plan.eff.rpm);
  const target = plan.priced[0]!;
  const native = target.provider.messages;
  if (!native?.serves(target.model)) {
    sendJson(ex, 200, JSON.stringify({ input_tokens: localCount(body) }));
    return;
  }
  const abort = new ClientAbort(ex.res);
  try {
    const text = await native.countTokens(
      {
        model: target.model,
        signal: abort,
        requestId: ctx.requestId,
        clientHeaders: anthropicClientHeaders(ex.req, dp.anthropicBetas),
        query,
        estimatePromptTokens: () => localCount(body),
      },
      body,
    );
    sendJson(ex, 200, text);
  } finally {
    abort.dispose();
  }
}
