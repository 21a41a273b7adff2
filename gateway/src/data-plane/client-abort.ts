import type { ServerResponse } from 'node:http';
import { AgentgwError } from '../contract/index.js';
import type { CancelSignal } from '../providers/spec.js';

/**
 * Aborts the upstream call when the client goes away before the response is finished. A plain object rather than an
 * AbortController: one of those per request cost more than the listeners it ever serves (usually none fire).
 */
export class ClientAbort implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | null = null;

  constructor(private readonly res: ServerResponse) {
    res.on('close', this.onClose);
  }

  private readonly onClose = (): void => {
    if (!this.res.writableFinished) {
      this.abort(new AgentgwError('client_closed', 'The client closed the connection before the response was complete.'));
    }
  };

  /** As on an AbortSignal: a listener added after the abort is never called, one added twice is called once. */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i !== -1) this.listeners!.splice(i, 1);
  }

  /**
   * As on an AbortSignal: listeners run in the order they were added, one removed by an earlier one does not run, and one
   * that throws does not keep the others from running (its error is reported as uncaught, as EventTarget does).
   */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    if (!listeners) return;
    for (const listener of [...listeners]) {
      if (!listeners.includes(listener)) continue;
      try {
        listener();
      } catch (err) {
        process.nextTick(() => {
          throw err;
        });
      }
    }
    this.listeners = null;
  }

  /** Stops watching the connection once the request is answered. */
  dispose(): void {
    this.res.off('close', this.onClose);
    this.listeners = null;
  }
}
