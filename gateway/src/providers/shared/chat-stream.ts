// The ChatStream handed to the pipeline: frames from an adapter's generator, errors mapped, the upstream released at the end.
import type { CancelSignal, ChatStream, Usage } from '../spec.js';
import type { ProviderIdentity } from './provider-identity.js';
import type { StreamMeter } from './stream-meter.js';
import { midStreamFailure } from './upstream-failure.js';
import type { UpstreamResponse } from './upstream-client.js';

export interface ChatStreamParts {
  identity: ProviderIdentity;
  response: UpstreamResponse | null;
  signal: CancelSignal;
  meter: StreamMeter;
  frames: AsyncGenerator<string>;
  finishReason: () => string | null;
}

class UpstreamChatStream implements ChatStream {
  private started = false;

  constructor(private readonly parts: ChatStreamParts) {}

  [Symbol.asyncIterator](): AsyncIterator<string> {
    if (this.started) throw new TypeError('A ChatStream can be iterated only once.');
    this.started = true;
    return this.run();
  }

  usage(): Usage {
    return this.parts.meter.usage();
  }

  finishReason(): string | null {
    return this.parts.finishReason();
  }

  private async *run(): AsyncGenerator<string> {
    const { identity, response, signal, frames } = this.parts;
    try {
      for await (const frame of frames) {
        // Nothing more after an abort, even frames already parsed from the last network chunk.
        if (signal.aborted) return;
        yield frame;
      }
    } catch (err) {
      // The caller aborted: it knows, and usage() already holds what was streamed.
      if (signal.aborted) return;
      throw midStreamFailure(identity, err, signal);
    } finally {
      // Ended early (break, abort, error): drop the connection rather than read a body nobody wants.
      if (response && !response.body.readableEnded) response.body.destroy();
    }
  }
}

export function createChatStream(parts: ChatStreamParts): ChatStream {
  return new UpstreamChatStream(parts);
}
