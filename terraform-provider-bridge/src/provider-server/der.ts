/** A minimal ASN.1 DER encoder: just what an X.509 certificate needs. */

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(content.length), content]);
}

export const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
export const octetString = (content: Buffer) => tlv(0x04, content);
export const utf8String = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
export const boolean = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
/** Context-specific constructed tag `[n] EXPLICIT`. */
export const explicit = (n: number, content: Buffer) => tlv(0xa0 | n, content);
/** Context-specific primitive tag `[n] IMPLICIT`. */
export const implicit = (n: number, content: Buffer) => tlv(0x80 | n, content);

/** A non-negative INTEGER from big-endian bytes (a leading zero keeps it positive). */
export function integer(bytes: Buffer | number): Buffer {
  let b = typeof bytes === 'number' ? Buffer.from([bytes]) : bytes;
  while (b.length > 1 && b[0] === 0 && b[1] < 0x80) b = b.subarray(1);
  if (b[0] >= 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(0x02, b);
}

export function bitString(content: Buffer, unusedBits = 0): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), content]));
}

export function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime before 2050, GeneralizedTime from then on, as RFC 5280 requires. */
export function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}
