// InvokeModelWithResponseStream of a Claude model: AWS event-stream frames whose chunks carry Anthropic's own events,
// passed on as Anthropic SSE exactly as Claude wrote them.
import type { Readable } from 'node:stream';
import { AnthropicPassthroughFrames } from '../anthropic/anthropic-passthrough-frames.js';
import type { ProviderIdentity } from '../shared/provider-identity.js';
import { extractUpstreamMessage, sanitizeUpstreamMessage } from '../shared/sanitize-upstream-message.js';
import { badUpstreamResponse, parseEventObject } from '../shared/upstream-failure.js';
import { AgentgwError } from '../../contract/errors.js';
import { decodeEventStream, EventStreamFormatError } from './decode-event-stream.js';

export async function* bedrockMessagesFrames(identity: ProviderIdentity, body: Readable, frames: AnthropicPassthroughFrames): AsyncGenerator<string> {
  try {
    for await (const message of decodeEventStream(body)) {
      const payload = message.payload.toString('utf8');
      if (message.headers[':message-type'] !== 'event') {
        const type = String(message.headers[':exception-type'] ?? message.headers[':error-code'] ?? 'exception');
        const detail = sanitizeUpstreamMessage(identity, extractUpstreamMessage(payload).message);
        throw new AgentgwError('upstream_unavailable', `Provider "${identity.name}" failed mid-stream (${type})${detail ? `: ${detail}` : '.'}`);
      }
      if (message.headers[':event-type'] !== 'chunk') continue;
      const bytes = parseEventObject<{ bytes?: unknown }>(identity, payload).bytes;
      if (typeof bytes !== 'string') continue;
      // Claude's own event, named by its type.
      const frame = frames.event({ event: undefined, data: Buffer.from(bytes, 'base64').toString('utf8'), id: undefined });
      if (frame !== null) {
        frames.delivered(frame);
        yield frame;
      }
    }
  } catch (err) {
    if (err instanceof EventStreamFormatError) throw badUpstreamResponse(identity, `sent a malformed event stream (${err.message}).`);
    throw err;
  }
  frames.end();
}
