// A stream whose tool calls are held and decided before the client sees them: the dialect's filter reads each frame
// as it comes. Only built when the request's policies have tool rules; otherwise the stream is relayed as it was.
import type { Usage } from '../../providers/spec.js';
import type { FrameSource } from '../relay-stream.js';
import { sseFrames } from './gate.js';

/** One dialect's stream edit: each frame in, what goes to the client out (text passes at once; a call waits for its decision). */
export interface StreamToolFilter {
  push(frame: string): string | Promise<string>;
  /**
   * The stream has ended: the closing frames the handler would send, edited. A call still held is released when the
   * stream ended well (its arguments are complete), dropped when it failed (they may not be).
   */
  close(last: string, failed: boolean): Promise<string>;
}

export class ToolGatedSource implements FrameSource {
  constructor(
    private readonly inner: FrameSource,
    readonly filter: StreamToolFilter,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for await (const first of this.inner) {
      const rest = this.inner.takeReady?.();
      const text = rest ? first + rest : first;
      let out = '';
      for (const frame of sseFrames(text)) {
        const r = this.filter.push(frame);
        if (typeof r === 'string') out += r;
        else {
          // A decision may wait (an approval): what came before the call goes to the client first.
          if (out) yield out;
          out = await r;
        }
      }
      if (out) yield out;
    }
  }

  usage(): Usage {
    return this.inner.usage();
  }
}
