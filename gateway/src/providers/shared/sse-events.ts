// Server-sent events of an upstream body, yielded as soon as each network chunk is parsed (nothing is held back).
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

export type SseEvent = EventSourceMessage;

export async function* sseEvents(body: Readable): AsyncGenerator<SseEvent> {
  const pending: SseEvent[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  // Keeps a UTF-8 character split across two network chunks whole.
  const decoder = new StringDecoder('utf8');
  for await (const chunk of body) {
    parser.feed(typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer));
    if (pending.length === 0) continue;
    for (let i = 0; i < pending.length; i++) yield pending[i];
    pending.length = 0;
  }
  const tail = decoder.end();
  if (tail) parser.feed(tail);
  // A last event without its blank line is still an event.
  parser.reset({ consume: true });
  for (const event of pending) yield event;
}
