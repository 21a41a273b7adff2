import { checkedUsage } from '../../../accounting/usage-counts.js';
import type { EmbeddingsResult, OpenAIEmbeddingsRequest } from '../../../providers/spec.js';
import { type PricedTarget, actualCost, admit, withFallback } from '../../admission.js';
import type { DataPlane } from '../../data-plane.js';
import { ClientAbort } from '../../client-abort.js';
import { fastValidEmbeddings } from '../../fast-validate.js';
import { checkKeyCase } from '../../key-case.js';
import { parseBody } from '../../parse-body.js';
import { EmbeddingsRequest } from '../../../contract/data-plane-requests.js';
import { type Exchange, sendJson } from '../../exchange.js';
import { embeddingsPolicyView } from './embeddings-policy-view.js';

/** POST /v1/embeddings: the same checks as chat, no output tokens. */
export async function embeddings(dp: DataPlane, ex: Exchange, rawBody: unknown): Promise<void> {
  const ctx = ex.ctx;
  const body = fastValidEmbeddings(rawBody) ? (rawBody as EmbeddingsRequest) : parseBody(EmbeddingsRequest, rawBody);
  checkKeyCase(body);
  const a = await admit(dp, ctx, body, embeddingsPolicyView);
  const abort = new ClientAbort(ex.res);
  try {
    let answered: { result: EmbeddingsResult; target: PricedTarget };
    try {
      answered = await withFallback(ctx, a.targets, (t) =>
        t.provider.embeddings({ model: t.model, signal: abort, requestId: ctx.requestId }, a.body as unknown as OpenAIEmbeddingsRequest),
      );
    } catch (e) {
      await dp.release(a);
      throw e;
    }
    const { result, target } = answered;
    const usage = checkedUsage(result.usage);
    const cost = actualCost(target, usage);
    // Journaled before the answer leaves: a crash after it loses no billed row.
    await dp.record(ctx, { httpStatus: 200, usage, cost, provider: target.provider.name, model: target.id });
    sendJson(ex, 200, result.raw ?? JSON.stringify(result.body));
    await dp.settle(a, ctx, cost, usage);
  } finally {
    abort.dispose();
  }
}
