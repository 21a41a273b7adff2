// Test support: AWS event-stream messages as Bedrock sends them.
import { crc32 } from 'node:zlib';

/** One AWS event-stream message with string headers, encoded by the spec: prelude, prelude CRC, headers, payload, message CRC. */
export function encodeMessage(headers: Record<string, string>, payload: Buffer): Buffer {
  const encodedHeaders = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const n = Buffer.from(name);
      const v = Buffer.from(value);
      const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
      h.writeUInt8(n.length, 0);
      n.copy(h, 1);
      h.writeUInt8(7, 1 + n.length);
      h.writeUInt16BE(v.length, 2 + n.length);
      v.copy(h, 4 + n.length);
      return h;
    }),
  );
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(12 + encodedHeaders.length + payload.length + 4, 0);
  prelude.writeUInt32BE(encodedHeaders.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const body = Buffer.concat([prelude, encodedHeaders, payload]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body), 0);
  return Buffer.concat([body, crc]);
}

