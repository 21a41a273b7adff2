import type { FastifyReply } from 'fastify';
import { AgentgwError } from '../contract/index.js';

/** Aborts the upstream call when the client goes away before the response is finished. */
export function abortOnClientClose(reply: FastifyReply): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) {
      controller.abort(new AgentgwError('client_closed', 'The client closed the connection before the response was complete.'));
    }
  };
  reply.raw.once('close', onClose);
  return { controller, dispose: () => reply.raw.off('close', onClose) };
}
