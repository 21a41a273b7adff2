import type { FastifyReply, FastifyRequest } from 'fastify';
import { isAgentgwError } from '../contract/index.js';
import type { OpenAIEmbeddingsRequest } from '../providers/spec.js';
import { actualCost, admit } from './admission.js';
import type { DataPlane } from './data-plane.js';
import { abortOnClientClose } from './client-abort.js';
import { parseBody } from './parse-body.js';
import { EmbeddingsRequest } from './request-schemas.js';

/** POST /v1/embeddings: the same checks as chat, no output tokens. */
export async function embeddings(dp: DataPlane, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const ctx = req.agw;
  const body = parseBody(EmbeddingsRequest, req.body);
  const a = await admit(dp, ctx, body as never, 'embeddings');
  const { controller: abort, dispose } = abortOnClientClose(reply);
  try {
    let last: unknown;
    for (const t of a.targets) {
      try {
        const result = await t.provider.embeddings({ model: t.model, signal: abort.signal, requestId: ctx.requestId }, a.body as unknown as OpenAIEmbeddingsRequest);
        const cost = actualCost(t, result.usage);
        await dp.settle(a, ctx, cost, result.usage);
        dp.record(ctx, { httpStatus: 200, usage: result.usage, cost, provider: t.provider.name, model: t.id });
        await reply.code(200).send(result.body);
        return;
      } catch (e) {
        last = e;
        if (!(isAgentgwError(e) && e.isRetryable)) break;
      }
    }
    await dp.release(a);
    throw last;
  } finally {
    dispose();
  }
}
