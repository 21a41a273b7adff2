// The AWS event-stream binary framing (application/vnd.amazon.eventstream): prelude, headers, payload, two CRC32s.
import { crc32 } from 'node:zlib';

export type EventStreamHeaderValue = boolean | number | bigint | string | Uint8Array | Date;

export interface EventStreamMessage {
  headers: Record<string, EventStreamHeaderValue>;
  payload: Buffer;
}

/** A frame that breaks the framing rules; the stream cannot be trusted past it. */
export class EventStreamFormatError extends Error {
  override readonly name = 'EventStreamFormatError';
}

const PRELUDE_LENGTH = 12;
const MIN_MESSAGE_LENGTH = 16;
// Bedrock frames are small; anything this large is a broken length field, not a message.
const MAX_MESSAGE_LENGTH = 16 * 1024 * 1024;

/** Messages of a byte stream, as soon as each one is complete, whatever the chunk boundaries. */
export async function* decodeEventStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventStreamMessage> {
  let buffer: Buffer = Buffer.alloc(0);
  for await (const chunk of body) {
    buffer = buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([buffer, chunk]);
    let offset = 0;
    while (buffer.length - offset >= PRELUDE_LENGTH) {
      const total = buffer.readUInt32BE(offset);
      if (total < MIN_MESSAGE_LENGTH || total > MAX_MESSAGE_LENGTH) throw new EventStreamFormatError(`invalid message length ${total}`);
      if (buffer.length - offset < total) break;
      yield decodeMessage(buffer.subarray(offset, offset + total));
      offset += total;
    }
    buffer = offset === buffer.length ? Buffer.alloc(0) : buffer.subarray(offset);
  }
  if (buffer.length > 0) throw new EventStreamFormatError(`stream ended inside a message (${buffer.length} bytes left)`);
}

export function decodeMessage(message: Buffer): EventStreamMessage {
  const total = message.readUInt32BE(0);
  const headersLength = message.readUInt32BE(4);
  if (crc32(message.subarray(0, 8)) !== message.readUInt32BE(8)) throw new EventStreamFormatError('prelude checksum mismatch');
  if (crc32(message.subarray(0, total - 4)) !== message.readUInt32BE(total - 4)) throw new EventStreamFormatError('message checksum mismatch');
  if (PRELUDE_LENGTH + headersLength > total - 4) throw new EventStreamFormatError(`headers length ${headersLength} exceeds the message`);
  const headers = decodeHeaders(message.subarray(PRELUDE_LENGTH, PRELUDE_LENGTH + headersLength));
  return { headers, payload: message.subarray(PRELUDE_LENGTH + headersLength, total - 4) };
}

function decodeHeaders(bytes: Buffer): Record<string, EventStreamHeaderValue> {
  const headers: Record<string, EventStreamHeaderValue> = {};
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw new EventStreamFormatError('header runs past the headers section');
  };
  while (at < bytes.length) {
    need(1);
    const nameLength = bytes.readUInt8(at);
    at += 1;
    need(nameLength + 1);
    const name = bytes.toString('utf8', at, at + nameLength);
    at += nameLength;
    const type = bytes.readUInt8(at);
    at += 1;
    switch (type) {
      case 0:
        headers[name] = true;
        break;
      case 1:
        headers[name] = false;
        break;
      case 2:
        need(1);
        headers[name] = bytes.readInt8(at);
        at += 1;
        break;
      case 3:
        need(2);
        headers[name] = bytes.readInt16BE(at);
        at += 2;
        break;
      case 4:
        need(4);
        headers[name] = bytes.readInt32BE(at);
        at += 4;
        break;
      case 5:
        need(8);
        headers[name] = bytes.readBigInt64BE(at);
        at += 8;
        break;
      case 6:
      case 7: {
        need(2);
        const length = bytes.readUInt16BE(at);
        at += 2;
        need(length);
        headers[name] = type === 7 ? bytes.toString('utf8', at, at + length) : new Uint8Array(bytes.subarray(at, at + length));
        at += length;
        break;
      }
      case 8:
        need(8);
        headers[name] = new Date(Number(bytes.readBigInt64BE(at)));
        at += 8;
        break;
      case 9:
        need(16);
        headers[name] = bytes.toString('hex', at, at + 16);
        at += 16;
        break;
      default:
        throw new EventStreamFormatError(`unknown header value type ${type}`);
    }
  }
  return headers;
}
