import type { ServerResponse } from 'node:http';
import { AgentgwError } from '../contract/index.js';

/** Aborts the upstream call when the client goes away before the response is finished. */
export function abortOnClientClose(res: ServerResponse): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) {
      controller.abort(new AgentgwError('client_closed', 'The client closed the connection before the response was complete.'));
    }
  };
  res.once('close', onClose);
  return { controller, dispose: () => res.off('close', onClose) };
}
