// The SSE events of one MCP session, kept so a client whose stream broke can resume it (GET with Last-Event-ID), as the
// Streamable HTTP transport describes: each SSE answer starts with a priming event (an id, empty data, `retry:`) for
// clients of protocol 2025-11-25 and later (the SDK's transport writes it when given a store). Bounded: the latest
// EVENTS events of the session up to BYTES of JSON; the store lives with the session's SDK objects on the node serving
// it, so a stream resumed elsewhere (or after those were put down) continues from now, without the events missed.
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const EVENTS = 64;
const BYTES = 1024 * 1024;
/** How long a client waits before reconnecting a stream that ended without its answer (SSE `retry:`, ms). */
export const SSE_RETRY_MS = 1_000;

interface Stored {
  id: EventId;
  stream: StreamId;
  message: JSONRPCMessage;
  bytes: number;
}

/** `<stream id>~<sequence>`: the stream an event belongs to is read from its id, on any node. */
const SEPARATOR = '~';

export class SessionEventStore implements EventStore {
  private readonly events: Stored[] = [];
  private bytes = 0;
  private seq = 0;

  async storeEvent(stream: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = `${stream}${SEPARATOR}${++this.seq}`;
    // The priming event ({}) has nothing to replay; anything larger than the budget is sent but not kept.
    if (!('method' in message) && !('result' in message) && !('error' in message)) return id;
    const bytes = JSON.stringify(message).length;
    if (bytes > BYTES) return id;
    this.events.push({ id, stream, message, bytes });
    this.bytes += bytes;
    while (this.events.length > EVENTS || this.bytes > BYTES) this.bytes -= this.events.shift()!.bytes;
    return id;
  }

  async getStreamIdForEventId(id: EventId): Promise<StreamId | undefined> {
    const i = id.lastIndexOf(SEPARATOR);
    return i > 0 ? id.slice(0, i) : undefined;
  }

  async replayEventsAfter(lastId: EventId, { send }: { send: (id: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const stream = (await this.getStreamIdForEventId(lastId)) ?? '';
    const after = Number(lastId.slice(stream.length + SEPARATOR.length));
    for (const e of this.events) {
      if (e.stream !== stream || Number(e.id.slice(stream.length + SEPARATOR.length)) <= after) continue;
      await send(e.id, e.message);
    }
    return stream;
  }
}
