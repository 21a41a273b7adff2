// Server-sent events of an upstream body, yielded as soon as each network chunk is parsed (nothing is held back).
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { ProviderIdentity } from './provider-identity.js';
import { bodyLimitOf, bytesAfterLastLine, upstreamBodyTooLarge } from './upstream-body-limit.js';

export type SseEvent = EventSourceMessage;

/** The events of `body`; one larger than limits.upstream_body_mb (see send()) ends them with 502 upstream_bad_response. */
export async function* sseEvents(body: Readable, identity: ProviderIdentity): AsyncGenerator<SseEvent> {
  const limit = bodyLimitOf(body);
  const pending: SseEvent[] = [];
  // Bytes read since the last complete event: about what the parser holds.
  let sinceEvent = 0;
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  // Keeps a UTF-8 character split across two network chunks whole.
  const decoder = new StringDecoder('utf8');
  for await (const chunk of body as AsyncIterable<Buffer | string>) {
    parser.feed(typeof chunk === 'string' ? chunk : decoder.write(chunk));
    sinceEvent = pending.length > 0 ? bytesAfterLastLine(chunk) : sinceEvent + chunk.length;
    if (pending.length > 0) {
      for (let i = 0; i < pending.length; i++) yield pending[i];
      pending.length = 0;
    }
    if (sinceEvent > limit) {
      body.destroy();
      throw upstreamBodyTooLarge(identity, limit, 'event');
    }
  }
  const tail = decoder.end();
  if (tail) parser.feed(tail);
  // A last event without its blank line is still an event: one cut inside its data fails to parse, as it must.
  parser.feed('\n\n');
  for (const event of pending) yield event;
}
