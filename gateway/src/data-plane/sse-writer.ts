// Writes a server-sent event stream to the client: frames parsed from one upstream read leave in one socket write.
import type { ServerResponse } from 'node:http';
import type { CancelSignal } from '../providers/spec.js';

export class SseWriter {
  private corked = false;
  private readonly uncork = () => {
    this.corked = false;
    this.res.socket?.uncork();
  };

  constructor(
    private readonly res: ServerResponse,
    private readonly signal: CancelSignal,
  ) {}

  /**
   * Writes frames, waiting while the client's buffer is full. The connection is corked, never the response: Node 22
   * keeps a corked response's chunks in a buffer of its own and end() sends the closing chunk ahead of them. Writes to
   * a corked socket stay in order, and end() uncorks it fully, so frames that arrive with the upstream's end leave with
   * the closing frame in one write, on Node 20 and 22. Returns a promise to await when the client's buffer is full.
   */
  write(frames: string): Promise<void> | undefined {
    const socket = this.res.socket;
    // Writes within one turn leave in one socket write; the next tick sends them, so none waits longer.
    if (!this.corked && socket) {
      this.corked = true;
      socket.cork();
      process.nextTick(this.uncork);
    }
    // A promise only when there is something to wait for: most frames are written without one.
    return this.res.write(frames) ? undefined : waitForDrain(this.res, this.signal);
  }

  /** Ends the stream with its closing frames, unless the client already left. */
  end(last: string): void {
    if (!this.signal.aborted && !this.res.destroyed) this.res.end(last);
  }
}

/** Resolves when the client's buffer drained, the client left, or the connection closed, whichever comes first. */
export function waitForDrain(raw: ServerResponse, signal: CancelSignal): Promise<void> {
  if (signal.aborted || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      raw.off('drain', done);
      raw.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    raw.once('drain', done);
    raw.once('close', done);
    signal.addEventListener('abort', done);
  });
}
