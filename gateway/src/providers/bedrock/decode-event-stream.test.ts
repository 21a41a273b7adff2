import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { fixtureReader } from '../__fixtures__/fake-upstream.js';
import { decodeEventStream, EventStreamFormatError, type EventStreamMessage } from './decode-event-stream.js';

const vectors = fixtureReader(import.meta.url).json('event-stream-vectors.json') as {
  valid: Array<{ name: string; hex: string; headers: Record<string, unknown>; payload: string }>;
  invalid: Array<{ name: string; hex: string }>;
};

async function* chunks(...parts: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield part;
}

async function decodeAll(source: AsyncIterable<Uint8Array>): Promise<EventStreamMessage[]> {
  const out: EventStreamMessage[] = [];
  for await (const message of decodeEventStream(source)) out.push(message);
  return out;
}

describe('decodeEventStream', () => {
  it.each(vectors.valid)('decodes the $name test vector', async (vector) => {
    const [message] = await decodeAll(chunks(Buffer.from(vector.hex, 'hex')));
    expect(message.headers).toEqual(vector.headers);
    expect(message.payload.toString('utf8')).toBe(vector.payload);
  });

  it.each(vectors.invalid)('rejects the $name test vector', async (vector) => {
    await expect(decodeAll(chunks(Buffer.from(vector.hex, 'hex')))).rejects.toBeInstanceOf(EventStreamFormatError);
  });

  it('decodes messages split at every byte and several in one chunk', async () => {
    const all = Buffer.concat(vectors.valid.map((v) => Buffer.from(v.hex, 'hex')));
    const bytes = [...all].map((b) => Uint8Array.of(b));
    const oneByOne = await decodeAll(chunks(...bytes));
    const together = await decodeAll(chunks(all));
    expect(oneByOne.map((m) => m.payload.toString())).toEqual(vectors.valid.map((v) => v.payload));
    expect(together.map((m) => m.headers)).toEqual(vectors.valid.map((v) => v.headers));
  });

  it('rejects a stream that ends inside a message', async () => {
    const one = Buffer.from(vectors.valid[0].hex, 'hex');
    await expect(decodeAll(chunks(one.subarray(0, one.length - 3)))).rejects.toThrow(/ended inside a message/);
  });

  it('rejects an absurd length before buffering it', async () => {
    const prelude = Buffer.alloc(12);
    prelude.writeUInt32BE(0x7fffffff, 0);
    prelude.writeUInt32BE(0, 4);
    prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
    await expect(decodeAll(chunks(prelude))).rejects.toThrow(/invalid message length/);
  });
});
